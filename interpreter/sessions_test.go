package interpreter

import (
	"bufio"
	"strings"
	"testing"
	"time"
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
