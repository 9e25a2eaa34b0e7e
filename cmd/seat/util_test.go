package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds, failing after 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	waitForWithin(t, 10*time.Second, cond)
}

// waitForWithin polls cond until it holds, failing the test after d.
func waitForWithin(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// golden compares got with the golden file at path, or rewrites the file
// with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/seat -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", filepath.Base(path), diff)
	}
}

// dialSeat connects to a seat socket adaptor on 127.0.0.1:port once it
// listens; the connection is closed when the test ends.
func dialSeat(t *testing.T, port string) net.Conn {
	t.Helper()
	var c net.Conn
	waitFor(t, func() bool {
		var err error
		c, err = net.Dial("tcp", "127.0.0.1:"+port)
		return err == nil
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// loggedPort waits until seat has logged an adaptor listening on port 0
// and the line ready, and returns the port.
func loggedPort(t *testing.T, log *syncBuffer, ready string) string {
	t.Helper()
	var port string
	waitFor(t, func() bool {
		_, after, ok := strings.Cut(log.String(), `"addr": "127.0.0.1:`)
		port, _, _ = strings.Cut(after, `"`)
		return ok && strings.Contains(log.String(), ready)
	})
	return port
}

// freePortNumber is freePort's port alone, for --set ADAPTOR.port=N.
func freePortNumber(t *testing.T) string {
	_, port, _ := net.SplitHostPort(freePort(t))
	return port
}

// runBinary runs seat with args as its own process to its end (at most a
// minute), stdin as its standard input, and returns its standard error
// and exit status.
func runBinary(t *testing.T, stdin string, args ...string) (stderr string, code int) {
	t.Helper()
	_, stderr, code = runBinaryIO(t, stdin, args...)
	return stderr, code
}

// runBinaryIO is runBinary that returns standard output too.
func runBinaryIO(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	cmd.Stdin = strings.NewReader(stdin)
	var outb, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("seat %v: %v", args, err)
	}
	return outb.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// busyPort listens on a free loopback port until the test ends and
// returns its number: a port in use.
func busyPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// waitExit waits at most d for cmd, started, to end and returns what
// Wait returned; past d it kills the process and fails the test with what
// it wrote to stderr (if given).
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration, stderr *syncBuffer) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		cmd.Process.Kill()
		out := ""
		if stderr != nil {
			out = stderr.String()
		}
		t.Fatalf("seat %v did not end within %v\n%s", cmd.Args[1:], d, out)
		return nil
	}
}

// startSeat runs seat with args as its own process (this test binary runs
// main when SEAT_TEST_MAIN is set) and returns it with its standard error;
// it is stopped with SIGTERM when the test ends.
func startSeat(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	return startSeatIn(t, "", args...)
}

// startSeatIn is startSeat in the working directory dir ("": this one).
func startSeatIn(t *testing.T, dir string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	exe, err := os.Executable() // absolute: dir may be elsewhere
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait() // an error if the test waited already: nothing to do
	})
	return cmd, stderr
}

// talker is a peer of a seat process over TCP: it says lines and checks
// the lines it hears, each within 10 s.
type talker struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func talk(t *testing.T, port string) *talker {
	t.Helper()
	c := dialSeat(t, port)
	return &talker{t, c, bufio.NewReader(c)}
}

func (p *talker) say(text string) {
	p.t.Helper()
	p.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := p.c.Write([]byte(text + "\n")); err != nil {
		p.t.Fatalf("saying %q: %v", text, err)
	}
}

func (p *talker) hear(want string) {
	p.t.Helper()
	p.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := p.r.ReadString('\n')
	if got = strings.TrimSuffix(got, "\n"); got != want || err != nil {
		p.t.Fatalf("heard %q (%v), want %q", got, err, want)
	}
}

// ctlOK runs seat ctl against the control API at control, failing the
// test unless it exits 0; it returns what it printed.
func ctlOK(t *testing.T, control string, args ...string) string {
	t.Helper()
	out, errOut, code := ctlAt(control, args...)
	if code != 0 {
		t.Fatalf("seat ctl %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}
