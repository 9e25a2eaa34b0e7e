package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// matrixBehavior sends every origin's output to all four adaptor kinds at
// once, stamped with seat.now(): a socket server, a socket client, a
// WebSocket and standard output. Keys, states and texts are partly
// Japanese, as eSEAT's users write them.
const matrixBehavior = `<?xml version="1.0" encoding="UTF-8"?>
<seatml>
  <general name="matrix" rate="20" scripts="{scripts}">
    <adaptor name="srv" type="socket" role="server" port="{srv}"/>
    <adaptor name="cli" type="socket" role="client" port="{cli}"/>
    <adaptor name="web" type="web" port="{web}"/>
    <adaptor name="con" type="stdio"/>
    <script><![CDATA[
      function all(origin)
        local text = string.format("%s|%.6f", origin, seat.now())
        for _, a in ipairs({"srv", "cli", "web", "con"}) do seat.send(a, text) end
      end
      function onInput_onStop() all("停止") end
    ]]></script>
    <onconnect source="srv"><script>all("connect-socket")</script></onconnect>
    <ondisconnect source="srv"><script>all("disconnect-socket")</script></ondisconnect>
    <onconnect source="web"><script>all("connect-web")</script></onconnect>
    <ondisconnect source="web"><script>all("disconnect-web")</script></ondisconnect>
    <rule source="memory"><key>matrix/flag</key><script>all("memory")</script></rule>
    <rule source="motion"><key>done:うなずき$</key><script>all("motion")</script></rule>
  </general>
  <state name="待機">
    <rule source="srv"><key>こんにちは</key><script>all("socket")</script></rule>
    <rule source="web"><key>ウェブ</key><script>all("web")</script></rule>
    <rule source="con"><key>標準入力</key><script>all("stdio")</script></rule>
    <rule source="srv"><key>ask-peer</key><message sendto="srv">ping-peer</message></rule>
    <rule source="srv"><key>from-peer$</key><script>all("peer")</script></rule>
    <rule source="srv"><key>timer</key><statetransition>タイマー</statetransition></rule>
    <rule source="srv"><key>exec</key><statetransition>exec</statetransition></rule>
    <rule source="srv"><key>memory</key><script>seat.set("matrix/flag", 1)</script></rule>
    <rule source="srv"><key>motion</key><motion name="うなずき" script="Nod"/></rule>
  </state>
  <state name="タイマー">
    <ontimeout timeout="0.2"><script>all("ontimeout")</script><statetransition>after</statetransition></ontimeout>
    <onexit><script>all("onexit")</script></onexit>
  </state>
  <state name="after">
    <onentry><script>all("onentry")</script><statetransition>待機</statetransition></onentry>
  </state>
  <state name="exec">
    <onexec><script>all("onexec")</script><statetransition>待機</statetransition></onexec>
  </state>
</seatml>
`

// peerBehavior is another behavior of the same process, a client of the
// matrix's server: it answers ping-peer by sending from-peer.
const peerBehavior = `<?xml version="1.0" encoding="UTF-8"?>
<seatml>
  <general name="peer"><adaptor name="link" type="socket" role="client" port="{srv}"/></general>
  <state name="s"><rule source="link"><key>ping-peer</key><message sendto="link">from-peer</message></rule></state>
</seatml>
`

// deliveryLimit is how soon after its action a message must reach every
// adaptor, with no further input.
const deliveryLimit = 50 * time.Millisecond

// arrivals records, per origin and adaptor kind, when a message arrived and
// the seat.now() stamp it carries.
type arrivals struct {
	mu   sync.Mutex
	seen map[string]map[string]time.Duration // origin -> kind -> arrival - stamp
	bad  []string
}

func (a *arrivals) add(kind, text string) {
	at := time.Now()
	origin, stamp, ok := strings.Cut(text, "|")
	if !ok {
		return // not a matrix message (ping-peer, say)
	}
	secs, err := strconv.ParseFloat(stamp, 64)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.bad = append(a.bad, fmt.Sprintf("%s: %q", kind, text))
		return
	}
	if a.seen[origin] == nil {
		a.seen[origin] = map[string]time.Duration{}
	}
	a.seen[origin][kind] = at.Sub(time.Unix(0, int64(secs*1e9)))
}

// reset forgets what arrived for origin (connections made while the test
// set up fired the connect origins already).
func (a *arrivals) reset(origin string) {
	a.mu.Lock()
	delete(a.seen, origin)
	a.mu.Unlock()
}

func (a *arrivals) of(origin string) map[string]time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]time.Duration{}
	for k, v := range a.seen[origin] {
		out[k] = v
	}
	return out
}

// TestDeliveryMatrix runs seat as its own process and checks, over real
// connections on 127.0.0.1, that output from every origin reaches every
// adaptor kind within deliveryLimit of the action, without any further
// input (issue 11: output of timers waited in socket adaptors for the next
// incoming line). Origins: a socket event, a web event, standard input,
// ontimeout, onexec, the onexit and onentry of a timer's transition, a
// memory event, a motion event, a message from another behavior, a peer
// connecting to and leaving a socket server and a WebSocket (onconnect,
// ondisconnect), and a lifecycle callback (onInput_onStop) run through the
// control API.
func TestDeliveryMatrix(t *testing.T) {
	dir := t.TempDir()
	port := func() string { _, p, _ := net.SplitHostPort(freePort(t)); return p }
	cliLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer cliLn.Close()
	_, cliPort, _ := net.SplitHostPort(cliLn.Addr().String())
	srv, web, ctl := port(), port(), port()
	scripts, _ := filepath.Abs("../../examples/scripts")
	fill := strings.NewReplacer("{srv}", srv, "{cli}", cliPort, "{web}", web, "{scripts}", scripts)
	matrix, peer := filepath.Join(dir, "matrix.seatml"), filepath.Join(dir, "peer.seatml")
	os.WriteFile(matrix, []byte(fill.Replace(matrixBehavior)), 0o644)
	os.WriteFile(peer, []byte(fill.Replace(peerBehavior)), 0o644)

	cmd := exec.Command(os.Args[0], "run", "--control", ctl, matrix, peer)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	got := &arrivals{seen: map[string]map[string]time.Duration{}}
	var readers sync.WaitGroup
	readLines := func(kind string, r *bufio.Reader) {
		defer readers.Done()
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			got.add(kind, strings.TrimSuffix(line, "\n"))
		}
	}
	readers.Add(1)
	go readLines("stdio", bufio.NewReader(stdout))

	// The socket client adaptor connects to us.
	cliLn.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	cliConn, err := cliLn.Accept()
	if err != nil {
		t.Fatalf("the socket client adaptor did not connect: %v\n%s", err, stderr.String())
	}
	defer cliConn.Close()
	readers.Add(1)
	go readLines("socket client", bufio.NewReader(cliConn))

	// We connect to the socket server and the WebSocket.
	var srvConn net.Conn
	waitFor(t, func() bool { srvConn, err = net.Dial("tcp", "127.0.0.1:"+srv); return err == nil })
	defer srvConn.Close()
	readers.Add(1)
	go readLines("socket server", bufio.NewReader(srvConn))
	var ws *websocket.Conn
	waitFor(t, func() bool {
		ws, _, err = websocket.DefaultDialer.Dial("ws://127.0.0.1:"+web+"/ws", nil)
		return err == nil
	})
	defer ws.Close()
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			var f struct{ Type, Text string }
			if err := ws.ReadJSON(&f); err != nil {
				return
			}
			if f.Type == "message" {
				got.add("websocket", f.Text)
			}
		}
	}()
	// The peer behavior is connected to the server too: two clients; and
	// the web adaptor counts the WebSocket (the handshake ends before it
	// is registered for messages: under load the first one missed it).
	waitFor(t, func() bool {
		resp, err := http.Get("http://127.0.0.1:" + ctl + "/behaviors/matrix")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var info struct {
			Adaptors []struct {
				Name string
				Open int64
			}
		}
		json.NewDecoder(resp.Body).Decode(&info)
		open := map[string]int64{}
		for _, a := range info.Adaptors {
			open[a.Name] = a.Open
		}
		return open["srv"] == 2 && open["web"] == 1
	})

	kinds := []string{"socket server", "socket client", "websocket", "stdio"}
	expect := func(origin string, trigger func()) {
		t.Helper()
		if trigger != nil { // nil: the origin came with the previous one
			got.reset(origin)
			trigger()
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			seen := got.of(origin)
			if len(seen) == len(kinds) {
				for _, k := range kinds {
					if d := seen[k]; d > deliveryLimit {
						t.Errorf("%s: reached the %s %v after its action (limit %v)", origin, k, d.Round(time.Millisecond), deliveryLimit)
					}
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: reached only %v\nstderr:\n%s", origin, seen, stderr.String())
			}
			time.Sleep(time.Millisecond)
		}
	}
	send := func(line string) func() {
		return func() { fmt.Fprintf(srvConn, "%s\n", line) }
	}
	expect("socket", send("こんにちは"))
	expect("web", func() { ws.WriteJSON(map[string]string{"type": "event", "text": "ウェブ"}) })
	expect("stdio", func() { fmt.Fprintln(stdin, "標準入力") })
	expect("ontimeout", send("timer")) // 0.2 s later, with no input
	expect("onexit", nil)
	expect("onentry", nil)
	expect("onexec", send("exec")) // at the next tick of rate 20
	expect("memory", send("memory"))
	expect("motion", send("motion")) // when Nod is done
	expect("peer", send("ask-peer"))
	var visitor net.Conn
	expect("connect-socket", func() {
		if visitor, err = net.Dial("tcp", "127.0.0.1:"+srv); err != nil {
			t.Fatal(err)
		}
	})
	expect("disconnect-socket", func() { visitor.Close() })
	var page *websocket.Conn
	expect("connect-web", func() {
		if page, _, err = websocket.DefaultDialer.Dial("ws://127.0.0.1:"+web+"/ws", nil); err != nil {
			t.Fatal(err)
		}
		go func() { // read, so that the page is a live client
			for {
				if _, _, err := page.ReadMessage(); err != nil {
					return
				}
			}
		}()
	})
	expect("disconnect-web", func() { page.Close() })
	expect("停止", func() { // the lifecycle through the control API
		resp, err := http.Post("http://127.0.0.1:"+ctl+"/behaviors/matrix/stop", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	got.mu.Lock()
	if len(got.bad) > 0 {
		t.Errorf("unreadable messages: %q", got.bad)
	}
	got.mu.Unlock()
}
