package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startLuaBehavior writes a behavior with a socket server on a port the
// system picks and the given rules, runs it on the real binary, and
// returns the process, its log and the address it listens on.
func startLuaBehavior(t *testing.T, rules string, args ...string) (*syncBuffer, func() error, func(), string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "limits.seatml")
	os.WriteFile(path, []byte(`<seatml><general name="limits"><adaptor name="chat" type="socket" role="server" port="0"/>`+rules+`</general><state name="s"/></seatml>`), 0o644)
	cmd, stderr := startSeat(t, append(append([]string{"run"}, args...), path)...)
	addrRE := regexp.MustCompile(`"addr": ?"(127\.0\.0\.1:\d+)"`)
	var addr string
	waitFor(t, func() bool {
		m := addrRE.FindStringSubmatch(stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	wait := func() error { return waitExit(t, cmd, 15*time.Second, stderr) }
	term := func() { cmd.Process.Signal(syscall.SIGTERM) }
	return stderr, wait, term, addr
}

// peer is a connection to the behavior and a reader of its lines.
type peer struct {
	net.Conn
	r *bufio.Reader
}

func dialPeer(t *testing.T, addr string) *peer {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &peer{c, bufio.NewReader(c)}
}

// line reads the next line within d.
func (p *peer) line(t *testing.T, d time.Duration) string {
	t.Helper()
	p.SetReadDeadline(time.Now().Add(d))
	s, err := p.r.ReadString('\n')
	if err != nil {
		t.Fatalf("no line within %v: %v (got %q)", d, err, s)
	}
	return strings.TrimSuffix(s, "\n")
}

// TestLongLineThroughGsubOnTheRealBinary: a peer sends a 65,000-character
// line that the behavior escapes with gsub, and another peer's ping is
// answered at once. Before, gopher-lua's gsub rebuilt the whole string for
// each of the 65,000 matches: the behavior stalled for 8-19 s, for all its
// peers, and the script was then stopped at the time limit.
func TestLongLineThroughGsubOnTheRealBinary(t *testing.T) {
	stderr, _, _, addr := startLuaBehavior(t, `
<rule source="chat"><key>^ping$</key><script>seat.reply("pong")</script></rule>
<rule source="chat"><key>^&lt;</key><script>local s, n = event.text:gsub("&lt;", "&amp;lt;") seat.reply(#s .. " " .. n)</script></rule>`)
	a, b := dialPeer(t, addr), dialPeer(t, addr)
	b.Write([]byte("ping\n")) // both connected and answered before the long line
	if got := b.line(t, 10*time.Second); got != "pong" {
		t.Fatalf("ping: %q", got)
	}
	start := time.Now()
	a.Write([]byte(strings.Repeat("<", 65000) + "\n"))
	b.Write([]byte("ping\n"))
	if got := b.line(t, 30*time.Second); got != "pong" {
		t.Fatalf("ping: %q", got)
	}
	took := time.Since(start)
	if got := a.line(t, 30*time.Second); got != "260000 65000" {
		t.Errorf("the long line: %q\n%s", got, stderr.String())
	}
	// Milliseconds here; generous for a loaded machine, and well under
	// the 8 s it took at the least before.
	if took > 3*time.Second {
		t.Errorf("the other peer was answered after %v", took)
	}
	if strings.Contains(stderr.String(), "time limit") {
		t.Errorf("a script was stopped:\n%s", stderr.String())
	}
}

// TestSIGTERMStopsAScriptAtOnce: with a script time limit of a minute,
// SIGTERM stops the script under way at once (the time limit is not
// waited for), then the stop sequence runs and seat exits 0. Before, it
// waited for the limit: a minute.
func TestSIGTERMStopsAScriptAtOnce(t *testing.T) {
	for name, script := range map[string]string{
		"a library call": `return string.rep("a", 20000):find("a-a-a-b")`, // before: minutes, whatever the limit
		"a Lua loop":     `while true do end`,
	} {
		t.Run(name, func(t *testing.T) {
			stderr, wait, term, addr := startLuaBehavior(t, `
<rule source="chat"><key>^search$</key><script>seat.log("info", "searching") `+script+`</script></rule>`, "--script-timeout", "60s")
			p := dialPeer(t, addr)
			p.Write([]byte("search\n"))
			waitFor(t, func() bool { return strings.Contains(stderr.String(), "searching") })
			start := time.Now()
			term()
			if err := wait(); err != nil {
				t.Errorf("exit: %v\n%s", err, stderr.String())
			}
			if took := time.Since(start); took > 8*time.Second {
				t.Errorf("seat ended %v after SIGTERM, with a script limit of 60 s", took)
			}
			if !strings.Contains(stderr.String(), "script stopped: seat is stopping") {
				t.Errorf("the script was not said to be stopped for the stop:\n%s", stderr.String())
			}
		})
	}
}
