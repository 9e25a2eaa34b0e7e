package manager

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/interpreter"
)

// The faults of a reload found by review: each of these failed on the
// first version of the all-or-nothing reload.

// hookedManager is a manager whose log calls hook on each entry.
func hookedManager(t *testing.T, hook func(zapcore.Entry)) *Manager {
	core, _ := observer.New(zapcore.DebugLevel)
	log := zap.New(zapcore.RegisterHooks(core, func(en zapcore.Entry) error { hook(en); return nil }))
	mg := New(Options{Log: log, Machine: interpreter.Options{Log: zap.NewNop()}})
	t.Cleanup(mg.StopAll)
	return mg
}

// TestReloadWhileTheOldVersionExits: the old version ends by itself
// (seat.exit) after the new one was made beside it and before the switch.
// The reload completes (the adaptor is opened anew) and the manager still
// answers: it once panicked and left the manager's lock held.
func TestReloadWhileTheOldVersionExits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.seatml")
	os.WriteFile(path, []byte(`<seatml><general name="k"><adaptor name="chat" type="socket" role="server" port="0"/></general>
<state name="s"><rule><key>bye</key><script>seat.exit(0)</script></rule>
<rule><key>hi</key><script>seat.reply("hi")</script></rule></state></seatml>`), 0o644)
	var mg *Manager
	var peer *line
	var armed atomic.Bool
	mg = hookedManager(t, func(en zapcore.Entry) {
		if en.Message != "new version ready; stopping the old one" || !armed.Load() {
			return
		}
		peer.c.Write([]byte("bye\n"))
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mg.mu.Lock()
			st := mg.find("k").state
			mg.mu.Unlock()
			if st == Unloaded {
				return
			}
		}
	})
	if _, err := mg.Load(path); err != nil {
		t.Fatal(err)
	}
	if _, err := mg.Start("k"); err != nil {
		t.Fatal(err)
	}
	peer = dial(t, mg.Machine("k").Adaptor("chat").(interface{ Addr() string }).Addr())
	if got := peer.ask(t, "hi"); got != "hi" {
		t.Fatal(got)
	}
	armed.Store(true)
	done := make(chan error, 1)
	go func() { _, err := mg.Reload("k"); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the reload did not return")
	}
	if info, err := mg.Info("k"); err != nil || info.State != Running {
		t.Fatalf("after the reload: %+v %v", info, err)
	}
	if got := dial(t, mg.Machine("k").Adaptor("chat").(interface{ Addr() string }).Addr()).ask(t, "hi"); got != "hi" {
		t.Errorf("the new version: %q", got)
	}
}

// TestFailedFinishRollsBackWithoutLoss: a reload whose adaptor reopened on
// the old version's address fails (its dir is a file) after the old
// version stopped: a copy of the old version starts again, says so, and a
// peer pipelining pings on the taken-over socket gets every answer, once
// and in order (those queued for the failed version went to the copy).
func TestFailedFinishRollsBackWithoutLoss(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	port := freePort(t)
	notDir := filepath.Join(dir, "afile")
	os.WriteFile(notDir, []byte("x"), 0o644)
	path := filepath.Join(dir, "kiosk.seatml")
	write := func(webAttrs string) {
		os.WriteFile(path, []byte(`<seatml><general name="kiosk"><adaptor name="chat" type="socket" role="server" port="0"/>
<adaptor name="web" type="web" port="`+port+`"`+webAttrs+`/></general>
<state name="s"><rule><key>ping \d+</key><script>seat.reply("pong" .. event.text:sub(5))</script></rule></state></seatml>`), 0o644)
	}
	write("")
	r.load(path, true)
	l := dial(t, chatAddr(t, r, "kiosk"))
	const pings = 20000
	go func() {
		w := bufio.NewWriter(l.c)
		for i := range pings {
			fmt.Fprintf(w, "ping %d\n", i)
			if i%20 == 0 {
				w.Flush()
			}
		}
		w.Flush()
	}()
	if s, err := l.r.ReadString('\n'); s != "pong 0\n" {
		t.Fatalf("first answer %q (%v)", s, err)
	}
	write(` dir="` + notDir + `"`)
	info, err := r.mg.Reload("kiosk")
	if err == nil || !strings.Contains(err.Error(), "not a directory") || !strings.Contains(err.Error(), "the old version was started again") || info.State != Running {
		t.Fatalf("reload: %v, %s", err, info.State)
	}
	for i := 1; i < pings; i++ {
		s, err := l.r.ReadString('\n')
		if want := fmt.Sprintf("pong %d\n", i); s != want {
			t.Fatalf("answer %d is %q (%v), want %q", i, s, err, want)
		}
	}
}

// TestReloadAddsAClientAdaptor: an adaptor the new version adds connects
// while the old one still runs; its onconnect runs in the new version (the
// event is queued for it, not dropped as for a loaded behavior).
func TestReloadAddsAClientAdaptor(t *testing.T) {
	r := newRig(t)
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Addr().String())
	path := filepath.Join(t.TempDir(), "k.seatml")
	write := func(extra string) {
		os.WriteFile(path, []byte(`<seatml><general name="k"><adaptor name="chat" type="socket" role="server" port="0"/>`+extra+`</general>
<state name="s"><rule><key>x</key><script>seat.reply("y")</script></rule></state></seatml>`), 0o644)
	}
	write("")
	r.load(path, true)
	write(`<adaptor name="up" type="socket" role="client" host="127.0.0.1" port="` + port + `"/><onconnect source="up"><script>seat.reply("こんにちは")</script></onconnect>`)
	if _, err := r.mg.Reload("k"); err != nil {
		t.Fatal(err)
	}
	srv.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := srv.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if s, err := bufio.NewReader(c).ReadString('\n'); s != "こんにちは\n" {
		t.Fatalf("onconnect of the new version did not run: %q %v (dropped %d)", s, err, r.mg.Machine("k").Dropped())
	}
}

// TestReloadAddressTakenInBetween: the one case a reload cannot undo. An
// adaptor whose attributes changed is reopened on its address once the old
// version has let it go; another program takes the address in that
// instant. The copy of the old version cannot have it either: the behavior
// is unloaded, and the error says so rather than that nothing changed.
func TestReloadAddressTakenInBetween(t *testing.T) {
	port := freePort(t)
	path := filepath.Join(t.TempDir(), "k.seatml")
	write := func(attrs string) {
		os.WriteFile(path, []byte(`<seatml><general name="k"><adaptor name="web" type="web" port="`+port+`"`+attrs+`/></general>
<state name="s"/></seatml>`), 0o644)
	}
	write("")
	var armed atomic.Bool
	var thief net.Listener
	mg := hookedManager(t, func(en zapcore.Entry) {
		if en.Message == "old version stopped" && armed.Load() {
			thief, _ = net.Listen("tcp", "127.0.0.1:"+port)
		}
	})
	if _, err := mg.Load(path); err != nil {
		t.Fatal(err)
	}
	if _, err := mg.Start("k"); err != nil {
		t.Fatal(err)
	}
	write(` allow="example.org"`)
	armed.Store(true)
	info, err := mg.Reload("k")
	if thief == nil {
		t.Fatal("the address could not be taken in between")
	}
	defer thief.Close()
	if err == nil || !strings.Contains(err.Error(), "is already in use") || !strings.Contains(err.Error(), "the behavior is unloaded") || info.State != Unloaded {
		t.Errorf("reload: %v, %s", err, info.State)
	}
}
