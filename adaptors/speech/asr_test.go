package speech

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/speech/speechtest"
)

// kioskKeys are a kiosk's keys, as the compiler expands them into words.
var kioskKeys = &adaptors.Keys{
	General: []string{"help", "bye", "goodbye"},
	States: map[string][]string{
		"attract": {"hello", "hi"},
		"menu":    {"tickets?", "map", "yes", "no", "where is the toilet"},
	},
}

func openASR(t *testing.T, attrs map[string]string, keys *adaptors.Keys) (*asr, *sink, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	a, err := newASR(adaptors.Config{Name: "ear", Type: "asr", Attrs: attrs, Log: zap.New(core), Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	t.Cleanup(func() { a.Close() })
	return a.(*asr), s, logs
}

// say has espeak-ng speak text into a WAV file (22 kHz: the adaptor
// makes it 16 kHz with sox).
func say(t *testing.T, file, text string) {
	t.Helper()
	tmp := file + ".tmp"
	if out, err := exec.Command("espeak-ng", "-v", "en-us", "-s", "160", "-w", tmp, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, file); err != nil { // whole, as a recorder would leave it
		t.Fatal(err)
	}
}

// TestHearsTheActiveStatesKeys: a file dropped in the input directory is
// heard against the grammar of the active states' keys and the general
// rules': a phrase in it arrives as the key's text with its confidence
// ("ticket,0.97": what tickets? matches), one outside it as a rejection,
// and a state change changes the grammar.
func TestHearsTheActiveStatesKeys(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "sox", decoder)
	in := t.TempDir()
	a, events, _ := openASR(t, map[string]string{"input": in}, kioskKeys)
	a.ActiveChanged("attract", []string{"attract"})
	if err := a.Open(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	say(t, filepath.Join(in, "01.wav"), "hello")
	got := events.waitEvents(t, 1)
	if !strings.HasPrefix(got[0], "ear: hello,") {
		t.Errorf("heard %q", got)
	}
	a.ActiveChanged("menu", []string{"menu"})
	for i, text := range []string{"tickets", "where is the toilet", "goodbye", "how much does the ticket cost", "hello"} {
		say(t, filepath.Join(in, fmt.Sprintf("%02d.wav", i+2)), text)
	}
	got = events.waitEvents(t, 6)
	t.Logf("heard %q", got)
	want := []string{"ear: hello,", "ear: tickets,", "ear: where is the toilet,", "ear: goodbye,", "ear: rejected,", "ear: rejected,"}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("event %d: %q, want %s...", i+1, got[i], w)
		}
	}
}

// TestCorruptAudio: a file that is not WAV, or not whole, costs a log
// line and a count, and the next file is heard.
func TestCorruptAudio(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "sox", decoder)
	in := t.TempDir()
	a, events, logs := openASR(t, map[string]string{"input": in}, kioskKeys)
	a.ActiveChanged("attract", []string{"attract"})
	if err := a.Open(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(in, "01.wav"), []byte("RIFF\x00\x00\x00\x00WAVEjunk"), 0o644)
	say(t, filepath.Join(in, "02.wav"), "hi")
	if got := events.waitEvents(t, 1); !strings.HasPrefix(got[0], "ear: hi,") {
		t.Errorf("heard %q", got)
	}
	if n := logs.FilterMessage("audio file not heard").Len(); n != 1 || a.Stats().Dropped != 1 {
		t.Errorf("%d log lines, stats %+v: %v", n, a.Stats(), logs.All())
	}
}

// TestPhrases: what keys become in a grammar, and what cannot.
func TestPhrases(t *testing.T) {
	for key, want := range map[string]string{
		"tickets?":            "ticket|tickets",
		"hello$":              "hello",
		"^yes":                "yes",
		"where is the toilet": "where is the toilet",
		"colou?r":             "color|colour",
		"[Hh]ello":            "hello",
		"num\\d+":             "error",
		".":                   "error",
		"a*":                  "error",
	} {
		ps, err := Phrases(key)
		got := strings.Join(ps, "|")
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("%q: %q (%v), want %q", key, got, err, want)
		}
	}
}

// TestFileBeingWritten: a WAV file that grows in the input directory is
// heard once it is whole, not as the part written when first seen.
func TestFileBeingWritten(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "sox", decoder)
	in, scratch := t.TempDir(), t.TempDir()
	a, events, logs := openASR(t, map[string]string{"input": in}, kioskKeys)
	a.ActiveChanged("attract", []string{"attract"})
	whole := filepath.Join(scratch, "hello.wav")
	say(t, whole, "hello")
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(in, "01.wav"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Open(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	// Written in parts, a few looks apart: the header alone first (a
	// WAV file with no sound yet), then the sound in three parts.
	cuts := []int{0, 44, 44 + (len(b)-44)/3, 44 + 2*(len(b)-44)/3, len(b)}
	for i := range len(cuts) - 1 {
		f.Write(b[cuts[i]:cuts[i+1]])
		f.Sync()
		time.Sleep(3 * pollEvery)
	}
	f.Close()
	if got := events.waitEvents(t, 1); !strings.HasPrefix(got[0], "ear: hello,") {
		t.Errorf("heard %q", got)
	}
	if n := logs.FilterMessage("audio file not heard").Len(); n != 0 {
		t.Errorf("a part heard: %v", logs.All())
	}
}
