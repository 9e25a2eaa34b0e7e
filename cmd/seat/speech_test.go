package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/speech/speechtest"
)

// TestSpeechOnTheRealBinary: the English kiosk on the real binary speaks
// each answer into a WAV file, in order, and prints what it said once the
// voice has finished; when its standard input ends, the run ends once
// the voice has said everything; sox finds speech of a plausible length
// in each file.
func TestSpeechOnTheRealBinary(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "sox")
	dir := t.TempDir()
	example, err := filepath.Abs("../../examples/speech/kiosk-voice.seatml")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "run", example)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("seat logged:\n%s", stderr.String())
		}
	})
	said := func() []string {
		var out []string
		for _, l := range strings.Split(stdout.String(), "\n") {
			if s, ok := strings.CutPrefix(l, "said: "); ok {
				out = append(out, s)
			}
		}
		return out
	}
	io.WriteString(stdin, "hello\n")
	waitForWithin(t, 30*time.Second, func() bool { return len(said()) == 1 })
	io.WriteString(stdin, "tickets\nbye\n")
	stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("seat exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("seat did not end within 30 s of the end of its input")
	}
	want := []string{"Welcome to the museum. Say tickets, map, or help.", "Tickets are twelve euros, and free for children.",
		"Goodbye, and thank you for visiting."}
	if got := said(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("said %q, want %q", got, want)
	}
	for i, text := range want {
		file := filepath.Join(dir, "voice-out", "kiosk-"+strconv.Itoa(i+1)+".wav")
		out, err := exec.Command("sox", "--i", "-D", file).Output()
		if err != nil {
			t.Fatalf("sox --i -D %s: %v", file, err)
		}
		secs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		// About 0.15 to 0.6 s a word, at speed 0.9.
		words := float64(len(strings.Fields(text)))
		if err != nil || secs < 0.15*words || secs > 0.6*words {
			t.Errorf("%s (%q): %v s of sound (%v), want %.1f to %.1f", file, text, secs, err, 0.15*words, 0.6*words)
		}
		// sox's stat writes to standard error.
		stat, _ := exec.Command("sox", file, "-n", "stat").CombinedOutput()
		var rms float64
		for _, l := range strings.Split(string(stat), "\n") {
			if v, ok := strings.CutPrefix(l, "RMS     amplitude:"); ok {
				rms, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
			}
		}
		if rms < 0.01 {
			t.Errorf("%s: RMS amplitude %v, silence:\n%s", file, rms, stat)
		}
	}
}

// TestSpeechMissingEngine: on a machine without the engine, seat check
// fails and names the Debian package to install; seat test, which stands
// in for the voice, passes.
func TestSpeechMissingEngine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	want := `kiosk-voice.seatml:14:5: adaptor "voice": espeak-ng is not installed on this machine (Debian: apt-get install espeak-ng)`
	_, stderr, code := runSeat("check", "../../examples/speech/kiosk-voice.seatml")
	if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "warning: adaptor") {
		t.Errorf("seat check: exit %d, want 1 and %q:\n%s", code, want, stderr)
	}
	stdout, stderr, code := runSeat("test", "../../examples/speech/kiosk-voice.seattest")
	if code != 0 || !strings.HasPrefix(stdout, "ok ") {
		t.Errorf("seat test: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
