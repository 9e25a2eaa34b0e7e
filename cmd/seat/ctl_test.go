package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// controlled is a seat run --control in this process, with seat ctl.
type controlled struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
	stderr *syncBuffer
}

// runControlled starts seat run --control with files, its control API on
// a port the system picks (the address is read from its log: a port
// found free beforehand may be taken by then, when packages' tests run
// side by side).
func runControlled(t *testing.T, files ...string) *controlled {
	t.Helper()
	c := &controlled{done: make(chan error, 1), stderr: &syncBuffer{}}
	var ctx context.Context
	ctx, c.cancel = context.WithCancel(context.Background())
	args := append([]string{"run", "--control", "127.0.0.1:0"}, files...)
	go func() { c.done <- run(ctx, args, strings.NewReader(""), &bytes.Buffer{}, c.stderr) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := controlURL.FindStringSubmatch(c.stderr.String()); m != nil {
			c.addr = m[1]
			return c
		}
		select {
		case err := <-c.done:
			t.Fatalf("seat run ended: %v\n%s", err, c.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no control API within 10 s:\n%s", c.stderr.String())
		}
	}
}

var controlURL = regexp.MustCompile(`control API.*"url": "http://([^/]+)/`)

// ctl runs seat ctl against it: standard output, standard error, status.
func (c *controlled) ctl(args ...string) (string, string, int) { return ctlAt(c.addr, args...) }

// ctlAt runs seat ctl against the control endpoint at addr.
func ctlAt(addr string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"ctl", "--control", addr}, args...), nil, &out, &errb)
	return out.String(), errb.String(), exitCode(err, &errb)
}

// stop sends the equivalent of SIGTERM and waits for run to return nil.
func (c *controlled) stop(t *testing.T) {
	t.Helper()
	c.cancel()
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("seat run did not stop")
	}
}

// TestRunSeveralBehaviorsWithControl runs two behaviors in one process with
// --control and drives them with seat ctl.
func TestRunSeveralBehaviorsWithControl(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name+".seatml")
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	a := write("a", `<seatml><general name="alpha"><adaptor name="chat" type="socket" role="server" port="0" maxconns="3"/></general><state name="one"/><state name="two"/></seatml>`)
	b := write("b", `<seatml><general name="beta"/><state name="waiting"/></seatml>`)
	c := write("c", `<seatml><general name="gamma"/><state name="s"/></seatml>`)
	r := runControlled(t, a, b)
	ctl := r.ctl
	waitFor(t, func() bool { out, _, code := ctl("list"); return code == 0 && strings.Contains(out, "beta") })
	out, _, _ := ctl("list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[1], "alpha") || !strings.Contains(lines[1], "running") || !strings.Contains(lines[1], "one") {
		t.Errorf("list:\n%s", out)
	}
	// status adds the adaptors and their counts: a fourth connection over
	// maxconns="3" is refused.
	chatRow := func() []string {
		out, _, _ := ctl("status", "alpha")
		lines := strings.Split(out, "\n")
		for k, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "chat" && k > 0 && strings.HasPrefix(lines[k-1], "ADAPTOR") {
				return f
			}
		}
		t.Fatalf("status shows no adaptor row:\n%s", out)
		return nil
	}
	row := chatRow() // chat socket ADDRESS OPEN ACCEPTED REFUSED ...
	if len(row) != 12 || row[1] != "socket" || !strings.HasPrefix(row[2], "127.0.0.1:") || row[3] != "0" {
		t.Fatalf("adaptor row %q", row)
	}
	for range 4 {
		c, err := net.Dial("tcp", row[2])
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	waitFor(t, func() bool { r := chatRow(); return r[3] == "3" && r[4] == "3" && r[5] == "1" })
	if out, _, code := ctl("load", "--start", c); code != 0 || !strings.Contains(out, "gamma") || !strings.Contains(out, "running") {
		t.Errorf("load --start: %d\n%s", code, out)
	}
	if out, _, code := ctl("stop", "beta"); code != 0 || !strings.Contains(out, "unloaded") {
		t.Errorf("stop: %d\n%s", code, out)
	}
	if _, errOut, code := ctl("stop", "beta"); code != 1 || !strings.Contains(errOut, `stop "beta": the behavior is not running`) {
		t.Errorf("stop again: %d %s", code, errOut)
	}
	if _, errOut, code := ctl("start", "nobody"); code != 1 || !strings.Contains(errOut, `no such behavior: "nobody"`) {
		t.Errorf("unknown: %d %s", code, errOut)
	}
	if _, _, code := ctl("jump"); code != 2 {
		t.Errorf("bad command: exit %d", code)
	}
	r.stop(t) // SIGTERM: every behavior stops
	if !strings.Contains(r.stderr.String(), "control API") {
		t.Errorf("no control API log:\n%s", r.stderr.String())
	}
	if _, errOut, code := ctl("list"); code != 1 || !strings.Contains(errOut, "is it running with --control?") {
		t.Errorf("ctl with nothing running: %d %s", code, errOut)
	}
}

func TestRunRefusesConflictingBehaviors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name+".seatml")
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	a := write("a", `<seatml><general name="same"><adaptor name="in" type="stdio"/></general><state name="s"/></seatml>`)
	b := write("b", `<seatml><general name="same"><adaptor name="in" type="stdio"/></general><state name="s"/></seatml>`)
	_, stderr, code := runSeat("run", a, b)
	if code != 1 || !strings.Contains(stderr, `behavior name "same" is already used by `+a) || !strings.Contains(stderr, "only one behavior may read standard input") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// TestControlKeepsOthersWhenOneFails: with --control, a behavior whose
// port is taken is listed as failed with its reason, and the others keep
// running and answering (issue 11: it stopped them all and exited 1).
func TestControlKeepsOthersWhenOneFails(t *testing.T) {
	dir := t.TempDir()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, port, _ := net.SplitHostPort(taken.Addr().String())
	a := filepath.Join(dir, "a.seatml")
	os.WriteFile(a, []byte(`<seatml><general name="alpha"><adaptor name="chat" type="socket" role="server" port="0"/></general>
<state name="s"><rule><key>ping</key><script>seat.reply("pong")</script></rule></state></seatml>`), 0o644)
	b := filepath.Join(dir, "b.seatml")
	os.WriteFile(b, []byte(`<seatml><general name="beta"><adaptor name="chat" type="socket" role="server" port="`+port+`"/></general><state name="s"/></seatml>`), 0o644)
	r := runControlled(t, a, b)
	ctl := func(args ...string) (string, int) {
		out, errOut, code := r.ctl(args...)
		return out + errOut, code
	}
	waitFor(t, func() bool { out, code := ctl("list"); return code == 0 && strings.Contains(out, "beta") })
	out, _ := ctl("list")
	var alpha, beta string
	for _, l := range strings.Split(out, "\n") {
		switch f := strings.Fields(l); {
		case len(f) > 0 && f[0] == "alpha":
			alpha = l
		case len(f) > 0 && f[0] == "beta":
			beta = l
		}
	}
	if !strings.Contains(alpha, "running") {
		t.Errorf("alpha is not running:\n%s", out)
	}
	if !strings.Contains(beta, "unloaded") || !strings.Contains(out, "\nbeta: failed: ") || !strings.Contains(out, "is already in use") {
		t.Errorf("beta is not listed as failed with its reason:\n%s", out)
	}
	// alpha answers on its socket.
	st, _ := ctl("status", "alpha")
	var chat string
	for _, l := range strings.Split(st, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "chat" {
			chat = f[2]
		}
	}
	c, err := net.DialTimeout("tcp", chat, 10*time.Second)
	if err != nil {
		t.Fatalf("alpha's socket %q: %v\n%s", chat, err, st)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("ping\n"))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "pong\n" {
		t.Fatalf("alpha answered %q (%v)", line, err)
	}
	select {
	case err := <-r.done:
		t.Fatalf("seat run ended: %v\n%s", err, r.stderr.String())
	default:
	}
	r.stop(t)
}

// TestCtlReloadIsAllOrNothing, on the real binary: a reload keeps a peer's
// connection; seat ctl reload of a kiosk edited onto a port in use fails, says so once with a command that
// works, and leaves the kiosk running with its peer connected; that command,
// with a free port, moves it, and a plain reload afterwards keeps the port.
func TestCtlReloadIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	busyPort := busyPort(t)
	port, control := freePortNumber(t), freePort(t)
	f := filepath.Join(dir, "kiosk.seatml")
	write := func(version, port string) {
		os.WriteFile(f, []byte(`<seatml><general name="受付"><adaptor name="kiosk" type="socket" role="server" port="`+port+`"/></general>
<state name="待機"><rule><key>こんにちは</key><script>seat.reply("`+version+`")</script></rule></state></seatml>`), 0o644)
	}
	write("v1", port)
	_, log := startSeat(t, "run", "--control", control, f)
	ctl := func(args ...string) (string, int) {
		out, errOut, code := ctlAt(control, args...)
		return out + errOut, code
	}
	peer := dialSeat(t, port)
	r := bufio.NewReader(peer)
	ask := func() string {
		peer.SetDeadline(time.Now().Add(10 * time.Second))
		peer.Write([]byte("こんにちは\n"))
		s, _ := r.ReadString('\n')
		return s
	}
	if got := ask(); got != "v1\n" {
		t.Fatalf("before: %q\n%s", got, log.String())
	}
	// A reload that keeps the port keeps the connection: the same peer
	// gets the new version's answer.
	write("v1.1", port)
	if out, code := ctl("reload", "受付"); code != 0 {
		t.Fatalf("reload: exit %d\n%s", code, out)
	}
	if got := ask(); got != "v1.1\n" {
		t.Fatalf("the same connection after a reload: %q\n%s", got, log.String())
	}

	write("v2", busyPort)
	out, code := ctl("reload", "受付")
	hint := "seat ctl --control " + control + " reload 受付 --set kiosk.port=PORT"
	if code != 1 || strings.Count(out, "is already in use") != 1 || !strings.Contains(out, hint) || !strings.Contains(out, "unchanged") {
		t.Errorf("reload onto a port in use: exit %d, want 1, once, with %q:\n%s", code, hint, out)
	}
	if out, _ := ctl("status", "受付"); !strings.Contains(out, "running") {
		t.Errorf("after the failed reload:\n%s", out)
	}
	if got := ask(); got != "v1.1\n" {
		t.Errorf("the old version's peer after the failed reload: %q", got)
	}

	newPort := freePortNumber(t)
	if out, code := ctl("reload", "受付", "--set", "kiosk.port="+newPort); code != 0 {
		t.Fatalf("reload --set: exit %d\n%s", code, out)
	}
	c := dialSeat(t, newPort)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("こんにちは\n"))
	if s, _ := bufio.NewReader(c).ReadString('\n'); s != "v2\n" {
		t.Errorf("at the new port: %q", s)
	}
	if out, code := ctl("reload", "受付"); code != 0 || !strings.Contains(out, "running") {
		t.Fatalf("a later plain reload: exit %d\n%s", code, out)
	}
	c2 := dialSeat(t, newPort)
	c2.SetDeadline(time.Now().Add(10 * time.Second))
	c2.Write([]byte("こんにちは\n"))
	if s, _ := bufio.NewReader(c2).ReadString('\n'); s != "v2\n" {
		t.Errorf("the port after a later plain reload: %q", s)
	}
}

// TestCtlNamesAndLayout, on the real binary: seat ctl names what is wrong
// with a command and suggests the right one, and lists behaviors with
// Japanese names in aligned columns with long reasons cut.
func TestCtlNamesAndLayout(t *testing.T) {
	dir := t.TempDir()
	busyPort := busyPort(t)
	write := func(file, name, port string) string {
		p := filepath.Join(dir, file)
		os.WriteFile(p, []byte(`<seatml><general name="`+name+`"><adaptor name="chat" type="socket" role="server" port="`+port+`"/></general><state name="待機"/></seatml>`), 0o644)
		return p
	}
	control := freePort(t)
	startSeat(t, "run", "--control", control, write("a.seatml", "受付", "0"), write("b.seatml", "kiosk", "0"), write("c.seatml", "broken", busyPort))
	ctl := func(args ...string) (string, string, int) { return ctlAt(control, args...) }
	waitFor(t, func() bool {
		out, _, _ := ctl("list")
		return strings.Contains(out, "broken") && strings.Contains(out, "受付")
	})

	if _, errOut, code := ctl("lst"); code != 2 || !strings.Contains(errOut, `unknown command "lst"; did you mean list?`) {
		t.Errorf("seat ctl lst: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := ctl("status"); code != 2 || !strings.Contains(errOut, "seat ctl status NAME (the behaviors: 受付, kiosk, broken)") {
		t.Errorf("seat ctl status: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := ctl("status", "kisok"); code != 1 || !strings.Contains(errOut, `no such behavior: "kisok"; did you mean kiosk?`) {
		t.Errorf("seat ctl status kisok: exit %d\n%s", code, errOut)
	}

	out, _, code := ctl("list")
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	header := lines[0]
	col := displayWidth(header[:strings.Index(header, "STATE")])
	for _, l := range lines[1:4] {
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Fatalf("row %q", l)
		}
		if at := displayWidth(l[:strings.Index(l, f[1])]); at != col {
			t.Errorf("STATE of %q is at column %d, the header's at %d:\n%s", f[0], at, col, out)
		}
		if w := displayWidth(l); w > 160 {
			t.Errorf("row %d columns wide:\n%s", w, l)
		}
	}
	if !strings.Contains(out, "…") || !strings.Contains(out, "\nbroken: failed: 1:") || !strings.Contains(out, "is already in use") {
		t.Errorf("the long reason is not cut in the table and given whole below it:\n%s", out)
	}
}
