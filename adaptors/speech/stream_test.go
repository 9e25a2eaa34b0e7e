package speech

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/speech/speechtest"
)

// toPipe writes a WAV file to the named pipe as a 16 kHz mono WAV stream
// (sox's), with a second of silence after it, as a recorder would.
func toPipe(t *testing.T, file, pipe string, args ...string) {
	t.Helper()
	if len(args) == 0 {
		args = []string{"-r", "16000", "-c", "1", "-b", "16"}
	}
	cmd := exec.Command("sox", append(append([]string{file}, args...), "-t", "wav", pipe, "pad", "0", "1")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sox to the pipe: %v\n%s", err, out)
	}
}

// TestHearsAPipe: speech written to a named pipe, one writer after
// another, is cut into utterances and heard against the keys; a stream
// in another format is refused with a log line naming it, and the next
// writer is heard.
func TestHearsAPipe(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "sox", decoder)
	dir := t.TempDir()
	pipe := filepath.Join(dir, "voice.pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	a, events, logs := openASR(t, map[string]string{"input": pipe}, kioskKeys)
	a.ActiveChanged("attract", []string{"attract"})
	if err := a.Open(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	say(t, filepath.Join(dir, "hello.wav"), "hello")
	toPipe(t, filepath.Join(dir, "hello.wav"), pipe)
	if got := events.waitEvents(t, 1); !strings.HasPrefix(got[0], "ear: hello,") {
		t.Errorf("heard %q", got)
	}
	toPipe(t, filepath.Join(dir, "hello.wav"), pipe, "-r", "22050", "-c", "2")
	a.ActiveChanged("menu", []string{"menu"})
	say(t, filepath.Join(dir, "tickets.wav"), "tickets")
	toPipe(t, filepath.Join(dir, "tickets.wav"), pipe)
	if got := events.waitEvents(t, 2); len(got) != 2 || !strings.HasPrefix(got[1], "ear: tickets,") {
		t.Errorf("heard %q", got)
	}
	refused := logs.FilterMessageSnippet("pipe not heard").All()
	if len(refused) != 1 || !strings.Contains(refused[0].Message, "22050 Hz stereo") || a.Stats().Dropped != 1 {
		t.Errorf("stats %+v, log %v", a.Stats(), logs.All())
	}
}

// TestPipeClosedWhileWaiting: a recognizer waiting for the pipe's first
// writer stops when closed.
func TestPipeClosedWhileWaiting(t *testing.T) {
	speechtest.Require(t, decoder)
	pipe := filepath.Join(t.TempDir(), "voice.pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	a, events, _ := openASR(t, map[string]string{"input": pipe}, kioskKeys)
	if err := a.Open(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { a.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for a writer")
	}
}

// TestNoMicrophone: a microphone that cannot be opened is a log line
// naming the recorder's complaint, tried again; the recognizer stops
// when closed.
func TestNoMicrophone(t *testing.T) {
	speechtest.Require(t, "sox", decoder)
	a, events, logs := openASR(t, map[string]string{"input": "mic", "device": "seat-test-no-such-device"}, kioskKeys)
	if err := a.Open(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for logs.FilterMessage("the microphone cannot be heard; trying again").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no log line within 30 s: %v", logs.All())
		}
		time.Sleep(10 * time.Millisecond)
	}
	e := logs.FilterMessage("the microphone cannot be heard; trying again").All()[0].ContextMap()
	if e["device"] != "seat-test-no-such-device" || !strings.Contains(e["error"].(string), "exit status") {
		t.Errorf("log %v", e)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBargeIn: speech heard while the voice speaks ends its turn: the
// utterance being spoken and the one queued behind it are told
// interrupted, what was heard arrives, and the voice speaks what comes
// next.
func TestBargeIn(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "sox", decoder)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	voice, spoken, _ := open(t, map[string]string{"wav": filepath.Join(dir, "out-{n}.wav"), "realtime": "on"})
	core, logs := observer.New(zap.InfoLevel)
	ear, err := newASR(adaptors.Config{Name: "ear", Type: "asr", Attrs: map[string]string{"input": in, "bargein": "voice"},
		Log: zap.New(core), Keys: kioskKeys, Peer: func(name string) adaptors.Adaptor {
			if name == "voice" {
				return voice
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	heard := &sink{}
	ear.(*asr).ActiveChanged("attract", []string{"attract"})
	if err := ear.Open(context.Background(), heard); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ear.Close() })
	long := "Welcome to the museum. Our exhibitions cover three thousand years of history, on four floors."
	voice.Send(long)
	voice.Send("Say tickets, map, or help.")
	spoken.waitEvents(t, 1) // speaking: it lasts the sound's five seconds
	say(t, filepath.Join(dir, "hello.wav"), "hello")
	os.MkdirAll(in, 0o755)
	os.Rename(filepath.Join(dir, "hello.wav"), filepath.Join(in, "1.wav"))
	if got := heard.waitEvents(t, 1); !strings.HasPrefix(got[0], "ear: hello,") {
		t.Errorf("heard %q", got)
	}
	got := spoken.waitEvents(t, 3)
	if got[1] != "voice: interrupted,"+long || got[2] != "voice: interrupted,Say tickets, map, or help." {
		t.Errorf("voice %q", got)
	}
	voice.Send("Hello!")
	if got := spoken.waitEvents(t, 5); got[3] != "voice: speaking,Hello!" || got[4] != "voice: done,Hello!" {
		t.Errorf("after barge-in, voice %q", got)
	}
	if logs.FilterMessageSnippet("barge-in").Len() != 1 {
		t.Errorf("log %v", logs.All())
	}
	// Speech while the voice is silent cuts nothing.
	say(t, filepath.Join(dir, "hi.wav"), "hi")
	os.Rename(filepath.Join(dir, "hi.wav"), filepath.Join(in, "2.wav"))
	heard.waitEvents(t, 2)
	if n := logs.FilterMessageSnippet("barge-in").Len(); n != 1 || len(spoken.events()) != 5 {
		t.Errorf("barge-in with nothing spoken: %d log lines, voice %q", n, spoken.events())
	}
}
