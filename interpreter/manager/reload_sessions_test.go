package manager

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/interpreter"
)

// A reload of a behavior with a session per peer, with something under
// way in it. The window between the new version's switch and its
// sessions made again is held open by a session busy in a script for
// 0.6 s: the old version waits for it to stop.

// deskRig is a manager whose scripts may run 0.6 s, with its log.
func deskRig(t *testing.T, debug bool) (*Manager, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.InfoLevel)
	mg := New(Options{Log: zap.New(core), Debug: debug, Machine: interpreter.Options{Log: zap.New(core), ScriptTimeout: 10 * time.Second}})
	t.Cleanup(mg.StopAll)
	return mg, logs
}

// writeDesk writes the desk: "slow" keeps a session busy 0.6 s, "hi"
// counts, the staff's "closing" reaches every session, and a session's
// onexit tells the staff.
func writeDesk(t *testing.T, path, version string) {
	t.Helper()
	src := `<seatml><general name="desk"><adaptor name="chat" type="socket" role="server" port="0" session="peer"/><adaptor name="staff" type="socket" role="server" port="0"/>
<rule source="staff"><key>closing</key><message sendto="chat">closing soon</message></rule></general>
<state name="受付"><onexit><script>seat.send("staff", "onexit ` + version + `")</script></onexit>
<rule source="chat"><key>slow</key><script>local t = os.clock(); while os.clock() - t &lt; 0.6 do end; seat.reply("slow done")</script></rule>
<rule source="chat"><key>hi</key><script>n = (n or 0) + 1; seat.reply("` + version + ` " .. n)</script></rule>
<rule source="chat"><key>go</key><statetransition>用件</statetransition></rule>
</state>
<state name="用件"/></seatml>`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func startDesk(t *testing.T, mg *Manager) (path, chat, staff string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "desk.seatml")
	writeDesk(t, path, "v1")
	if _, err := mg.Load(path); err != nil {
		t.Fatal(err)
	}
	if _, err := mg.Start("desk"); err != nil {
		t.Fatal(err)
	}
	m := mg.Machine("desk")
	return path, m.Adaptor("chat").(interface{ Addr() string }).Addr(), m.Adaptor("staff").(interface{ Addr() string }).Addr()
}

// reloadBusy reloads the desk while a's session is busy, calls during
// once the new version has switched in and the old one is stopping (b's
// idle old session has stopped; a's is still busy), and returns when the
// reload is done.
func reloadBusy(t *testing.T, mg *Manager, logs *observer.ObservedLogs, path string, a, b *line, during func()) {
	t.Helper()
	fmt.Fprintln(a.c, "slow")
	writeDesk(t, path, "v2")
	done := make(chan Info, 1)
	go func() {
		info, err := mg.Reload("desk")
		if err != nil {
			t.Error(err)
		}
		done <- info
	}()
	stopping(t, logs, b)
	during()
	if info := <-done; !info.Kept {
		t.Errorf("the sessions were not kept: %+v", info)
	}
	if got := a.read(t); got != "slow done" {
		t.Errorf("a's slow line: %q", got)
	}
}

// stopping waits until the old version has stopped b's session: the
// new version has switched in.
func stopping(t *testing.T, logs *observer.ObservedLogs, b *line) {
	t.Helper()
	peer := b.c.LocalAddr().String()
	eventually(t, "b's old session stopped", func() bool {
		return logs.FilterMessage("stopped").FilterField(zap.String("session", peer)).Len() > 0
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (l *line) read(t *testing.T) string {
	t.Helper()
	l.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	s, err := l.r.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return strings.TrimSuffix(s, "\n")
}

// TestStopAfterAKeptReload: after a reload that kept the sessions, a
// stop ends them as a stop does: their onexit runs (the carry the new
// version was made from did not count as another reload's).
func TestStopAfterAKeptReload(t *testing.T) {
	mg, _ := deskRig(t, false)
	path, chat, staffAddr := startDesk(t, mg)
	staff, a := dial(t, staffAddr), dial(t, chat)
	a.ask(t, "hi")
	writeDesk(t, path, "v2")
	if info, err := mg.Reload("desk"); err != nil || !info.Kept {
		t.Fatalf("reload: %+v %v", info, err)
	}
	if got := a.ask(t, "hi"); got != "v2 2" {
		t.Fatalf("after the reload: %q", got)
	}
	if _, err := mg.Stop("desk"); err != nil {
		t.Fatal(err)
	}
	if got := staff.read(t); got != "onexit v2" {
		t.Errorf("the staff heard %q, want the session's onexit", got)
	}
}

// TestPeerLeavingDuringAReload: a peer that resets its connection while
// the new version makes the sessions again has its session ended, not
// made again for a connection that is gone (it was, and it never ended).
func TestPeerLeavingDuringAReload(t *testing.T) {
	mg, logs := deskRig(t, false)
	path, chat, _ := startDesk(t, mg)
	a, b := dial(t, chat), dial(t, chat)
	a.ask(t, "hi")
	b.ask(t, "hi")
	gone := b.c.LocalAddr().String()
	reloadBusy(t, mg, logs, path, a, b, func() {
		b.c.(*net.TCPConn).SetLinger(0)
		b.c.Close() // a reset: the reader sees it at once
	})
	eventually(t, "b's session ended", func() bool {
		return !slices.ContainsFunc(mg.Machine("desk").Sessions(), func(s interpreter.SessionInfo) bool { return s.Peer == gone })
	})
	if got := a.ask(t, "hi"); got != "v2 2" {
		t.Errorf("a after the reload: %q", got)
	}
}

// TestBroadcastDuringAReload: another adaptor's input that comes while
// the sessions are made again reaches every session once they are.
func TestBroadcastDuringAReload(t *testing.T) {
	mg, logs := deskRig(t, false)
	path, chat, staffAddr := startDesk(t, mg)
	a, b, staff := dial(t, chat), dial(t, chat), dial(t, staffAddr)
	a.ask(t, "hi")
	b.ask(t, "hi")
	reloadBusy(t, mg, logs, path, a, b, func() { fmt.Fprintln(staff.c, "closing") })
	if got := b.read(t); got != "closing soon" {
		t.Errorf("b heard %q", got)
	}
	if got := a.read(t); got != "closing soon" {
		t.Errorf("a heard %q", got)
	}
}

// TestHalfCloseDuringAReload: a peer that sends its lines and closes its
// side during the reload gets every answer before its connection ends.
func TestHalfCloseDuringAReload(t *testing.T) {
	mg, logs := deskRig(t, false)
	path, chat, _ := startDesk(t, mg)
	a, b := dial(t, chat), dial(t, chat)
	a.ask(t, "hi")
	b.ask(t, "hi")
	fmt.Fprintln(a.c, "slow")
	writeDesk(t, path, "v2")
	done := make(chan error, 1)
	go func() { _, err := mg.Reload("desk"); done <- err }()
	stopping(t, logs, b)
	fmt.Fprintln(a.c, "hi")
	a.c.(*net.TCPConn).CloseWrite()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := a.read(t); got != "slow done" {
		t.Errorf("first: %q", got)
	}
	if got := a.read(t); got != "v2 2" {
		t.Errorf("second: %q (the line sent during the reload)", got)
	}
}

// TestPausedSessionsPeerLeaves: a session paused in the debugger whose
// peer leaves goes on to its end instead of holding the departure.
func TestPausedSessionsPeerLeaves(t *testing.T) {
	mg, _ := deskRig(t, true)
	_, chat, _ := startDesk(t, mg)
	a := dial(t, chat)
	a.ask(t, "hi")
	peer := a.c.LocalAddr().String()
	d, err := mg.SessionDebugger("desk", peer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Break(interpreter.Breakpoint{Kind: interpreter.BreakState, Name: "用件"}); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(a.c, "go")
	eventually(t, "paused", func() bool { return d.Summary().Paused })
	a.c.(*net.TCPConn).SetLinger(0)
	a.c.Close()
	eventually(t, "the session ended", func() bool { return len(mg.Machine("desk").Sessions()) == 0 && !d.Summary().Paused })
}
