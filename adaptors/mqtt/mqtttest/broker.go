// Package mqtttest runs Debian's mosquitto for tests: a real broker on a
// free loopback port, with persistence, stopped and restarted at will. It
// is used by tests only.
package mqtttest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Broker is a running mosquitto.
type Broker struct {
	t    *testing.T
	dir  string
	Port string
	URL  string // tcp://127.0.0.1:PORT
	cmd  *exec.Cmd
	log  *os.File
}

// Options configure a broker.
type Options struct {
	// Users, if set, turns anonymous access off and lets these users in
	// (name to password).
	Users map[string]string
}

// Path finds mosquitto: on PATH, else where Debian puts it. Without it
// the test is skipped, unless SEAT_REQUIRE_TOOLS is set (as .ci/run does):
// then it fails.
func Path(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/mosquitto"); err == nil {
		return "/usr/sbin/mosquitto"
	}
	if os.Getenv("SEAT_REQUIRE_TOOLS") != "" {
		t.Fatal("mosquitto is not installed and SEAT_REQUIRE_TOOLS is set (apt-get install mosquitto)")
	}
	t.Skip("mosquitto is not installed (apt-get install mosquitto)")
	return ""
}

// Start starts a broker on a free loopback port; it stops with the test.
func Start(t *testing.T, opts Options) *Broker {
	t.Helper()
	Path(t) // skips or fails the test when mosquitto is missing
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	dir := t.TempDir()
	conf := []string{
		"listener " + port + " 127.0.0.1",
		"persistence true",
		"persistence_location " + dir + "/",
		"autosave_interval 1",
		"log_dest stderr",
		"log_type error",
		"log_type warning",
		"log_type notice",
		"max_queued_messages 100000",
	}
	if os.Geteuid() == 0 {
		// As root mosquitto would switch to its own user, which cannot
		// read the test's directory; "root" keeps it as it is.
		conf = append(conf, "user root")
	}
	if len(opts.Users) == 0 {
		conf = append(conf, "allow_anonymous true")
	} else {
		pw := filepath.Join(dir, "passwords")
		tool, err := exec.LookPath("mosquitto_passwd")
		if err != nil {
			tool = "/usr/bin/mosquitto_passwd"
		}
		first := true
		for user, pass := range opts.Users {
			args := []string{"-b", pw, user, pass}
			if first {
				args = append([]string{"-c"}, args...)
				first = false
			}
			if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
				t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
			}
		}
		conf = append(conf, "allow_anonymous false", "password_file "+pw)
	}
	if err := os.WriteFile(filepath.Join(dir, "mosquitto.conf"), []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &Broker{t: t, dir: dir, Port: port, URL: "tcp://127.0.0.1:" + port}
	b.Restart()
	t.Cleanup(b.Stop)
	return b
}

// Restart starts the broker again (after Stop) with the same port and
// persistence, and waits until it accepts connections.
func (b *Broker) Restart() {
	b.t.Helper()
	bin := Path(b.t)
	log, err := os.OpenFile(filepath.Join(b.dir, "mosquitto.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		b.t.Fatal(err)
	}
	b.log = log
	b.cmd = exec.Command(bin, "-c", filepath.Join(b.dir, "mosquitto.conf"))
	b.cmd.Stdout, b.cmd.Stderr = log, log
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		b.t.Fatalf("start mosquitto: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+b.Port)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("mosquitto did not listen on %s within 20s:\n%s", b.Port, b.Log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop stops the broker (SIGTERM: it saves its persistent sessions).
func (b *Broker) Stop() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	b.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-done
	}
	b.cmd = nil
	b.log.Close()
}

// Log returns what the broker logged.
func (b *Broker) Log() string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "mosquitto.log"))
	return string(data)
}

// String names the broker in messages.
func (b *Broker) String() string { return fmt.Sprintf("mosquitto on %s", b.URL) }
