// Package rostest runs Debian's ROS 1 for tests: a real rosmaster on a
// free loopback port with its own ROS_HOME, and the environment the ROS
// tools (rostopic, rosservice, rospy under /usr/bin/python3) need to
// reach it. It is used by tests only.
package rostest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireTools skips a test that needs Debian's ROS packages this machine
// lacks, or fails it under SEAT_REQUIRE_TOOLS=1 (CI installs them).
func RequireTools(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("SEAT_REQUIRE_TOOLS") == "1" {
		t.Fatalf("%s, and SEAT_REQUIRE_TOOLS is set (.ci/run installs Debian's ROS packages)", why)
	}
	t.Skipf("%s; install Debian's ROS 1 packages (docs/ros.md)", why)
}

// Master is a running rosmaster.
type Master struct {
	Addr string   // 127.0.0.1:PORT
	URI  string   // http://127.0.0.1:PORT
	Env  []string // for ROS tools: ROS_MASTER_URI, ROS_IP, ROS_HOME
	port int
	home string
	t    testing.TB
	stop func()
}

// Start starts a rosmaster on a free port; it is stopped when the test
// ends.
func Start(t testing.TB) *Master {
	t.Helper()
	if _, err := exec.LookPath("rosmaster"); err != nil {
		RequireTools(t, "rosmaster is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	m := &Master{Addr: fmt.Sprintf("127.0.0.1:%d", port), port: port, home: t.TempDir(), t: t}
	m.URI = "http://" + m.Addr
	m.Env = append(os.Environ(), "ROS_MASTER_URI="+m.URI, "ROS_IP=127.0.0.1", "ROS_HOME="+m.home)
	m.Restart()
	t.Cleanup(m.Stop)
	return m
}

// Stop stops the master (a test may start it again with Restart).
func (m *Master) Stop() {
	if m.stop != nil {
		m.stop()
		m.stop = nil
	}
}

// Restart starts the master again on the same port, and waits until it
// listens.
func (m *Master) Restart() {
	m.t.Helper()
	m.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "rosmaster", "--core", "-p", fmt.Sprint(m.port))
	cmd.Env = m.Env
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.stop = func() { cancel(); _ = cmd.Wait() }
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", m.Addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("rosmaster did not listen on %s within 20 s: %s", m.Addr, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Command returns a ROS tool's command (rostopic, rosservice…) bound to
// ctx, with this master's environment.
func (m *Master) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = m.Env
	return cmd
}

// EchoOne runs rostopic echo -n 1 on topic, calling send every 100 ms
// until it has printed one message (a subscriber's connection takes a
// moment), and returns what it printed. It fails the test after 30 s.
func (m *Master) EchoOne(t testing.TB, topic string, send func()) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	echo := m.Command(ctx, "rostopic", "echo", "-n", "1", "/"+topic)
	var out bytes.Buffer
	echo.Stdout, echo.Stderr = &out, &out
	if err := echo.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- echo.Wait() }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("rostopic echo: %v\n%s", err, out.String())
			}
			return out.String()
		case <-tick.C:
			send()
		}
	}
}

// Publish runs rostopic pub -r 5 TOPIC TYPE VALUE until the test ends.
// The function it returns stops it and returns what it printed (for a
// failure message).
func (m *Master) Publish(t testing.TB, topic, typ, value string) (stop func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pub := m.Command(ctx, "rostopic", "pub", "-r", "5", "/"+topic, typ, value)
	var out bytes.Buffer
	pub.Stdout, pub.Stderr = &out, &out
	if err := pub.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() string {
		once.Do(func() { cancel(); _ = pub.Wait() })
		return out.String()
	}
	t.Cleanup(func() { stop() })
	return stop
}

//go:embed peers.py
var peers []byte

// Peer runs one of the rospy peers of peers.py (mode and its arguments)
// under /usr/bin/python3 until the test ends. A serving peer is waited
// for until it prints "ready". The function it returns waits for the
// peer to end and returns what it printed; it fails the test after 30 s.
func (m *Master) Peer(t testing.TB, mode string, args ...string) (wait func() string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "peers.py")
	if err := os.WriteFile(file, peers, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := m.Command(ctx, "/usr/bin/python3", append([]string{file, mode}, args...)...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	if strings.HasPrefix(mode, "serve_") {
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(out.String(), "ready") {
			select {
			case <-done:
				t.Fatalf("peer %s ended: %s", mode, out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("peer %s not ready within 30 s: %s", mode, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return func() string {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("peer %s did not end within 30 s: %s", mode, out.String())
		}
		return out.String()
	}
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
