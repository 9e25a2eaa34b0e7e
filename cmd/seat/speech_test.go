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

// TestListenAndSpeakOnTheRealBinary: the talking kiosk on the real
// binary: espeak-ng speaks a visitor's phrase into a WAV file in its
// input directory, pocketsphinx hears it against the current state's
// keys, the rule fires, and the voice answers into a WAV file of a
// plausible length; a phrase outside the keys is rejected and answered
// with a request to say it again.
func TestListenAndSpeakOnTheRealBinary(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "sox", "pocketsphinx_continuous")
	dir := t.TempDir()
	example, err := filepath.Abs("../../examples/speech/kiosk-talk.seatml")
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "talk.jsonl")
	cmd := exec.Command(os.Args[0], "run", "--record", rec, example)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	cmd.Dir = dir
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			t.Logf("seat logged:\n%s", stderr.String())
		}
	})
	waitForWithin(t, 30*time.Second, func() bool { return strings.Contains(stderr.String(), `"to": "attract"`) })
	answers := []struct{ said, answer string }{
		{"hello", "Welcome to the museum. Say tickets, map, or help."},
		{"how much does the ticket cost", "Sorry, please say that again."},
		{"tickets", "Tickets are twelve euros, and free for children."},
	}
	for i, a := range answers {
		in := filepath.Join(dir, "voice-in", strconv.Itoa(i+1)+".wav")
		tmp := filepath.Join(dir, "visitor.wav")
		if out, err := exec.Command("espeak-ng", "-v", "en-us", "-s", "160", "-w", tmp, a.said).CombinedOutput(); err != nil {
			t.Fatalf("espeak-ng: %v\n%s", err, out)
		}
		if err := os.Rename(tmp, in); err != nil {
			t.Fatal(err)
		}
		// The answer is sent to the voice (the recording says), then
		// spoken into its file.
		want := `"kind":"out","behavior":"kiosk-talk","source":"voice","text":` + strconv.Quote(a.answer)
		waitForWithin(t, 30*time.Second, func() bool {
			b, _ := os.ReadFile(rec)
			return strings.Count(string(b), `"kind":"out"`) == i+1
		})
		if b, _ := os.ReadFile(rec); !strings.Contains(string(b), want) {
			t.Fatalf("%q: not answered %q; the recording:\n%s", a.said, a.answer, b)
		}
		out := filepath.Join(dir, "voice-out", "kiosk-talk-"+strconv.Itoa(i+1)+".wav")
		// Speech of a plausible length: about 0.15 to 0.6 s a word.
		var secs float64
		waitForWithin(t, 10*time.Second, func() bool {
			o, err := exec.Command("sox", "--i", "-D", out).Output()
			secs, _ = strconv.ParseFloat(strings.TrimSpace(string(o)), 64)
			return err == nil && secs > 0
		})
		words := float64(len(strings.Fields(a.answer)))
		if secs < 0.15*words || secs > 0.6*words {
			t.Errorf("%q answered with %v s of sound, want %q (%.1f to %.1f s)", a.said, secs, a.answer, 0.15*words, 0.6*words)
		}
	}
	if !strings.Contains(stderr.String(), "speech rejected") || !strings.Contains(stderr.String(), `"to": "menu"`) {
		t.Errorf("no rejection or no move to menu in the log")
	}
}

// TestASRKeysChecked: seat check warns of a key a recognizer cannot
// listen for (a pattern that matches too much, a word its dictionary does
// not have), at the key; the file still checks.
func TestASRKeysChecked(t *testing.T) {
	speechtest.Require(t, "pocketsphinx_continuous")
	file := filepath.Join(t.TempDir(), "ear.seatml")
	os.WriteFile(file, []byte(`<seatml><general name="ear"><adaptor name="ear" type="asr" input="in"/></general>
<state name="s">
  <rule source="ear"><key>tickets?</key><key>num\d+</key><key>zyxqwv</key><key>rejected</key></rule>
</state></seatml>`), 0o644)
	_, stderr, code := runSeat("check", file)
	for _, want := range []string{
		`ear.seatml:3:46: warning: key "num\\d+" cannot be listened for by adaptor "ear": [0-9]+ matches too many texts to be words`,
		`ear.seatml:3:63: warning: key "zyxqwv" cannot be listened for by adaptor "ear": the dictionary has no word "zyxqwv"`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %s in\n%s", want, stderr)
		}
	}
	if code != 0 || strings.Count(stderr, "warning") != 2 {
		t.Errorf("exit %d, want 0 and two warnings:\n%s", code, stderr)
	}
}
