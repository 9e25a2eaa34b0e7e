package speech

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/speech/speechtest"
)

// The phrases of a kiosk's keys, and what visitors say that is none of
// them.
var (
	inGrammar = []string{"hello", "hi", "tickets", "map", "help", "yes", "no", "goodbye", "where is the toilet",
		"thank you", "opening hours", "the cafe", "the shop", "say that again", "children"}
	outOfGrammar = []string{"how much is the ticket", "can I take photos here", "is there a lift"}
	// voices are espeak-ng's: an American man and woman, a British man.
	voices = []struct{ voice, speed string }{{"en-us", "160"}, {"en-us+f3", "175"}, {"en", "150"}}
)

// BenchmarkRecognition: pocketsphinx hearing espeak-ng's speech of a
// kiosk's 15 phrases in three voices, and of 3 phrases outside them:
// with the keys as its grammar, the share of phrases heard right (a
// rejection counts as wrong), the share of the others rejected, and the
// longest time from a whole file to the decision; with the general
// language model instead, the share of words heard right, for contrast.
func BenchmarkRecognition(b *testing.B) {
	speechtest.Require(b, "espeak-ng", "sox", decoder)
	dir := b.TempDir()
	type utterance struct {
		file, text string
		voice      int
	}
	var in, out []utterance
	for vi, v := range voices {
		for i, p := range append(append([]string{}, inGrammar...), outOfGrammar...) {
			f := filepath.Join(dir, fmt.Sprintf("v%d-%02d.wav", vi, i))
			if o, err := exec.Command("espeak-ng", "-v", v.voice, "-s", v.speed, "-w", f, p).CombinedOutput(); err != nil {
				b.Fatalf("espeak-ng: %v\n%s", err, o)
			}
			if i < len(inGrammar) {
				in = append(in, utterance{f, p, vi})
			} else {
				out = append(out, utterance{f, p, vi})
			}
		}
	}
	open := func(grammar string) *asr {
		a, err := newASR(adaptors.Config{Name: "ear", Attrs: map[string]string{"input": dir, "grammar": grammar},
			Keys: &adaptors.Keys{General: inGrammar}})
		if err != nil {
			b.Fatal(err)
		}
		a.(*asr).dir = b.TempDir()
		return a.(*asr)
	}
	keys, lm := open("keys"), open("lm")
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		right, refused, lmWords, words := 0, 0, 0, 0
		var slowest, lmTime time.Duration
		for _, u := range in {
			start := time.Now()
			text, _ := keys.recognize(ctx, u.file, u.file)
			slowest = max(slowest, time.Since(start))
			if heard, _, _ := strings.Cut(text, ","); heard == u.text {
				right++
			} else {
				b.Logf("%s (%s) %q heard as %q", filepath.Base(u.file), voices[u.voice].voice, u.text, text)
			}
			start = time.Now()
			text, _ = lm.recognize(ctx, u.file, u.file)
			lmTime += time.Since(start)
			heard := strings.Fields(text[:strings.LastIndexByte(text, ',')+1])
			words += len(strings.Fields(u.text))
			lmWords += matching(strings.Fields(strings.TrimSuffix(strings.Join(heard, " "), ",")), strings.Fields(u.text))
		}
		for _, u := range out {
			start := time.Now()
			text, _ := keys.recognize(ctx, u.file, u.file)
			slowest = max(slowest, time.Since(start))
			if strings.HasPrefix(text, rejected+",") {
				refused++
			}
		}
		b.ReportMetric(100*float64(right)/float64(len(in)), "keys-right-%")
		b.ReportMetric(100*float64(refused)/float64(len(out)), "outside-rejected-%")
		b.ReportMetric(float64(slowest.Milliseconds()), "keys-decision-max-ms")
		b.ReportMetric(100*float64(lmWords)/float64(words), "lm-words-right-%")
		b.ReportMetric(float64(lmTime.Milliseconds())/float64(len(in)), "lm-decision-ms")
	}
}

// matching counts the words of want that heard has in the same order
// (the longest common subsequence).
func matching(heard, want []string) int {
	m := make([][]int, len(heard)+1)
	for i := range m {
		m[i] = make([]int, len(want)+1)
	}
	for i := 1; i <= len(heard); i++ {
		for j := 1; j <= len(want); j++ {
			if heard[i-1] == want[j-1] {
				m[i][j] = m[i-1][j-1] + 1
			} else {
				m[i][j] = max(m[i-1][j], m[i][j-1])
			}
		}
	}
	return m[len(heard)][len(want)]
}
