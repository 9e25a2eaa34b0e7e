package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/web"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const panelDoc = `<?xml version="1.0"?>
<seatml>
<general name="panel">
  <adaptor name="web" type="web" port="0" %s/>
</general>
<state name="idle">
  <label text="Hello" color="navy"/>
  <brk/>
  <button label="Start"><statetransition>talking</statetransition></button>
  <rule source="web"><key>ping</key><script>seat.reply("pong")</script></rule>
  <rule source="web"><key>all</key><message sendto="web">to everyone</message></rule>
</state>
<state name="talking">
  <input id="say">initial</input>
  <text id="log"/>
  <input id="echo"><script>seat.append_text("talking:log", event.text .. "\n")</script></input>
  <button label="Stop"><statetransition>idle</statetransition></button>
</state>
</seatml>
`

type server struct {
	t    *testing.T
	m    *interpreter.Machine
	addr string
	logs *observer.ObservedLogs
	stop func()
}

func startServer(t *testing.T, src string, opts ...func(*interpreter.Options)) *server {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "panel.seatml")
	os.WriteFile(path, []byte(src), 0o644)
	prog, diags := seatml.Load(path, seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	o := interpreter.Options{Log: zap.New(core)}
	for _, f := range opts {
		f(&o)
	}
	m, err := interpreter.New(prog, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case <-m.Ready():
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	s := &server{t: t, m: m, logs: logs, addr: m.Adaptor("web").(adaptors.Addresser).Addr()}
	s.stop = func() { cancel(); <-done }
	t.Cleanup(s.stop)
	return s
}

func (s *server) url(p string) string { return "http://" + s.addr + p }

type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func (s *server) dial(header http.Header) (*wsClient, *http.Response, error) {
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	ws, resp, err := d.Dial("ws://"+s.addr+"/ws", header)
	if err != nil {
		return nil, resp, err
	}
	s.t.Cleanup(func() { ws.Close() })
	ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	return &wsClient{t: s.t, ws: ws}, resp, nil
}

func (c *wsClient) next() map[string]any {
	c.t.Helper()
	_, data, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		c.t.Fatalf("frame %s: %v", data, err)
	}
	return f
}

// summary shortens a frame for comparison.
func summary(f map[string]any) string {
	switch f["type"] {
	case "state":
		return "state " + f["name"].(string)
	case "panel":
		var kinds []string
		for _, w := range f["widgets"].([]any) {
			kinds = append(kinds, w.(map[string]any)["kind"].(string))
		}
		return "panel " + f["state"].(string) + " " + strings.Join(kinds, ",")
	case "gui":
		v, _ := f["value"].(string)
		return fmt.Sprintf("gui %s %s %q", f["id"], f["op"], v)
	case "message":
		return fmt.Sprintf("message %s %q", f["adaptor"], f["text"])
	}
	b, _ := json.Marshal(f)
	return string(b)
}

func (c *wsClient) expect(want ...string) {
	c.t.Helper()
	for _, w := range want {
		if got := summary(c.next()); got != w {
			c.t.Fatalf("frame %q, want %q", got, w)
		}
	}
}

func (c *wsClient) sendJSON(v string) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(v)); err != nil {
		c.t.Fatal(err)
	}
}

func TestProtocolBothWays(t *testing.T) {
	s := startServer(t, fmt.Sprintf(panelDoc, ""))
	a, _, err := s.dial(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := s.dial(nil)
	if err != nil {
		t.Fatal(err)
	}
	a.expect("state idle", "panel idle label,brk,button")
	b.expect("state idle", "panel idle label,brk,button")
	// An event from this adaptor; seat.reply answers its sender only.
	a.sendJSON(`{"type":"event","text":"ping"}`)
	a.expect(`message web "pong"`)
	// A message to the adaptor goes to every client.
	b.sendJSON(`{"type":"event","source":"web","text":"all"}`)
	a.expect(`message web "to everyone"`)
	b.expect(`message web "to everyone"`)
	// A button: the panel changes for everyone, with one set per widget.
	a.sendJSON(`{"type":"event","source":"gui","id":"Start","text":"Start"}`)
	for _, c := range []*wsClient{a, b} {
		c.expect("state talking", "panel talking input,text,input,button",
			`gui talking:say set "initial"`, `gui talking:log set ""`, `gui talking:echo set ""`)
	}
	// Enter in an input: every panel gets its contents, then its actions
	// run (a text area update for everyone).
	b.sendJSON(`{"type":"event","source":"gui","id":"echo","text":"hello"}`)
	a.expect(`gui talking:echo set "hello"`, `gui talking:log append "hello\n"`)
	b.expect(`gui talking:echo set "hello"`, `gui talking:log append "hello\n"`)
	// A client connecting now sees the current state and values.
	c, _, _ := s.dial(nil)
	c.expect("state talking", "panel talking input,text,input,button",
		`gui talking:say set "initial"`, `gui talking:log set "hello\n"`, `gui talking:echo set "hello"`)
	// Invalid frames are logged and ignored; the connection stays.
	for _, bad := range []string{`not json`, `{"type":"hello"}`, `{"type":"event","source":"chat","text":"x"}`, `{"type":"event","source":"gui"}`} {
		a.sendJSON(bad)
	}
	a.sendJSON(`{"type":"event","source":"gui","id":"Stop"}`)
	a.expect("state idle", "panel idle label,brk,button")
	if n := s.logs.FilterMessage("invalid frame ignored").Len(); n != 4 {
		t.Errorf("%d invalid frames logged, want 4", n)
	}
}

func TestProcessResult(t *testing.T) {
	s := startServer(t, strings.Replace(fmt.Sprintf(panelDoc, ""), `<key>ping</key>`, `<key>ping</key><statetransition>talking</statetransition>`, 1))
	resp, err := http.Post(s.url("/rtc_processResult"), "text/plain", strings.NewReader("ping"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"result":"OK"}` {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	// Answered after handling: the transition has happened.
	var state string
	s.m.Sync(context.Background(), func() { state = s.m.State() })
	if state != "talking" {
		t.Errorf("state %q right after the response, want talking", state)
	}
	resp, err = http.Post(s.url("/rtc_processResult"), "text/plain", bytes.NewReader(make([]byte, web.MaxFrame+1)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d", resp.StatusCode)
	}
}

func TestOriginCheck(t *testing.T) {
	s := startServer(t, fmt.Sprintf(panelDoc, `allow="https://panel.local:8443,tablet.lan"`))
	for _, c := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://" + s.addr, true},
		{"https://panel.local:8443", true},
		{"http://tablet.lan:3000", true},
		{"http://evil.example", false},
		{"https://panel.local:9999", false},
		{"null", false},
	} {
		h := http.Header{}
		if c.origin != "" {
			h.Set("Origin", c.origin)
		}
		_, resp, err := s.dial(h)
		if c.ok != (err == nil) {
			code := 0
			if resp != nil {
				code = resp.StatusCode
			}
			t.Errorf("origin %q: err %v (status %d), want allowed=%v", c.origin, err, code, c.ok)
		}
	}
	req, _ := http.NewRequest("POST", s.url("/rtc_processResult"), strings.NewReader("ping"))
	req.Header.Set("Origin", "http://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin POST: %d", resp.StatusCode)
	}
	req, _ = http.NewRequest("GET", s.url("/"), nil)
	req.Host = "rebound.example"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host on a loopback listener: %d", resp.StatusCode)
	}
}

func TestOversizedFrameClosesOnlyThatConnection(t *testing.T) {
	s := startServer(t, fmt.Sprintf(panelDoc, ""))
	big, _, _ := s.dial(nil)
	small, _, _ := s.dial(nil)
	big.expect("state idle", "panel idle label,brk,button")
	small.expect("state idle", "panel idle label,brk,button")
	big.ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"event","text":"`+strings.Repeat("x", web.MaxFrame)+`"}`))
	if _, _, err := big.ws.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("the oversized frame: %v, want its connection closed with 1009 (message too big)", err)
	}
	small.sendJSON(`{"type":"event","text":"ping"}`)
	small.expect(`message web "pong"`)
}

func TestStaticFilesWithoutTraversal(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "www", "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "www", "page.html"), []byte("<p>mine</p>"), 0o644)
	os.WriteFile(filepath.Join(dir, "www", "sub", "index.html"), []byte("sub index"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(dir, "secret.txt"), filepath.Join(dir, "www", "link.txt"))
	// dir is relative to the behavior file; an absolute path works too.
	s := startServer(t, fmt.Sprintf(panelDoc, `dir="`+filepath.Join(dir, "www")+`"`))
	get := func(p string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.url("/"), nil)
		req.URL.Opaque = p // sent as written, not cleaned by the client
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		path string
		code int
		body string
	}{
		{"/page.html", 200, "<p>mine</p>"},
		{"/sub/", 200, "sub index"},
		{"/../secret.txt", 404, ""},
		{"/%2e%2e/secret.txt", 404, ""},
		{"/sub/../../secret.txt", 404, ""},
		{"/link.txt", 404, ""},
		{"/nothing", 404, ""},
		{"/_seat/app.js", 200, ""},
	} {
		code, body := get(c.path)
		if code != c.code || c.body != "" && body != c.body || strings.Contains(body, "secret") {
			t.Errorf("GET %s = %d %q, want %d", c.path, code, body, c.code)
		}
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, `<script src="/_seat/app.js">`) {
		t.Errorf("GET / = %d", code)
	}
}

func TestFiftyClientsGetEveryBroadcast(t *testing.T) {
	s := startServer(t, fmt.Sprintf(panelDoc, ""))
	const n, msgs = 50, 20
	clients := make([]*wsClient, n)
	for i := range clients {
		c, _, err := s.dial(nil)
		if err != nil {
			t.Fatal(err)
		}
		c.expect("state idle", "panel idle label,brk,button")
		clients[i] = c
	}
	for range msgs {
		clients[0].sendJSON(`{"type":"event","text":"all"}`)
	}
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range msgs {
				_, data, err := c.ws.ReadMessage()
				if err != nil || !strings.Contains(string(data), "to everyone") {
					errs <- fmt.Sprintf("client %d message %d: %s %v", i, j, data, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestSlowClientIsCutOffOthersGoOn(t *testing.T) {
	s := startServer(t, fmt.Sprintf(panelDoc, ""), func(o *interpreter.Options) {
		o.Tuning.QueueBytes = 256 << 10
		o.Tuning.StallTime = 50 * time.Millisecond
	})
	s.dial(nil) // a client that never reads
	fast, _, _ := s.dial(nil)
	fast.expect("state idle", "panel idle label,brk,button")
	payload := strings.Repeat("z", 32<<10)
	a := s.m.Adaptor("web")
	send := func(text string) { // as the behavior does: a pass's sends, then Flush
		a.Send(text)
		a.(adaptors.Flusher).Flush()
	}
	for i := 0; s.logs.FilterMessage("client is not reading; disconnected").Len() == 0; i++ {
		if i > 5000 {
			t.Fatal("the slow client was never cut off")
		}
		send(payload)
		_, data, err := fast.ws.ReadMessage()
		if err != nil || !strings.Contains(string(data), payload[:100]) {
			t.Fatalf("fast client, message %d: %v", i, err)
		}
	}
	send("after")
	fast.expect(`message web "after"`)
}

// nestedDoc is a nested behavior whose widgets are on a compound state
// (受付中, around the current state), on its children and on the states
// of a second region (見守り); two states share a button label.
const nestedDoc = `<?xml version="1.0" encoding="UTF-8"?>
<seatml>
<general name="受付">
  <adaptor name="web" type="web" port="0"/>
</general>
<parallel name="稼働">
  <state name="受付中" initial="名前">
    <button label="緊急停止" bg_color="#b42318"><message sendto="web">停止します</message><statetransition>停止中</statetransition></button>
    <button label="ヘルプ"><message sendto="web">受付のヘルプ</message></button>
    <label text="受付中です" bg_color="blue"/>
    <state name="名前">
      <input id="氏名"><statetransition>確認</statetransition></input>
    </state>
    <state name="確認">
      <label text="確認中"/>
      <button label="ヘルプ"><message sendto="web">確認のヘルプ</message></button>
    </state>
  </state>
  <state name="見守り" initial="平常">
    <state name="平常">
      <button label="呼出"><statetransition>呼出中</statetransition></button>
    </state>
    <state name="呼出中">
      <label text="係員を呼んでいます" bg_color="navy"/>
    </state>
  </state>
</parallel>
<state name="停止中">
  <label text="停止しました" bg_color="yellow"/>
</state>
</seatml>
`

// groups shortens a panel frame to its widgets by state:
// "受付中:button,button,label 名前:input".
func groups(f map[string]any) string {
	var out []string
	last := ""
	for _, w := range f["widgets"].([]any) {
		w := w.(map[string]any)
		if st := w["state"].(string); st != last {
			out = append(out, st+":")
			last = st
		} else {
			out[len(out)-1] += ","
		}
		out[len(out)-1] += w["kind"].(string)
	}
	return f["state"].(string) + " " + strings.Join(out, " ")
}

// TestNestedPanelShowsEveryActiveState: the panel of a nested behavior
// holds the widgets of every active state, grouped by state, outermost
// first: the compound state around the current one, and the states of the
// other region; it follows a move of that region alone; a widget event
// that names its state's widget (ref) runs that widget even where
// another active state has one with the same label. (The panel held the
// current state's widgets alone: a button on 受付中 never showed.)
func TestNestedPanelShowsEveryActiveState(t *testing.T) {
	s := startServer(t, nestedDoc)
	c, _, err := s.dial(nil)
	if err != nil {
		t.Fatal(err)
	}
	panel := func(want string) {
		t.Helper()
		for {
			f := c.next()
			if f["type"] != "panel" {
				continue
			}
			if got := groups(f); got != want {
				t.Fatalf("panel %q, want %q", got, want)
			}
			return
		}
	}
	panel("名前 受付中:button,button,label 名前:input 平常:button")
	// The other region moves; the current state (名前) stays.
	c.sendJSON(`{"type":"event","source":"gui","id":"呼出","ref":"平常:呼出"}`)
	panel("名前 受付中:button,button,label 名前:input 呼出中:label")
	c.sendJSON(`{"type":"event","source":"gui","id":"氏名","ref":"名前:氏名","text":"山田"}`)
	panel("確認 受付中:button,button,label 確認:label,button 呼出中:label")
	// Two active states have a ヘルプ button: ref says which was clicked;
	// without it the current state's wins.
	c.sendJSON(`{"type":"event","source":"gui","id":"ヘルプ","ref":"受付中:ヘルプ"}`)
	c.sendJSON(`{"type":"event","source":"gui","id":"ヘルプ"}`)
	var said []string
	for len(said) < 2 {
		if f := c.next(); f["type"] == "message" {
			said = append(said, f["text"].(string))
		}
	}
	if strings.Join(said, ",") != "受付のヘルプ,確認のヘルプ" {
		t.Errorf("messages %q, want 受付のヘルプ then 確認のヘルプ", said)
	}
	// The compound state's button works from any of its children.
	c.sendJSON(`{"type":"event","source":"gui","id":"緊急停止","ref":"受付中:緊急停止"}`)
	panel("停止中 停止中:label")
}

// rawConn is a WebSocket connection made by hand, to send what gorilla's
// client never would.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func (s *server) dialRaw() *rawConn {
	s.t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", s.addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		s.t.Fatalf("handshake: %v %v", resp, err)
	}
	return &rawConn{t: s.t, c: c, br: br}
}

// frame reads a server frame: its opcode and payload.
func (r *rawConn) frame() (op int, payload []byte) {
	r.t.Helper()
	h := make([]byte, 2)
	if _, err := io.ReadFull(r.br, h); err != nil {
		r.t.Fatalf("read: %v", err)
	}
	if h[1]&0x80 != 0 {
		r.t.Fatal("a server frame is masked")
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		io.ReadFull(r.br, b[:])
		n = int(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		io.ReadFull(r.br, b[:])
		n = int(binary.BigEndian.Uint64(b[:]))
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r.br, payload); err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return int(h[0] & 0x0f), payload
}

// message reads frames up to the next text frame, summarized.
func (r *rawConn) message() string {
	r.t.Helper()
	for {
		op, p := r.frame()
		if op == websocket.TextMessage {
			var f map[string]any
			if err := json.Unmarshal(p, &f); err != nil {
				r.t.Fatalf("frame %s: %v", p, err)
			}
			return summary(f)
		}
	}
}

func TestFramesInOneWriteAreAnsweredInOrder(t *testing.T) {
	s := startServer(t, fmt.Sprintf(panelDoc, ""))
	r := s.dialRaw()
	r.message() // the state
	r.message() // its panel
	// 300 frames in one write: the server reads them in batches.
	var burst []byte
	var want []string
	for i := range 300 {
		text, reply := "ping", `message web "pong"`
		if i%3 == 2 {
			text, reply = "all", `message web "to everyone"`
		}
		burst = append(burst, web.ClientFrame(true, websocket.TextMessage, []byte(`{"type":"event","text":"`+text+`"}`))...)
		want = append(want, reply)
	}
	if _, err := r.c.Write(burst); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if got := r.message(); got != w {
			t.Fatalf("reply %d: %s, want %s", i, got, w)
		}
	}
}

func TestPingCloseAndBrokenFrames(t *testing.T) {
	s := startServer(t, fmt.Sprintf(panelDoc, ""))
	ping := []byte(`{"type":"event","text":"ping"}`)

	t.Run("a ping is answered before the reply to what follows it", func(t *testing.T) {
		r := s.dialRaw()
		r.message()
		r.message()
		r.c.Write(append(web.ClientFrame(true, websocket.PingMessage, []byte("はい?")), web.ClientFrame(true, websocket.TextMessage, ping)...))
		if op, p := r.frame(); op != websocket.PongMessage || string(p) != "はい?" {
			t.Fatalf("frame %d %q, want the pong with the ping's payload", op, p)
		}
		if got := r.message(); got != `message web "pong"` {
			t.Fatalf("reply %s", got)
		}
	})
	t.Run("a fragmented message with a ping inside", func(t *testing.T) {
		r := s.dialRaw()
		r.message()
		r.message()
		var b []byte
		b = append(b, web.ClientFrame(false, websocket.TextMessage, ping[:7])...)
		b = append(b, web.ClientFrame(true, websocket.PingMessage, nil)...)
		b = append(b, web.ClientFrame(true, 0, ping[7:])...)
		r.c.Write(b)
		if op, _ := r.frame(); op != websocket.PongMessage {
			t.Fatalf("frame %d, want a pong", op)
		}
		if got := r.message(); got != `message web "pong"` {
			t.Fatalf("reply %s", got)
		}
	})
	t.Run("a close is answered with its code", func(t *testing.T) {
		c, _, err := s.dial(nil)
		if err != nil {
			t.Fatal(err)
		}
		c.expect("state idle", "panel idle label,brk,button")
		c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "終わり"), time.Now().Add(time.Second))
		if _, _, err := c.ws.ReadMessage(); !websocket.IsCloseError(err, 4001) {
			t.Fatalf("after the close: %v, want the close echoed with 4001", err)
		}
	})
	t.Run("a length of 2 GiB is too big, also where an int has 32 bits", func(t *testing.T) {
		r := s.dialRaw()
		r.message()
		r.message()
		r.c.Write(append(binary.BigEndian.AppendUint64([]byte{0x81, 0x80 | 127}, 1<<31), 0, 0, 0, 0))
		if op, p := r.frame(); op != websocket.CloseMessage || len(p) < 2 || binary.BigEndian.Uint16(p) != websocket.CloseMessageTooBig {
			t.Fatalf("frame %d %q, want a close 1009", op, p)
		}
		other, _, err := s.dial(nil)
		if err != nil {
			t.Fatal(err)
		}
		other.expect("state idle", "panel idle label,brk,button")
	})
	for _, tc := range []struct {
		name string
		send []byte
		want string // in the log line's error
	}{
		{"unmasked", []byte{0x81, 0x02, 'h', 'i'}, "must be masked"},
		{"unknown opcode", web.ClientFrame(true, 5, ping), "unknown opcode 5"},
		{"continuation first", web.ClientFrame(true, 0, ping), "no message to continue"},
	} {
		t.Run("broken frame: "+tc.name, func(t *testing.T) {
			r := s.dialRaw()
			r.message()
			r.message()
			r.c.Write(tc.send)
			op, p := r.frame()
			if op != websocket.CloseMessage || len(p) < 2 || binary.BigEndian.Uint16(p) != websocket.CloseProtocolError || !strings.Contains(string(p), tc.want) {
				t.Fatalf("frame %d %q, want a close 1002 saying %q", op, p, tc.want)
			}
			if _, err := r.br.ReadByte(); err != io.EOF {
				t.Fatalf("after the close frame: %v, want the connection closed", err)
			}
			if s.logs.FilterMessage("connection closed").FilterFieldKey("error").Len() == 0 {
				t.Error("nothing logged")
			}
			// The others go on.
			other, _, err := s.dial(nil)
			if err != nil {
				t.Fatal(err)
			}
			other.expect("state idle", "panel idle label,brk,button")
			other.sendJSON(string(ping))
			other.expect(`message web "pong"`)
		})
	}
}

// TestNoFrameAfterTheCloseReply: a page's close is answered with a close
// frame and nothing after it (RFC 6455 §5.5.1), while the behavior keeps
// broadcasting to every page (another page asks it to, as fast as it
// can). Before, a broadcast queued between the close reply and the
// connection's closing was written after the close frame (in about one
// connection in a hundred; adaptors TestNothingIsWrittenAfterTheLastFrame
// shows it every time).
func TestNoFrameAfterTheCloseReply(t *testing.T) {
	s := startServer(t, fmt.Sprintf(panelDoc, ""))
	spam := s.dialRaw()
	go io.Copy(io.Discard, spam.c)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		var b []byte
		for range 20 {
			b = append(b, web.ClientFrame(true, websocket.TextMessage, []byte(`{"type":"event","text":"all"}`))...)
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := spam.c.Write(b); err != nil {
				return
			}
		}
	}()
	for i := range 200 {
		r := s.dialRaw()
		r.message()
		r.message()
		r.c.Write(web.ClientFrame(true, websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")))
		for {
			if op, _ := r.frame(); op == websocket.CloseMessage {
				break
			}
		}
		if b, err := r.br.ReadByte(); err == nil {
			t.Fatalf("connection %d: byte %#x after the close frame", i, b)
		}
		r.c.Close()
	}
}
