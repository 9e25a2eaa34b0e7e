package manager

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
)

// kiosk writes a behavior whose socket server answers 「こんにちは」 with
// its version, at port.
func kiosk(t *testing.T, dir, version, port string) string {
	t.Helper()
	path := filepath.Join(dir, "kiosk.seatml")
	src := `<seatml><general name="kiosk"><adaptor name="chat" type="socket" role="server" port="` + port + `"/></general>
<state name="受付"><rule><key>こんにちは</key><script>seat.reply("` + version + ` " .. event.text)</script></rule>
<rule><key>ping \d+</key><script>seat.reply("pong" .. event.text:sub(5))</script></rule></state></seatml>`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func chatAddr(t *testing.T, r *rig, name string) string {
	t.Helper()
	m := r.mg.Machine(name)
	if m == nil {
		t.Fatalf("%s is not loaded", name)
	}
	return m.Adaptor("chat").(adaptors.Addresser).Addr()
}

type line struct {
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *line {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return &line{c, bufio.NewReader(c)}
}

func (l *line) ask(t *testing.T, text string) string {
	t.Helper()
	if _, err := fmt.Fprintln(l.c, text); err != nil {
		t.Fatal(err)
	}
	s, err := l.r.ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to %q: %v", text, err)
	}
	return strings.TrimSuffix(s, "\n")
}

// TestReloadKeepsConnections: a reload whose file declares the socket as
// before hands it, with its connection, to the new version.
func TestReloadKeepsConnections(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	f := kiosk(t, dir, "v1", "0")
	r.load(f, true)
	addr := chatAddr(t, r, "kiosk")
	peer := dial(t, addr)
	if got := peer.ask(t, "こんにちは"); got != "v1 こんにちは" {
		t.Fatalf("before: %q", got)
	}
	kiosk(t, dir, "v2", "0")
	info, err := r.mg.Reload("kiosk")
	if err != nil || info.State != Running {
		t.Fatalf("reload: %v, %+v", err, info)
	}
	if got := peer.ask(t, "こんにちは"); got != "v2 こんにちは" {
		t.Fatalf("the same connection after the reload: %q", got)
	}
	if a := chatAddr(t, r, "kiosk"); a != addr {
		t.Errorf("the socket moved from %s to %s", addr, a)
	}
}

// TestFailedReloadKeepsRunning: a new version whose port is taken fails
// to load and the old one runs on, untouched, its peer still connected;
// the error's hint is a seat ctl command, and the same reload with --set
// moves the behavior to a free port, which later reloads keep.
func TestFailedReloadKeepsRunning(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, busyPort, _ := net.SplitHostPort(busy.Addr().String())
	f := kiosk(t, dir, "v1", "0")
	r.load(f, true)
	peer := dial(t, chatAddr(t, r, "kiosk"))
	peer.ask(t, "こんにちは")

	kiosk(t, dir, "v2", busyPort)
	info, err := r.mg.Reload("kiosk")
	if err == nil {
		t.Fatal("a reload onto a taken port succeeded")
	}
	for _, want := range []string{busy.Addr().String() + " is already in use", "seat ctl reload kiosk --set chat.port=PORT", "the running version is unchanged"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if info.State != Running {
		t.Errorf("after the failed reload: %s (%s)", info.State, info.Reason)
	}
	if got := peer.ask(t, "こんにちは"); got != "v1 こんにちは" {
		t.Errorf("the old version after the failed reload: %q", got)
	}

	free := freePort(t)
	info, err = r.mg.ReloadWith("kiosk", ReloadOptions{Set: []seatml.Override{{Adaptor: "chat", Attr: "port", Value: free}}})
	if err != nil || info.State != Running {
		t.Fatalf("reload --set chat.port=%s: %v, %+v", free, err, info)
	}
	if got := dial(t, "127.0.0.1:"+free).ask(t, "こんにちは"); got != "v2 こんにちは" {
		t.Errorf("at the new port: %q", got)
	}
	if _, err := r.mg.Reload("kiosk"); err != nil {
		t.Fatalf("a later plain reload: %v", err)
	}
	if a := chatAddr(t, r, "kiosk"); a != "127.0.0.1:"+free {
		t.Errorf("a later reload moved the socket to %s", a)
	}
	if _, err := r.mg.ReloadWith("kiosk", ReloadOptions{Set: []seatml.Override{{Adaptor: "chta", Attr: "port", Value: "0"}}}); err == nil ||
		!strings.Contains(err.Error(), `declares no adaptor "chta" (its adaptors: chat)`) {
		t.Errorf("--set naming no adaptor: %v", err)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// TestReloadUnderTraffic: peers that pipeline pings while the behavior is
// reloaded again and again get every answer, once and in order: nothing
// queued for the old version is lost at the switch.
func TestReloadUnderTraffic(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	f := kiosk(t, dir, "v0", "0")
	r.load(f, true)
	reloads := trafficUnderReloads(t, chatAddr(t, r, "kiosk"),
		func(p, i int) string { return fmt.Sprintf("ping %d-%d", p, i) },
		func(p, i int) string { return fmt.Sprintf("pong %d-%d", p, i) },
		func(n int) {
			kiosk(t, dir, fmt.Sprintf("v%d", n), "0")
			if _, err := r.mg.Reload("kiosk"); err != nil {
				t.Fatal(err)
			}
		})
	t.Logf("4 peers x 1500 pings answered across %d reloads", reloads)
}

// trafficUnderReloads has 4 peers pipeline 1,500 lines each (line(p, i))
// to addr while reload(n) runs again and again, and checks that each
// answer is want(p, i), once and in order. It returns how many reloads
// ran (at least 2, or the test fails).
func trafficUnderReloads(t *testing.T, addr string, line, want func(p, i int) string, reload func(n int)) int {
	t.Helper()
	const peers, pings = 4, 1500
	var wg sync.WaitGroup
	errs := make(chan error, peers)
	for p := range peers {
		l := dial(t, addr)
		wg.Add(2)
		go func() {
			defer wg.Done()
			w := bufio.NewWriter(l.c)
			for i := range pings {
				fmt.Fprintln(w, line(p, i))
				if i%50 == 0 {
					w.Flush()
					time.Sleep(time.Millisecond) // a peer's pace, not a wait
				}
			}
			w.Flush()
		}()
		go func() {
			defer wg.Done()
			for i := range pings {
				s, err := l.r.ReadString('\n')
				if w := want(p, i) + "\n"; s != w {
					errs <- fmt.Errorf("peer %d: answer %d is %q (%v), want %q", p, i, s, err, w)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	reloads := 0
	for ; ; reloads++ {
		select {
		case <-done:
		default:
			reload(reloads + 1)
			continue
		}
		break
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reloads < 2 {
		t.Errorf("only %d reloads happened during the traffic", reloads)
	}
	return reloads
}

// TestReloadKeepsPages: an operator page stays connected across a reload
// and is shown the new version's state and widgets.
func TestReloadKeepsPages(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "panel.seatml")
	write := func(state, widget string) {
		os.WriteFile(path, []byte(`<seatml><general name="panel"><adaptor name="web" type="web" port="0"/></general>
<state name="`+state+`">`+widget+`</state></seatml>`), 0o644)
	}
	write("受付", `<input id="名前">田中</input>`)
	r.load(path, true)
	addr := r.mg.Machine("panel").Adaptor("web").(adaptors.Addresser).Addr()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	// until reads frames until one of type typ whose raw JSON holds want.
	until := func(typ, want string) {
		t.Helper()
		for {
			_, b, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("waiting for a %s frame with %q: %v", typ, want, err)
			}
			if strings.Contains(string(b), `"type":"`+typ+`"`) && strings.Contains(string(b), want) {
				return
			}
		}
	}
	until("gui", "田中")
	write("案内", `<input id="行き先">会議室</input>`)
	if _, err := r.mg.Reload("panel"); err != nil {
		t.Fatal(err)
	}
	until("state", "案内")
	until("gui", "会議室")
}

// TestReloadSessionBehavior: a reload that keeps state keeps the
// sessions of a session="peer" adaptor, their peers connected, under the
// new version; a reload --fresh ends them, and reopens the adaptor on its
// port once the old version has let it go: new connections get the new
// version.
func TestReloadSessionBehavior(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	port := freePort(t)
	path := filepath.Join(dir, "desk.seatml")
	write := func(version string) {
		os.WriteFile(path, []byte(`<seatml><general name="desk"><adaptor name="chat" type="socket" role="server" port="`+port+`" session="peer"/></general>
<state name="受付"><rule><key>こんにちは</key><script>n = (n or 0) + 1; seat.reply("`+version+` " .. n)</script></rule></state></seatml>`), 0o644)
	}
	write("v1")
	r.load(path, true)
	old := dial(t, "127.0.0.1:"+port)
	if got := old.ask(t, "こんにちは"); got != "v1 1" {
		t.Fatalf("before: %q", got)
	}
	write("v2")
	if info, err := r.mg.Reload("desk"); err != nil || info.State != Running || !info.Kept {
		t.Fatalf("reload: %v %+v", err, info)
	}
	if got := old.ask(t, "こんにちは"); got != "v2 2" {
		t.Errorf("the kept session after the reload: %q", got)
	}
	write("v3")
	if info, err := r.mg.ReloadWith("desk", ReloadOptions{Fresh: true}); err != nil || info.State != Running || info.Kept {
		t.Fatalf("reload --fresh: %v %+v", err, info)
	}
	old.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := old.r.ReadString('\n'); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the old session's connection after reload --fresh: %v, want it closed", err)
	}
	if got := dial(t, "127.0.0.1:"+port).ask(t, "こんにちは"); got != "v3 1" {
		t.Errorf("a new connection after the reload: %q", got)
	}
}

// TestReloadSessionsUnderTraffic: peers of a session="peer" behavior that
// pipeline pings while it is reloaded again and again get every answer,
// once and in order, from a session that kept its count: what a session
// had queued when it stopped, and what came while the new version made
// the sessions again, is handled by the new session.
func TestReloadSessionsUnderTraffic(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "desk.seatml")
	write := func(version string) {
		os.WriteFile(path, []byte(`<seatml><general name="desk"><adaptor name="chat" type="socket" role="server" port="0" session="peer"/></general>
<state name="受付"><rule><key>ping \d+</key><script>n = (n or 0) + 1; seat.reply("pong" .. event.text:sub(5) .. " " .. n)</script></rule></state></seatml>`+"<!-- "+version+" -->"), 0o644)
	}
	write("v0")
	r.load(path, true)
	reloads := trafficUnderReloads(t, chatAddr(t, r, "desk"),
		func(_, i int) string { return fmt.Sprintf("ping %d", i) },
		func(_, i int) string { return fmt.Sprintf("pong %d %d", i, i+1) }, // the session's count goes on
		func(n int) {
			write(fmt.Sprintf("v%d", n))
			if info, err := r.mg.Reload("desk"); err != nil || !info.Kept || len(info.NotKept) > 0 {
				t.Fatalf("reload: %v %+v", err, info)
			}
		})
	t.Logf("4 peers x 1500 pings answered across %d reloads", reloads)
}

// TestReloadTwiceKeepsGlobals: a global carried over by one reload is
// carried over by the next too (it was restored without being marked as
// set by the behavior, and the second reload forgot it).
func TestReloadTwiceKeepsGlobals(t *testing.T) {
	r := newRig(t)
	path := filepath.Join(t.TempDir(), "count.seatml")
	write := func(version string) {
		os.WriteFile(path, []byte(`<seatml><general name="count"><adaptor name="chat" type="socket" role="server" port="0"/></general>
<state name="s"><rule><key>ping</key><script>n = (n or 0) + 1; seat.reply("`+version+` " .. n)</script></rule></state></seatml>`), 0o644)
	}
	write("v1")
	r.load(path, true)
	l := dial(t, chatAddr(t, r, "count"))
	for i, version := range []string{"v1", "v2", "v3", "v4"} {
		if i > 0 {
			write(version)
			if info, err := r.mg.Reload("count"); err != nil || !info.Kept || len(info.NotKept) > 0 {
				t.Fatalf("reload %d: %v %+v", i, err, info)
			}
		}
		if got, want := l.ask(t, "ping"), fmt.Sprintf("%s %d", version, i+1); got != want {
			t.Errorf("after %d reloads: %q, want %q", i, got, want)
		}
	}
}
