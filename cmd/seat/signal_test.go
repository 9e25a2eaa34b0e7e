package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSignalsRunOnExit starts seat as a process, sends it SIGTERM and SIGINT,
// and checks that onexit ran, output was flushed and the status is 0.
func TestSignalsRunOnExit(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.seatml")
			os.WriteFile(path, []byte(`<seatml><general name="sig"><adaptor name="o" type="stdio"/></general>
<state name="a"><onentry><message sendto="o">entered</message></onentry><onexit><message sendto="o">exited</message></onexit></state></seatml>`), 0o644)
			cmd := exec.Command(os.Args[0], "run", path)
			cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
			stdin, _ := cmd.StdinPipe() // kept open: the run must end by the signal
			defer stdin.Close()
			out, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(out)
			if line, err := r.ReadString('\n'); err != nil || line != "entered\n" {
				t.Fatalf("first line %q, %v", line, err)
			}
			cmd.Process.Signal(sig)
			rest := make(chan string, 1)
			go func() {
				line, _ := r.ReadString('\n')
				rest <- line
			}()
			select {
			case got := <-rest:
				if got != "exited\n" {
					t.Errorf("after %v: %q", sig, got)
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatal("seat did not stop")
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit: %v\n%s", err, stderr.String())
			}
		})
	}
}
