// Package omnitest runs Debian's omniORB for tests: a real omniNames on a
// free loopback port with its own data directory, omniORB's tools
// (nameclt, catior) pointed at it, and C++ programs built with omniidl and
// g++ against libomniorb4-dev. It is used by tests only.
//
// Without the tools, tests skip with a note saying what to install;
// with CI=true or SEAT_REQUIRE_TOOLS=1 they fail instead (.ci/run
// installs them).
package omnitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Packages are Debian's packages the tests need.
const Packages = "omniorb omniorb-nameserver omniidl libomniorb4-dev g++"

// RequireTools skips a test that needs what this machine lacks (why),
// or fails it when CI=true or SEAT_REQUIRE_TOOLS=1.
func RequireTools(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" || os.Getenv("SEAT_REQUIRE_TOOLS") == "1" {
		t.Fatalf("%s, and CI or SEAT_REQUIRE_TOOLS requires it (apt-get install %s)", why, Packages)
	}
	t.Skipf("%s; install Debian's %s", why, Packages)
}

// Tool returns the path of one of omniORB's programs (omniNames,
// nameclt, catior, omniidl), or skips or fails the test (RequireTools).
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		RequireTools(t, name+" is not installed")
	}
	return p
}

// NameServer is a running omniNames.
type NameServer struct {
	Port int
	Addr string // 127.0.0.1:PORT
	// Corbaloc is its root context's address,
	// corbaloc::127.0.0.1:PORT/NameService.
	Corbaloc string
	dir      string
	t        testing.TB
	cmd      *exec.Cmd
	out      *syncBuffer
	exited   chan struct{}
}

// StartNameServer starts omniNames on a free loopback port, with its
// data in a directory of the test's; it is killed when the test ends. A
// port taken by another process between choosing it and omniNames binding
// it (tests run side by side) makes omniNames exit: another port is
// tried, three in all.
func StartNameServer(t testing.TB) *NameServer {
	t.Helper()
	Tool(t, "omniNames")
	Tool(t, "nameclt")
	ns := &NameServer{dir: t.TempDir(), t: t}
	t.Cleanup(ns.Stop)
	for try := 1; ; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ns.Port = l.Addr().(*net.TCPAddr).Port
		l.Close()
		ns.Addr = fmt.Sprintf("127.0.0.1:%d", ns.Port)
		ns.Corbaloc = "corbaloc::" + ns.Addr + "/NameService"
		err = ns.start(true)
		if err == nil {
			return ns
		}
		if try == 3 {
			t.Fatal(err)
		}
		t.Logf("omniNames on %s: %v; another port", ns.Addr, err)
	}
}

// start runs omniNames; fresh starts it with empty data (-start -always),
// otherwise it reads the data it wrote before. It returns once omniNames
// answers as the naming service (nameclt lists its root: listening is not
// enough, the root context comes after), or why it did not.
func (ns *NameServer) start(fresh bool) error {
	ns.t.Helper()
	args := []string{"-datadir", ns.dir, "-ORBendPoint", fmt.Sprintf("giop:tcp:127.0.0.1:%d", ns.Port)}
	if fresh {
		args = append([]string{"-start", fmt.Sprint(ns.Port), "-always"}, args...)
	}
	ns.cmd = exec.Command("omniNames", args...)
	ns.cmd.Env = Env()
	ns.out = &syncBuffer{}
	ns.cmd.Stdout, ns.cmd.Stderr = ns.out, ns.out
	if err := ns.cmd.Start(); err != nil {
		ns.t.Fatal(err)
	}
	ns.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { _ = cmd.Wait(); close(exited) }(ns.cmd, ns.exited)
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-ns.exited:
			ns.cmd = nil
			return fmt.Errorf("omniNames exited: %s", ns.out.String())
		default:
		}
		if out, err := ns.Run(ns.t, "nameclt", "list"); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("omniNames did not answer on %s within 20 s: nameclt list: %v: %s\nomniNames: %s", ns.Addr, err, out, ns.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills omniNames (a test may start it again with Restart).
func (ns *NameServer) Stop() {
	if ns.cmd == nil {
		return
	}
	_ = ns.cmd.Process.Kill()
	<-ns.exited
	ns.cmd = nil
}

// Restart kills omniNames if it runs and starts it again on the same port
// with the same data, as after a crash.
func (ns *NameServer) Restart() {
	ns.t.Helper()
	ns.Stop()
	if err := ns.start(false); err != nil {
		ns.t.Fatal(err)
	}
}

// RestartEmpty kills omniNames and starts it again on the same port
// with no data: every binding is gone, as for a naming service started
// afresh.
func (ns *NameServer) RestartEmpty() {
	ns.t.Helper()
	ns.Stop()
	files, _ := filepath.Glob(filepath.Join(ns.dir, "*"))
	for _, f := range files {
		os.Remove(f)
	}
	if err := ns.start(true); err != nil {
		ns.t.Fatal(err)
	}
}

// Env is the environment for omniORB programs: the system's, with an
// empty configuration file so that /etc/omniORB.cfg's InitRef does not
// count.
func Env() []string {
	return append(os.Environ(), "OMNIORB_CONFIG=/dev/null")
}

// Nameclt runs Debian's nameclt against ns with args ("list",
// "resolve", "host.host_cxt/Foo0.rtc") and returns its output; it fails
// the test when nameclt fails.
func (ns *NameServer) Nameclt(t testing.TB, args ...string) string {
	t.Helper()
	out, err := ns.Run(t, Tool(t, "nameclt"), args...)
	if err != nil {
		t.Fatalf("nameclt %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Run runs an omniORB program with -ORBInitRef NameService=ns's
// corbaloc (after args) within 30 s, and returns its output.
func (ns *NameServer) Run(t testing.TB, prog string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args = append(args, "-ORBInitRef", "NameService="+ns.Corbaloc)
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = Env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// Catior runs Debian's catior on a stringified IOR and returns what it
// prints; it fails the test when catior fails.
func Catior(t testing.TB, ior string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Tool(t, "catior"), ior)
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("catior: %v\n%s", err, out)
	}
	return string(out)
}

// RequireBuildTools skips or fails (RequireTools) a test that builds C++
// programs against omniORB when omniidl, g++ or omniORB's headers are
// missing.
func RequireBuildTools(t testing.TB) {
	t.Helper()
	Tool(t, "omniidl")
	Tool(t, "g++")
	if _, err := os.Stat("/usr/include/omniORB4/CORBA.h"); err != nil {
		RequireTools(t, "omniORB's headers (/usr/include/omniORB4/CORBA.h) are not installed")
	}
}

// Build compiles a C++ program against omniORB into dir: omniidl -bcxx
// on each IDL file, then g++ on the sources and the stubs, linked with
// omniORB and its Dynamic library (for Any). It returns
// the program's path. Call RequireBuildTools first.
func Build(dir, name string, idls, sources []string) (string, error) {
	var srcs []string
	for _, idl := range idls {
		abs, err := filepath.Abs(idl)
		if err != nil {
			return "", err
		}
		if out, err := runIn(dir, "omniidl", "-bcxx", "-Wbh=.hh", "-Wbs=SK.cc", abs); err != nil {
			return "", fmt.Errorf("omniidl %s: %v\n%s", idl, err, out)
		}
		srcs = append(srcs, filepath.Join(dir, strings.TrimSuffix(filepath.Base(idl), ".idl")+"SK.cc"))
	}
	for _, s := range sources {
		abs, err := filepath.Abs(s)
		if err != nil {
			return "", err
		}
		srcs = append(srcs, abs)
	}
	bin := filepath.Join(dir, name)
	args := append([]string{"-O1", "-o", bin, "-I", dir}, srcs...)
	args = append(args, "-lomniDynamic4", "-lomniORB4", "-lomnithread", "-lpthread")
	if out, err := runIn(dir, "g++", args...); err != nil {
		return "", fmt.Errorf("g++ %s: %v\n%s", name, err, out)
	}
	return bin, nil
}

func runIn(dir, prog string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Process is a program started with Start.
type Process struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	stdin  io.WriteCloser
	exited chan struct{}
	err    error
}

// Start runs a program (with Env) until the test ends, and waits until
// it prints a line starting with ready (when ready is not empty); it
// fails the test after 30 s.
func Start(t testing.TB, ready, prog string, args ...string) *Process {
	t.Helper()
	p := &Process{cmd: exec.Command(prog, args...), out: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Env = Env()
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.exited })
	if ready == "" {
		return p
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, ok := p.Line(ready); ok {
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before it was ready: %v\n%s", prog, p.err, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within 30 s:\n%s", prog, p.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Send writes a line to the program's standard input.
func (p *Process) Send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("writing to %s: %v", p.cmd.Path, err)
	}
}

// Signal sends the program a signal (SIGSTOP makes a peer that takes
// connections and never answers).
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill kills the program and waits for it to exit.
func (p *Process) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // a stopped program dies at once
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// WaitLines returns the program's output lines that start with prefix
// (without it) once there are n of them, or fails the test after 10 s.
func (p *Process) WaitLines(t testing.TB, prefix string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := p.Lines(prefix)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lines starting %q within 10 s, want %d; output:\n%s", len(got), prefix, n, p.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Lines returns the output lines so far that start with prefix,
// without it.
func (p *Process) Lines(prefix string) []string {
	var got []string
	for _, l := range strings.Split(p.out.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			got = append(got, rest)
		}
	}
	return got
}

// Pid is the program's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// CPU is the processor time the program has used so far, user and
// system, from /proc (in clock ticks of 10 ms).
func (p *Process) CPU(t testing.TB) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// After the command name in parentheses: state, then fields 4 to 52
	// of proc(5); utime and stime are fields 14 and 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/stat: %v", p.cmd.Process.Pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// Output is everything the program printed so far.
func (p *Process) Output() string { return p.out.String() }

// Line returns the first line of the output that starts with prefix,
// without the prefix.
func (p *Process) Line(prefix string) (string, bool) {
	for _, l := range strings.Split(p.out.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// syncBuffer is a bytes.Buffer a process writes while a test reads.
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
