package speech

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/speech/speechtest"
	"github.com/seatml/seat/adaptors/speech/wav"
)

// sink collects what an adaptor delivers.
type sink struct {
	mu  sync.Mutex
	evs []string
}

func (s *sink) Deliver(_ context.Context, ev adaptors.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, ev.Source+": "+ev.Text)
	return nil
}

func (s *sink) EndOfInput(string) {}

func (s *sink) events() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.evs...)
}

// waitEvents waits until n events have come, or fails the test.
func (s *sink) waitEvents(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if evs := s.events(); len(evs) >= n {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events within 30 s, want %d: %q", len(s.events()), n, s.events())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func open(t *testing.T, attrs map[string]string) (*tts, *sink, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	a, err := newTTS(adaptors.Config{Name: "voice", Type: "tts", Attrs: attrs, Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	if err := a.Open(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a.(*tts), s, logs
}

// TestSpeaksToWAVFilesInOrder: English with espeak-ng and Japanese with
// open_jtalk go to numbered WAV files holding speech of a plausible
// length, and the behavior is told when each starts and ends, in order.
func TestSpeaksToWAVFilesInOrder(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "open_jtalk")
	dir := t.TempDir()
	en, enEvents, _ := open(t, map[string]string{"lang": "en", "wav": filepath.Join(dir, "en-{n}.wav")})
	ja, jaEvents, _ := open(t, map[string]string{"lang": "ja", "wav": filepath.Join(dir, "ja-{n}.wav")})
	en.Send("Welcome. Say tickets, map, or help.")
	en.Send("Goodbye.")
	ja.Send("こんにちは。受付ロボットです。ご用件をどうぞ。")
	want := []string{"voice: speaking,Welcome. Say tickets, map, or help.", "voice: done,Welcome. Say tickets, map, or help.",
		"voice: speaking,Goodbye.", "voice: done,Goodbye."}
	if got := enEvents.waitEvents(t, 4); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events %q, want %q", got, want)
	}
	if got := jaEvents.waitEvents(t, 2); got[1] != "voice: done,こんにちは。受付ロボットです。ご用件をどうぞ。" {
		t.Errorf("events %q", got)
	}
	for _, c := range []struct {
		file     string
		min, max time.Duration
	}{{"en-1.wav", 1500 * time.Millisecond, 6 * time.Second}, {"en-2.wav", 300 * time.Millisecond, 2 * time.Second},
		{"ja-1.wav", 2500 * time.Millisecond, 9 * time.Second}} {
		w, err := wav.Read(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if d := w.Duration(); d < c.min || d > c.max {
			t.Errorf("%s: %v of sound, want %v to %v", c.file, d, c.min, c.max)
		}
		if w.RMS() < 0.01 {
			t.Errorf("%s: silence (RMS %.4f)", c.file, w.RMS())
		}
	}
}

// TestSynthesizerKilled: an engine killed mid-utterance costs that
// utterance a log line and an "interrupted" event; the next is spoken.
func TestSynthesizerKilled(t *testing.T) {
	speechtest.Require(t, "espeak-ng")
	dir := t.TempDir()
	a, events, logs := open(t, map[string]string{"wav": filepath.Join(dir, "{n}.wav")})
	long := strings.Repeat("This sentence is here to keep the synthesizer busy for a while. ", 400)
	a.Send(long)
	a.Send("Still here.")
	events.waitEvents(t, 1) // speaking the long one
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 {
		pid = speechtest.Child(t, "espeak-ng")
		if time.Now().After(deadline) {
			t.Fatal("no espeak-ng child within 10 s")
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got := events.waitEvents(t, 4)
	if got[1] != "voice: interrupted,"+long || got[3] != "voice: done,Still here." {
		t.Errorf("events %.80q", got)
	}
	if n := logs.FilterMessage("utterance failed").Len(); n != 1 {
		t.Errorf("%d log lines for the failed utterance, want 1: %v", n, logs.All())
	}
	if st := a.Stats(); st.Dropped != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestNoSoundDevice: with no such sound device, each utterance fails with
// a log line that says so and an "interrupted" event, and the adaptor
// goes on.
func TestNoSoundDevice(t *testing.T) {
	speechtest.Require(t, "espeak-ng")
	if _, ok := player(); !ok {
		t.Skip("neither aplay nor sox's play is installed")
	}
	a, events, logs := open(t, map[string]string{"device": "seat-test-no-such-device"})
	a.Send("One.")
	a.Send("Two.")
	got := events.waitEvents(t, 4)
	if got[1] != "voice: interrupted,One." || got[3] != "voice: interrupted,Two." {
		t.Errorf("events %q", got)
	}
	failed := logs.FilterMessage("utterance failed").All()
	if len(failed) != 2 || !strings.Contains(failed[0].ContextMap()["error"].(string), "playing on the sound device") {
		t.Errorf("log %v", logs.All())
	}
}

// TestInterrupt: Interrupt cuts the utterance being spoken short.
func TestInterrupt(t *testing.T) {
	speechtest.Require(t, "espeak-ng")
	a, events, _ := open(t, map[string]string{"wav": filepath.Join(t.TempDir(), "{n}.wav")})
	long := strings.Repeat("Interrupt me if you can. ", 1000)
	a.Send(long)
	events.waitEvents(t, 1)
	for speechtest.Child(t, "espeak-ng") == 0 && len(events.events()) == 1 {
		time.Sleep(time.Millisecond)
	}
	a.Interrupt()
	if got := events.waitEvents(t, 2); got[1] != "voice: interrupted,"+long {
		t.Errorf("events %.80q", got)
	}
}

// TestDeclarations: what seat check says of a tts declaration, on this
// machine and on one without the engines (an empty PATH).
func TestDeclarations(t *testing.T) {
	dir := t.TempDir()
	voice := filepath.Join(dir, "v.htsvoice")
	os.WriteFile(voice, []byte("x"), 0o644)
	for _, c := range []struct {
		attrs  map[string]string
		engine string
		probs  []string
	}{
		{map[string]string{"wav": "x.wav"}, espeakNG, nil},
		{map[string]string{"lang": "ja", "wav": "x.wav", "dictionary": dir, "voice": "v.htsvoice"}, openJTalk, nil},
		{map[string]string{"lang": "ja-JP", "wav": "x.wav", "dictionary": dir + "/none", "voice": "none.htsvoice"}, openJTalk,
			[]string{"dictionary: no dictionary directory " + dir + "/none", "voice: no voice file " + dir + "/none.htsvoice (an HTS voice, .htsvoice)"}},
		{map[string]string{"engine": "espeak-ng", "lang": "ja", "wav": "x.wav", "pitch": "high"}, espeakNG,
			[]string{`pitch: pitch is half-tones up or down, from -24 to 24, not "high"`}},
		{map[string]string{"wav": "x.wav", "pitch": "30"}, espeakNG, []string{`pitch: pitch is half-tones up or down, from -24 to 24, not "30"`}},
	} {
		s, probs := parseSynth(adaptors.Decl{Name: "voice", Attrs: c.attrs, Dir: dir})
		var got []string
		for _, p := range probs {
			if !p.Machine {
				got = append(got, p.Attr+": "+p.Msg)
			}
		}
		if s.engine != c.engine || strings.Join(got, "\n") != strings.Join(c.probs, "\n") {
			t.Errorf("%v: engine %s, problems %q; want %s, %q", c.attrs, s.engine, got, c.engine, c.probs)
		}
	}
	// A machine without the engines, the voice or a player: each is
	// named with the Debian package that brings it.
	t.Setenv("PATH", t.TempDir())
	for _, c := range []struct {
		attrs map[string]string
		want  []string
	}{
		{map[string]string{"lang": "en"}, []string{"engine: espeak-ng is not installed on this machine (Debian: apt-get install espeak-ng)",
			": nothing plays sound on this machine (Debian: apt-get install alsa-utils, or sox); or write WAV files with wav=\"voice-{n}.wav\""}},
		{map[string]string{"lang": "ja", "wav": "x.wav", "voice": voice}, []string{"engine: open_jtalk is not installed on this machine (Debian: apt-get install open-jtalk)"}},
	} {
		_, probs := parseSynth(adaptors.Decl{Name: "voice", Attrs: c.attrs, Dir: dir})
		var got []string
		for _, p := range probs {
			if p.Machine && p.Attr != "dictionary" {
				got = append(got, p.Attr+": "+p.Msg)
			}
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%v without the engines: %q, want %q", c.attrs, got, c.want)
		}
	}
}

// player is the program that would play sound here.
func player() (string, bool) {
	s, _ := parseSynth(adaptors.Decl{Attrs: map[string]string{}})
	return s.player, s.player != ""
}
