package main

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// TestVisitorsSessions runs examples/visitors.seatml as its own process:
// two visitors over TCP, each in a conversation of their own (two states
// at once); seat ctl lists the sessions; a visitor leaving is reported to
// the staff console and the other goes on.
func TestVisitorsSessions(t *testing.T) {
	vport, sport, ctl := freePortNumber(t), freePortNumber(t), freePort(t)
	_, stderr := startSeat(t, "run", "--control", ctl, "--set", "visitor.port="+vport, "--set", "staff.port="+sport, "../../examples/visitors.seatml")
	var err error
	dial := func(port string) (net.Conn, *bufio.Reader) {
		var c net.Conn
		waitFor(t, func() bool { c, err = net.Dial("tcp", "127.0.0.1:"+port); return err == nil })
		c.SetDeadline(time.Now().Add(20 * time.Second))
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	expect := func(r *bufio.Reader, want string) {
		t.Helper()
		got, err := r.ReadString('\n')
		if err != nil || strings.TrimSuffix(got, "\n") != want {
			t.Fatalf("got %q (%v), want %q\n%s", got, err, want, stderr.String())
		}
	}
	staff, rs := dial(sport)
	_ = staff
	ann, ra := dial(vport)
	expect(ra, "Welcome! Say hello to start.")
	bob, rb := dial(vport)
	expect(rb, "Welcome! Say hello to start.")
	ann.Write([]byte("hello\ntickets\n3\n"))
	expect(ra, "Tickets or map?")
	expect(ra, "How many tickets? (1 to 9)")
	expect(ra, "3 ticket(s): 37.50 EUR. You have 3.")
	expect(ra, "Tickets or map?")
	bob.Write([]byte("where\n"))
	expect(rb, "You are in attract.")
	ann.Write([]byte("where\n"))
	expect(ra, "You are in menu.")

	out, errOut, code := runSeat("ctl", "--control", ctl, "sessions", "visitors")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, ann.LocalAddr().String()+"  menu") || !strings.Contains(out, bob.LocalAddr().String()+"  attract") {
		t.Errorf("seat ctl sessions: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = runSeat("ctl", "--control", ctl, "status", "visitors")
	if !strings.Contains(out, "sessions: 2 open, 2 started, 0 ended") {
		t.Errorf("seat ctl status:\n%s", out)
	}
	ann.Close()
	expect(rs, ann.LocalAddr().String()+" left in menu with 3 ticket(s)")
	bob.Write([]byte("hi\nwhere\n"))
	expect(rb, "Tickets or map?")
	expect(rb, "You are in menu.")
}
