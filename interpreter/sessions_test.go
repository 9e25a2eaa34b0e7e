package interpreter

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
)

const sessionKiosk = `<?xml version="1.0" encoding="UTF-8"?>
<seatml>
<general name="kiosk">
<adaptor name="visitor" type="socket" role="server" port="0" session="peer" maxsessions="2"/>
<adaptor name="staff" type="socket" role="server" port="0"/>
<script>said = 0</script>
<onconnect source="visitor"><script>seat.reply("welcome " .. event.peer)</script></onconnect>
<ondisconnect source="visitor"><script>seat.send("staff", "left in " .. seat.state())</script></ondisconnect>
<rule source="staff"><key>closing</key><script>seat.send("visitor", "we close soon (" .. seat.state() .. ")")</script></rule>
</general>
<state name="待機">
<rule source="visitor"><key>hello</key><script>said = said + 1</script><statetransition>menu</statetransition></rule>
</state>
<state name="menu">
<onentry><script>seat.send("visitor", "menu, said " .. said)</script></onentry>
<onexit><script>seat.send("staff", "menu exited")</script></onexit>
<rule source="visitor"><key>where</key><script>seat.reply("in " .. seat.state())</script></rule>
</state>
</seatml>
`

// TestSessionsPerPeer: two visitors of a session="peer" server each have
// their own state and Lua globals; a session's messages reach its own
// peer only, and the staff adaptor as from any behavior; staff input
// reaches every session; a visitor leaving runs ondisconnect, then onexit;
// a third visitor is refused by maxsessions and counted; the control
// listing shows the sessions.
func TestSessionsPerPeer(t *testing.T) {
	h := start(t, sessionKiosk)
	if !h.m.IsHost() {
		t.Fatal("the behavior does not host sessions")
	}
	staff := dialTCP(t, addrOf(t, h, "staff"))
	st := bufio.NewReader(staff)
	h.waitLog("client connected")
	read := func(r *bufio.Reader) string {
		t.Helper()
		line, err := r.ReadString('\n')
		if err != nil {
			for _, e := range h.logs.All() {
				t.Log(e.Message, e.ContextMap())
			}
			t.Fatal(err)
		}
		return strings.TrimSuffix(line, "\n")
	}
	ann, bob := dialTCP(t, addrOf(t, h, "visitor")), dialTCP(t, addrOf(t, h, "visitor"))
	ra, rb := bufio.NewReader(ann), bufio.NewReader(bob)
	if got, want := read(ra), "welcome "+ann.LocalAddr().String(); got != want {
		t.Fatalf("ann got %q, want %q", got, want)
	}
	if got, want := read(rb), "welcome "+bob.LocalAddr().String(); got != want {
		t.Fatalf("bob got %q, want %q", got, want)
	}
	ann.Write([]byte("hello\n"))
	if got := read(ra); got != "menu, said 1" {
		t.Fatalf("ann got %q", got)
	}
	bob.Write([]byte("where\n")) // bob is still in 待機: no rule
	bob.Write([]byte("hello\n"))
	if got := read(rb); got != "menu, said 1" { // bob's own Lua state
		t.Fatalf("bob got %q", got)
	}
	ann.Write([]byte("where\n"))
	if got := read(ra); got != "in menu" {
		t.Fatalf("ann got %q", got)
	}
	staff.Write([]byte("closing\n"))
	if got := read(ra); got != "we close soon (menu)" {
		t.Fatalf("ann got %q", got)
	}
	if got := read(rb); got != "we close soon (menu)" {
		t.Fatalf("bob got %q", got)
	}
	sessions := h.m.Sessions()
	if len(sessions) != 2 || sessions[0].State != "menu" || sessions[1].State != "menu" {
		t.Errorf("sessions: %+v", sessions)
	}
	// maxsessions="2": a third visitor is refused and counted.
	carl := dialTCP(t, addrOf(t, h, "visitor"))
	if !readsEOF(carl) {
		t.Error("a third visitor was not refused")
	}
	h.eventually("the refusal counted", func() bool {
		for _, a := range h.m.Adaptors() {
			if a.Name == "visitor" && a.Refused == 1 {
				return true
			}
		}
		return false
	})
	// Ann leaves: her ondisconnect, then her state's onexit.
	ann.Close()
	staff.SetReadDeadline(time.Now().Add(3 * time.Second))
	if got := read(st); got != "left in menu" {
		t.Fatalf("staff got %q", got)
	}
	if got := read(st); got != "menu exited" {
		t.Fatalf("staff got %q", got)
	}
	h.eventually("ann's session ended", func() bool { c := h.m.SessionCounts(); return c.Open == 1 && c.Ended == 1 })
	if c := h.m.SessionCounts(); c.Created != 2 {
		t.Errorf("counts %+v", c)
	}
	// Stopping the behavior ends bob's session: his onexit runs.
	h.stop()
	if got := read(st); got != "menu exited" {
		t.Fatalf("staff got %q at the stop", got)
	}
	bob.SetReadDeadline(time.Now().Add(10 * time.Second))
	if !readsEOF(bob) {
		t.Error("bob's connection stayed open after the stop")
	}
}

// TestWebSessionsPerPage: with session="peer" on a web adaptor every page
// has its own session, and its panel shows its own state and widget
// values: one page moving on leaves the other where it was.
func TestWebSessionsPerPage(t *testing.T) {
	h := start(t, `<seatml><general name="panels">
<adaptor name="web" type="web" port="0" session="peer"/>
</general>
<state name="start"><button label="Begin"><statetransition>operator</statetransition></button></state>
<state name="operator">
<onentry><script>seat.set_text("operator:log", "opened by " .. seat.state())</script></onentry>
<text id="log" width="20" height="2"/>
</state></seatml>`)
	addr := addrOf(t, h, "web")
	page := func() *websocket.Conn {
		ws, err := dialWS(t, addr)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	// next reads frames until one of the given type.
	next := func(ws *websocket.Conn, typ string) map[string]any {
		t.Helper()
		for {
			var f map[string]any
			if err := ws.ReadJSON(&f); err != nil {
				t.Fatalf("waiting for a %s frame: %v", typ, err)
			}
			if f["type"] == typ {
				return f
			}
		}
	}
	a, b := page(), page()
	if f := next(a, "state"); f["name"] != "start" {
		t.Fatalf("page a: %v", f)
	}
	if f := next(b, "state"); f["name"] != "start" {
		t.Fatalf("page b: %v", f)
	}
	next(b, "panel") // the rest of page b's own start
	a.WriteJSON(map[string]any{"type": "event", "source": "gui", "id": "Begin"})
	if f := next(a, "state"); f["name"] != "operator" {
		t.Fatalf("page a after Begin: %v", f)
	}
	for f := next(a, "gui"); f["value"] != "opened by operator"; f = next(a, "gui") {
		if f["id"] != "operator:log" {
			t.Fatalf("page a's widget: %v", f)
		}
	}
	h.eventually("two sessions, in two states", func() bool {
		s := h.m.Sessions()
		return len(s) == 2 && (s[0].State == "operator") != (s[1].State == "operator")
	})
	// Page b saw nothing of it.
	b.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var f map[string]any
	if err := b.ReadJSON(&f); err == nil {
		t.Fatalf("page b got %v, meant for page a", f)
	}
}

// TestDoneTellsHandled: an event's Done says whether the behavior handled
// it, which an MQTT adaptor turns into an acknowledgement (or none). An
// event given to every session is answered once, after all of them
// handled it; one given to a behavior loaded but not running is answered
// as not handled.
func TestDoneTellsHandled(t *testing.T) {
	h := start(t, sessionKiosk)
	ann, bob := dialTCP(t, addrOf(t, h, "visitor")), dialTCP(t, addrOf(t, h, "visitor"))
	ra, rb := bufio.NewReader(ann), bufio.NewReader(bob)
	ra.ReadString('\n') // welcome
	rb.ReadString('\n')
	h.eventually("two sessions", func() bool { return h.m.SessionCounts().Open == 2 })
	answers := make(chan bool, 4)
	err := h.m.Deliver(context.Background(), adaptors.Event{Source: "staff", Text: "closing", Done: func(handled bool) { answers <- handled }})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case handled := <-answers:
		if !handled {
			t.Error("an event both sessions handled was answered as not handled")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	for _, r := range []*bufio.Reader{ra, rb} {
		if line, _ := r.ReadString('\n'); line != "we close soon (待機)\n" {
			t.Errorf("a visitor got %q", line)
		}
	}
	select {
	case <-answers:
		t.Error("answered twice")
	case <-time.After(50 * time.Millisecond):
	}

	prog, diags := seatml.LoadBytes("quiet.seatml", []byte(`<seatml><general name="quiet"/><state name="s"/></seatml>`), seatml.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	m, err := New(prog, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Deliver(context.Background(), adaptors.Event{Source: "x", Text: "hi", Done: func(handled bool) { answers <- handled }})
	if handled := <-answers; handled {
		t.Error("an event given to a behavior not running was answered as handled")
	}
}

// sender is a topic session's sender as the MQTT adaptor makes them: a
// new connection value per publication, one session key per sender.
type sender struct{ id string }

func (s *sender) Send(string) error  { return nil }
func (s *sender) String() string     { return "bus " + s.id }
func (s *sender) Peer() string       { return s.id }
func (s *sender) SessionKey() string { return "robot/+/asr\x00" + s.id }

// quietBus stands in for the MQTT adaptor: events are delivered by the test.
type quietBus struct{ name string }

func (b *quietBus) Name() string                              { return b.name }
func (b *quietBus) Open(context.Context, adaptors.Sink) error { return nil }
func (b *quietBus) Send(string) error                         { return nil }
func (b *quietBus) Close() error                              { return nil }

// TestTopicSessionsEndIdle: a topic session whose sender has sent nothing
// for sessionidle ends as if it had disconnected (ondisconnect, then
// onexit); one that keeps talking stays; a sender that speaks after its
// session ended gets a new one; and topic sessions are capped at 1,024
// by default. On the fake clock: ten idle minutes take no time.
func TestTopicSessionsEndIdle(t *testing.T) {
	h := start(t, `<seatml><general name="fleet">
<adaptor name="bus" type="mqtt" subscribe="robot/+/asr" publish="robot/+/say" session="topic" sessionidle="600"/>
<ondisconnect source="bus"><script>seat.log("info", "bye " .. event.peer .. " after " .. n)</script></ondisconnect>
</general>
<state name="s"><onexit><script>seat.log("info", "exit " .. seat.state())</script></onexit>
<rule source="bus"><script>n = (n or 0) + 1</script></rule></state></seatml>`, func(o *Options) {
		o.OpenAdaptor = func(c adaptors.Config) (adaptors.Adaptor, error) { return &quietBus{name: c.Name}, nil }
	})
	say := func(id string) {
		t.Helper()
		if err := h.m.Deliver(context.Background(), adaptors.Event{Source: "bus", Text: "hi", From: &sender{id}}); err != nil {
			t.Fatal(err)
		}
		if err := NewHand(h.m, nil).Settle(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	say("1")
	say("2")
	say("1")
	if c := h.m.SessionCounts(); c.Open != 2 {
		t.Fatalf("counts %+v, want 2 open", c)
	}
	for range 3 { // robot 1 talks every 5 minutes, robot 2 is silent
		h.clock.Advance(5 * time.Minute)
		say("1")
	}
	// The sweep re-arms itself a minute after it runs: an Advance that
	// lands between its look and its re-arming (the machine runs on its
	// own goroutine) finds it unarmed. The clock is nudged on while
	// waiting; robot 1 spoke last at 15 minutes and stays.
	h.eventually("robot 2's session ended", func() bool {
		if h.m.SessionCounts().Ended == 1 {
			return true
		}
		h.clock.Advance(10 * time.Second)
		return false
	})
	if c := h.m.SessionCounts(); c.Open != 1 {
		t.Errorf("counts %+v: robot 1 kept talking and must keep its session", c)
	}
	h.waitLog("bye 2 after 1")
	h.waitLog("exit s")
	say("2") // a new session: its count starts again
	h.clock.Advance(13 * time.Minute)
	h.eventually("both ended", func() bool { return h.m.SessionCounts().Ended == 3 })
	h.waitLog("bye 1 after 5")
	if n := h.logs.FilterMessage("bye 2 after 1").Len(); n != 2 {
		t.Errorf("robot 2's two sessions said bye %d times", n)
	}
	if h.m.SessionCounts().Created != 3 {
		t.Errorf("counts %+v", h.m.SessionCounts())
	}

	// The default cap: 1,024 topic sessions, then refused and counted.
	for i := range DefaultMaxTopicSessions + 1 {
		h.m.Deliver(context.Background(), adaptors.Event{Source: "bus", Text: "hi", From: &sender{fmt.Sprint("r", i)}})
	}
	if c := h.m.SessionCounts(); c.Open != DefaultMaxTopicSessions || c.Refused != 1 {
		t.Errorf("counts %+v: want %d open and 1 refused", c, DefaultMaxTopicSessions)
	}
}

// slowOpen is a socket adaptor whose Open returns only once released,
// after the socket listens: a host still opening its adaptors while its
// first peers connect (a slow MQTT or ROS adaptor declared later does the
// same for every adaptor before it).
type slowOpen struct {
	adaptors.Adaptor
	listening, release chan struct{}
}

func (a *slowOpen) Open(ctx context.Context, sink adaptors.Sink) error {
	err := a.Adaptor.Open(ctx, sink)
	close(a.listening)
	<-a.release
	return err
}

func (a *slowOpen) Flush()       { a.Adaptor.(adaptors.Flusher).Flush() }
func (a *slowOpen) Addr() string { return a.Adaptor.(interface{ Addr() string }).Addr() }

// TestSessionStartedWhileTheHostOpens: a peer that connects while the
// host is still opening its adaptors (the session adaptor listens, its
// Open has not returned) gets a session that reaches its own peer and
// the host's other adaptors once they are open; what it answered
// meanwhile goes out once the host has opened. Before the fix the session
// took each adaptor as it was then, not yet there, for good: its replies
// were never flushed to its peer (a one-shot client that connected as
// seat started waited forever: TestOneShotClient's rare failure) and its
// sends to the other adaptor failed as not connected.
func TestSessionStartedWhileTheHostOpens(t *testing.T) {
	prog, diags := seatml.LoadBytes("t.seatml", []byte(`<seatml>
<general name="kiosk">
<adaptor name="visitor" type="socket" role="server" port="0" session="peer"/>
<adaptor name="staff" type="socket" role="server" port="0"/>
</general>
<state name="s">
<rule source="visitor"><key>hello</key><script>seat.reply("hi")</script><statetransition>t</statetransition></rule>
</state>
<state name="t">
<rule source="visitor"><key>tell</key><script>seat.send("staff", "told")</script></rule>
</state>
</seatml>`), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	kind, _ := adaptors.LookupKind("socket")
	socket := kind.New
	slow := &slowOpen{listening: make(chan struct{}), release: make(chan struct{})}
	m, err := New(prog, Options{OpenAdaptor: func(cfg adaptors.Config) (adaptors.Adaptor, error) {
		a, err := socket(cfg)
		if err != nil || cfg.Name != "visitor" {
			return a, err
		}
		slow.Adaptor = a
		return slow, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the behavior did not stop")
		}
	}()
	<-slow.listening
	visitor := dialTCP(t, slow.Addr())
	visitor.Write([]byte("hello\n"))
	vr := bufio.NewReader(visitor)
	// The session answers while the host is still opening.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if ss := m.Sessions(); len(ss) == 1 && ss[0].State == "t" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session did not handle hello within 10 s: %+v", m.Sessions())
		}
	}
	close(slow.release)
	<-m.Ready()
	visitor.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := vr.ReadString('\n'); line != "hi\n" || err != nil {
		t.Fatalf("the visitor got %q (%v), want hi", line, err)
	}
	staff := dialTCP(t, addrOf(t, &harness{t: t, m: m}, "staff"))
	sr := bufio.NewReader(staff)
	// A message reaches the connections listed when it is sent: the
	// visitor asks again until the staff connection is.
	for deadline := time.Now().Add(5 * time.Second); ; {
		visitor.Write([]byte("tell\n"))
		staff.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		line, err := sr.ReadString('\n')
		if line == "told\n" && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("staff got %q (%v), want told", line, err)
		}
	}
}
