package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestReloadWithMonitorPagesOpen: reloading a behavior whose general
// script sends, in a loop, while monitor pages are open and read, never
// stalls the process: every reload and every GET /behaviors returns, the
// other behavior keeps answering, and SIGTERM still ends seat. (Issue 20:
// a lock-order inversion between the manager and the monitor froze all of
// it at about the hundredth reload.)
func TestReloadWithMonitorPagesOpen(t *testing.T) {
	dir := t.TempDir()
	aPort, bPort, ctl := freePortNumber(t), freePortNumber(t), freePort(t)
	write := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	a := write("a.seatml", `<seatml><general name="a"><adaptor name="chat" type="socket" role="server" port="`+aPort+`"/>
<script>seat.send("chat", "loaded"); print("loaded")</script></general>
<state name="s"><onentry><message sendto="chat">entered</message></onentry><rule><key>ping</key><message sendto="chat">pong</message></rule></state></seatml>`)
	b := write("b.seatml", `<seatml><general name="b"><adaptor name="chat" type="socket" role="server" port="`+bPort+`"/></general>
<state name="s"><rule><key>ping</key><message sendto="chat">pong</message></rule></state></seatml>`)
	cmd, stderr := startSeat(t, "run", "--log-level", "warn", "--control", ctl, a, b)
	t.Cleanup(func() { // before startSeat's SIGTERM, which a frozen seat ignores
		if t.Failed() {
			cmd.Process.Kill()
		}
	})
	client := &http.Client{Timeout: 10 * time.Second}
	waitFor(t, func() bool {
		resp, err := client.Get("http://" + ctl + "/behaviors")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})

	// Monitor pages that read everything they are sent.
	const pages = 30
	var wg sync.WaitGroup
	var conns []*websocket.Conn
	for range pages {
		ws, _, err := websocket.DefaultDialer.Dial("ws://"+ctl+"/monitor/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, ws)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	}()

	// b's client, talking throughout.
	bc, err := net.Dial("tcp", "127.0.0.1:"+bPort)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	br := bufio.NewReader(bc)

	stop := make(chan struct{})
	errs := make(chan error, 3)
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { // the status a console polls
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := client.Get("http://" + ctl + "/behaviors")
			if err != nil {
				errs <- fmt.Errorf("GET /behaviors: %v", err)
				return
			}
			resp.Body.Close()
		}
	}()
	go func() { // b answers
		defer bg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			bc.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := bc.Write([]byte("ping\n")); err != nil {
				errs <- fmt.Errorf("b, ping %d: %v", i, err)
				return
			}
			if line, err := br.ReadString('\n'); err != nil || line != "pong\n" {
				errs <- fmt.Errorf("b, ping %d: %q, %v", i, line, err)
				return
			}
		}
	}()
	// Reload for 4 s: the monitor's status tick (every 500 ms) must meet
	// reloads many times.
	reloads, failed := 0, 0
	for i, end := 0, time.Now().Add(4*time.Second); time.Now().Before(end); i++ {
		resp, err := client.Post("http://"+ctl+"/behaviors/a/reload", "application/json", nil)
		if err != nil {
			close(stop)
			t.Fatalf("reload %d did not return: %v\n%s", i, err, stderr)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		reloads++
		if resp.StatusCode != 200 {
			// What this test proves is that every call returns. A reload
			// that fails is reported, not hidden: under a loaded full
			// suite one reload once answered 500 (issue 21's reload
			// work is to make a reload all or nothing).
			failed++
			t.Logf("reload %d: %s: %s", i, resp.Status, body)
		}
	}
	if failed*10 > reloads {
		t.Errorf("%d of %d reloads failed", failed, reloads)
	}
	close(stop)
	bg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}

	// SIGTERM still ends it.
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("SIGTERM did not end seat\n%s", stderr)
	}
}

// TestSessionOfAReusedSourcePortIsNew: a peer that resets its connection
// and connects again at once from the same address and port gets a new
// session (fresh Lua globals and state), and the old connection's late
// disconnect does not end it. (Issue 20: sessions were keyed by the
// "ip:port" text.)
func TestSessionOfAReusedSourcePortIsNew(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "s.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="s"><adaptor name="chat" type="socket" role="server" port="`+port+`" session="peer"/></general>
<state name="fresh">
  <rule><key>remember</key><script>secret = "old"</script><message sendto="chat">remembered</message><statetransition>told</statetransition></rule>
  <rule><key>what</key><script sendto="chat">return "fresh " .. tostring(secret)</script></rule>
</state>
<state name="told"><rule><key>what</key><script sendto="chat">return "told " .. tostring(secret)</script></rule></state>
</seatml>`), 0o644)
	startSeat(t, "run", "--log-level", "warn", f)
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: mustAtoi(t, freePortNumber(t))}
	d := net.Dialer{LocalAddr: local, Timeout: 5 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1) })
	}}
	dial := func() (*net.TCPConn, *bufio.Reader) {
		var c net.Conn
		waitFor(t, func() bool {
			var err error
			c, err = d.Dial("tcp", "127.0.0.1:"+port)
			return err == nil
		})
		c.SetDeadline(time.Now().Add(10 * time.Second))
		return c.(*net.TCPConn), bufio.NewReader(c)
	}
	ask := func(c net.Conn, r *bufio.Reader, line, want string) {
		t.Helper()
		if _, err := c.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil || got != want+"\n" {
			t.Fatalf("%s: got %q, %v; want %q", line, got, err, want)
		}
	}
	c, r := dial()
	for i := range 5 {
		ask(c, r, "remember", "remembered")
		c.SetLinger(0) // close with RST
		c.Close()
		c, r = dial()
		if got := c.LocalAddr().String(); got != local.String() {
			t.Fatalf("round %d: connected from %s, not %s", i, got, local)
		}
		ask(c, r, "what", "fresh nil")
		ask(c, r, "remember", "remembered")
		ask(c, r, "what", "told old")
		c.SetLinger(0)
		c.Close()
		c, r = dial()
		ask(c, r, "what", "fresh nil")
	}
	c.Close()
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOneShotClient: a client that sends its line and half-closes (printf
// 'hi\n' | nc -q1) gets its reply, from a plain behavior and from a
// session, and seat closes the connection once the reply is written;
// ondisconnect runs then, after the reply. (Issue 21: the end of input was
// taken for the peer gone, and the reply was dropped as "not connected".)
func TestOneShotClient(t *testing.T) {
	for _, session := range []string{"", ` session="peer"`} {
		dir := t.TempDir()
		port := freePortNumber(t)
		f := filepath.Join(dir, "oneshot.seatml")
		os.WriteFile(f, []byte(`<seatml><general name="oneshot">
  <adaptor name="v" type="socket" role="server" port="`+port+`"`+session+`/>
  <ondisconnect source="v"><script>seat.log("info", "gone " .. event.peer)</script></ondisconnect>
</general>
<state name="s"><rule><key>こんにちは</key><script>seat.reply("はい、" .. event.peer)</script></rule></state></seatml>`), 0o644)
		_, log := startSeat(t, "run", f)
		c := dialSeat(t, port)
		c.Write([]byte("こんにちは\n"))
		c.(*net.TCPConn).CloseWrite() // end of input; still reading
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		if want := "はい、" + c.LocalAddr().String() + "\n"; string(got) != want || err != nil {
			t.Fatalf("session %q: got %q (%v), want %q\n%s", session, got, err, want, log.String())
		}
		// Issue 33: it lingered a second of quiet after the reply.
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("the connection stayed open %v after the reply", d)
		}
		waitFor(t, func() bool { return strings.Contains(log.String(), "gone "+c.LocalAddr().String()) })
	}
}

// TestOneShotClientBehindABusyBehavior: the one-shot client's line waits
// behind another client's 0.4 s script, which has begun (its log line is
// out) before the client connects; seat keeps the connection open until
// the line is handled and the reply written, and only then closes. A
// close at the end of input alone would leave the client no reply.
func TestOneShotClientBehindABusyBehavior(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "busy.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="busy">
  <adaptor name="v" type="socket" role="server" port="`+port+`"/>
</general>
<state name="s">
  <rule><key>slow</key><script>seat.log("info", "長い処理を始めます") local t = seat.now() while seat.now() - t &lt; 0.4 do end seat.reply("done")</script></rule>
  <rule><key>こんにちは</key><script>seat.reply("はい")</script></rule>
</state></seatml>`), 0o644)
	_, log := startSeat(t, "run", f)
	busy := dialSeat(t, port)
	busy.Write([]byte("slow\n"))
	waitFor(t, func() bool { return strings.Contains(log.String(), "長い処理を始めます") })
	c := dialSeat(t, port)
	c.Write([]byte("こんにちは\n"))
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := io.ReadAll(c); string(got) != "はい\n" || err != nil {
		t.Fatalf("got %q (%v), want はい\n%s", got, err, log.String())
	}
}

// TestOnDisconnectComesAtOnce: a client that reads its greeting and
// closes has left; the general ondisconnect runs at once, not after a
// second of quiet (issue 33: the one-second linger for half-closed
// clients held every departure). Another client hears the departure;
// five rounds, each within 500 ms of the close (the figure is logged).
func TestOnDisconnectComesAtOnce(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "door.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="door">
  <adaptor name="v" type="socket" role="server" port="`+port+`"/>
  <onconnect source="v"><script>seat.reply("いらっしゃいませ")</script></onconnect>
  <ondisconnect source="v"><message sendto="v">ありがとうございました</message><statetransition>待機</statetransition></ondisconnect>
</general>
<state name="待機"><rule><key>入店</key><statetransition>接客中</statetransition></rule></state>
<state name="接客中"/></seatml>`), 0o644)
	_, log := startSeat(t, "run", f)
	watcher := dialSeat(t, port)
	wr := bufio.NewReader(watcher)
	readLine := func(r *bufio.Reader, c net.Conn) string {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v (got %q)\n%s", err, line, log.String())
		}
		return strings.TrimSpace(line)
	}
	if got := readLine(wr, watcher); got != "いらっしゃいませ" {
		t.Fatalf("watcher's greeting %q", got)
	}
	var took []time.Duration
	for round := 0; round < 5; round++ {
		c := dialSeat(t, port)
		cr := bufio.NewReader(c)
		if got := readLine(cr, c); got != "いらっしゃいませ" {
			t.Fatalf("round %d: greeting %q", round, got)
		}
		c.Write([]byte("入店\n"))
		c.Close()
		closed := time.Now()
		if got := readLine(wr, watcher); got != "ありがとうございました" {
			t.Fatalf("round %d: the watcher heard %q", round, got)
		}
		took = append(took, time.Since(closed))
	}
	slices.Sort(took)
	t.Logf("ondisconnect after the close: median %v, max %v", took[len(took)/2], took[len(took)-1])
	if took[len(took)-1] > 500*time.Millisecond {
		t.Errorf("ondisconnect came %v after the close (rounds %v)", took[len(took)-1], took)
	}
}

// TestStdinEndsOnlyItsInput: in a behavior with other adaptors, the end of
// standard input (a service started with </dev/null, Ctrl-D at a console)
// ends that input only: the socket peers are still answered, and lines
// sent to stdio later, from a rule or a timeout, still reach standard
// output.
func TestStdinEndsOnlyItsInput(t *testing.T) {
	dir := t.TempDir()
	port := freePortNumber(t)
	f := filepath.Join(dir, "console.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="console">
  <adaptor name="term" type="stdio"/>
  <adaptor name="v" type="socket" role="server" port="`+port+`"/>
</general>
<state name="待機">
  <rule source="term"><key>起動</key><message sendto="term">起動しました</message></rule>
  <rule source="v"><key>こんにちは</key><message sendto="v">はい</message><message sendto="term">来客あり</message><statetransition>応対</statetransition></rule>
</state>
<state name="応対">
  <ontimeout timeout="0.3"><message sendto="term">応対終了</message><statetransition>待機</statetransition></ontimeout>
</state></seatml>`), 0o644)
	cmd := exec.Command(os.Args[0], "run", f)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	stdin.Write([]byte("起動\n"))
	stdin.Close()
	waitFor(t, func() bool {
		return strings.Contains(stdout.String(), "起動しました\n") && strings.Contains(stderr.String(), "standard input ended")
	})
	c := dialSeat(t, port)
	c.Write([]byte("こんにちは\n"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); line != "はい\n" {
		t.Fatalf("socket peer got %q (%v) after standard input ended\n%s", line, err, stderr.String())
	}
	waitFor(t, func() bool { return strings.Contains(stdout.String(), "来客あり\n応対終了\n") })
	select {
	case err := <-exited:
		t.Fatalf("seat ended: %v\n%s", err, stderr.String())
	default:
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Errorf("after SIGTERM: %v\n%s", err, stderr.String())
	}
}

// TestClientRoleServerHalfCloses: a server that sends its line and
// half-closes gets the reply of a socket adaptor in client role, though the
// reply comes later, from a timeout.
func TestClientRoleServerHalfCloses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	f := filepath.Join(t.TempDir(), "client.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="client">
  <adaptor name="asr" type="socket" role="client" port="`+port+`"/>
</general>
<state name="s"><rule><key>こんにちは</key><statetransition>考え中</statetransition></rule></state>
<state name="考え中"><ontimeout timeout="0.3"><message sendto="asr">はい</message><statetransition>s</statetransition></ontimeout></state></seatml>`), 0o644)
	_, log := startSeat(t, "run", f)
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("こんにちは\n"))
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); line != "はい\n" {
		t.Fatalf("the server got %q (%v)\n%s", line, err, log.String())
	}
}

// TestPortInUseSaidOnce: seat run on a port in use says so once, whole,
// with the file's position and the --set that moves it, and exits 1.
func TestPortInUseSaidOnce(t *testing.T) {
	port := busyPort(t)
	f := filepath.Join(t.TempDir(), "chat.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="chat">
  <adaptor name="chat" type="socket" role="server" port="`+port+`"/>
</general><state name="s"/></seatml>`), 0o644)
	stderr, code := runBinary(t, "", "run", f)
	want := f + `:2:3: adaptor "chat": 127.0.0.1:` + port + ` is already in use (another seat, or another program, listens there); free it, or choose another port with --set chat.port=PORT (0 picks a free one)`
	if code != 1 || strings.Count(stderr, "already in use") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, want 1 and once:\n%s\nstderr:\n%s", code, want, stderr)
	}
}

// TestRunTimeErrorNamesTheNil: a script's run-time error on the real
// binary names the variable that is nil, with its line.
func TestRunTimeErrorNamesTheNil(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bye.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="bye"><adaptor name="term" type="stdio"/></general>
<state name="s">
<rule><key>さようなら</key><script sendto="term">return "bye " .. visitorname</script></rule>
</state></seatml>`), 0o644)
	stderr, code := runBinary(t, "さようなら\n", "run", f)
	if want := f + ":3: visitorname is nil (a global not defined when this ran; check its spelling), in `..`"; code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d; stderr lacks %q:\n%s", code, want, stderr)
	}
}

// TestRunTimeErrorNilGlobalWasSetToNil: on the real binary, a global a
// regex capture left nil is said to be set to nil, where; before, the
// message called it "a global not defined when this ran; check its
// spelling", which sent the reader looking for a typo.
func TestRunTimeErrorNilGlobalWasSetToNil(t *testing.T) {
	f := filepath.Join(t.TempDir(), "受付.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="受付"><adaptor name="term" type="stdio"/></general>
<state name="s">
<rule><key>(.*)さんに会いに</key><script>guest = string.match(event.text, "(%d+)番")
seat.reply(guest .. "様")</script></rule>
</state></seatml>`), 0o644)
	stderr, code := runBinary(t, "山田さんに会いに来ました\n", "run", f)
	if want := f + ":4: guest is nil (a global set to nil at " + f + ":3), in `..`"; code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d; stderr lacks %q:\n%s", code, want, stderr)
	}
}

// TestSelfReferencingTableIsRefused: a script that stores a table
// containing itself gets an error naming its line, and the behavior goes
// on (real binary): before, converting it recursed until the whole
// process died of a stack overflow.
func TestSelfReferencingTableIsRefused(t *testing.T) {
	f := filepath.Join(t.TempDir(), "loop.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="loop"><adaptor name="term" type="stdio"/></general>
<state name="待機">
<rule><key>記憶</key><script sendto="term">local t = {["名前"] = "輪"} t["自分"] = t seat.set("輪", t) return "stored"</script></rule>
<rule><key>共有</key><script sendto="term">
local t = {1}
for i = 1, 40 do t = {t, t} end
seat.set("共有", t)
return "stored"</script></rule>
<rule><key>こんにちは</key><message sendto="term">こんにちは！</message></rule>
</state></seatml>`), 0o644)
	stdout, stderr, code := runBinaryIO(t, "記憶\n共有\nこんにちは\n", "run", f)
	for _, want := range []string{
		f + ":3: seat.set: the value is a table that contains itself",
		f + ":7: seat.set: the value has more than 100000 values in all",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code != 0 || stdout != "こんにちは！\n" {
		t.Errorf("exit %d, stdout %q; want 0 and only the greeting\n%s", code, stdout, stderr)
	}
}

// TestSetErrorsNameTheFlag: a bad --set value is reported against the
// flag, saying what the file has, not at the file's line as if the file
// were wrong (real binary).
func TestSetErrorsNameTheFlag(t *testing.T) {
	f := filepath.Join(t.TempDir(), "chat.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="chat">
  <adaptor name="chat" type="socket" role="server" port="5000"/>
</general><state name="待機"/></seatml>`), 0o644)
	stderr, code := runBinary(t, "", "run", "--set", "chat.port=abc", f)
	want := `--set chat.port=abc (` + f + `:2:58 has "5000"): attribute "port" of <adaptor>: "abc" is not a port number (0 to 65535)`
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, want 1 and\n%s\nstderr:\n%s", code, want, stderr)
	}
}

// TestSpeechResultFields: a recogniser's "3,0.91" over a real socket: the
// script reads the number and the confidence as fields, and a pattern
// group's match as event.captures.
func TestSpeechResultFields(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "asr.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="asr"><adaptor name="asr" type="socket" role="server" port="`+port+`"/></general>
<state name="注文">
<rule><key>(\d+)個</key><script>seat.reply(event.captures[1] * 100 .. "円 (" .. event.confidence .. ")")</script></rule>
<rule><key>\d+$</key><script>seat.reply(tonumber(event.lookup) + 1 .. " " .. event.confidence)</script></rule>
</state></seatml>`), 0o644)
	_, log := startSeat(t, "run", f)
	c := dialSeat(t, port)
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	for _, tc := range [][2]string{{"3個,0.91", "300円 (0.91)"}, {"3,0.5", "4 0.5"}} {
		c.Write([]byte(tc[0] + "\n"))
		if line, err := r.ReadString('\n'); line != tc[1]+"\n" {
			t.Errorf("%q: got %q (%v), want %q\n%s", tc[0], line, err, tc[1], log.String())
		}
	}
}

// TestAppendedTextOnTheBinary: a Japanese log widget appended to 4,000
// times by a script counting on eSEAT's self stays bounded, and a page
// opened afterwards is shown exactly what the behavior keeps (real binary,
// real socket and WebSocket).
func TestAppendedTextOnTheBinary(t *testing.T) {
	port, webPort := freePortNumber(t), freePortNumber(t)
	f := filepath.Join(t.TempDir(), "log.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="記録係">
  <adaptor name="chat" type="socket" role="server" port="`+port+`"/>
  <adaptor name="panel" type="web" port="`+webPort+`"/>
  <script>self.n = 0</script>
</general>
<state name="受付"><text id="記録"></text>
<rule source="chat"><key>add</key><script>self.n = self.n + 1; seat.append_text("受付:記録", "受付の記録 " .. self.n .. "\n")</script></rule>
<rule source="chat"><key>count</key><script>seat.reply(#seat.get_text("受付:記録") .. " " .. self.n)</script></rule>
</state></seatml>`), 0o644)
	_, log := startSeat(t, "run", f)
	c := dialSeat(t, port)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	c.Write([]byte(strings.Repeat("add\n", 4000) + "count\n"))
	line, err := bufio.NewReader(c).ReadString('\n')
	var size, n int
	if _, serr := fmt.Sscanf(line, "%d %d", &size, &n); serr != nil || n != 4000 || size > 64<<10 || size < 32<<10 {
		t.Fatalf("count: %q (%v): want the kept size within 32..64 KiB and 4000 appends\n%s", line, err, log.String())
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws://127.0.0.1:"+webPort+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var fr struct{ Type, ID, Op, Value string }
		if err := ws.ReadJSON(&fr); err != nil {
			t.Fatalf("no widget value on the page: %v", err)
		}
		if fr.Type == "gui" && fr.ID == "受付:記録" {
			if len(fr.Value) != size || !strings.HasPrefix(fr.Value, "受付の記録 ") || !strings.HasSuffix(fr.Value, "受付の記録 4000\n") {
				t.Errorf("the page shows %d bytes (%q … %q), the behavior keeps %d", len(fr.Value), fr.Value[:min(30, len(fr.Value))], fr.Value[max(0, len(fr.Value)-30):], size)
			}
			return
		}
	}
}
