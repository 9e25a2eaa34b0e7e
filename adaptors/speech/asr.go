package speech

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/speech/wav"
	"github.com/seatml/seat/schema"
)

func init() {
	adaptors.RegisterKind(adaptors.Kind{Name: "asr", New: newASR, Attrs: asrAttrs, Caps: adaptors.Grammar,
		Check: adaptors.Check{Decl: checkASR, Keys: keyChecker, Refs: map[string]string{"bargein": "tts"}}, Holds: holds})
}

// holds is what a recognizer holds alone: its input. Two would share a
// pipe's sound, contend for the microphone, and hear a directory's files
// twice.
func holds(attrs map[string]string) string {
	in := strings.TrimSpace(attrs["input"])
	if in == mic {
		return mic + ":" + attrs["device"]
	}
	if abs, err := filepath.Abs(in); err == nil {
		return abs
	}
	return in
}

// pocketsphinx's program, and where Debian's pocketsphinx-en-us puts its
// models.
const (
	decoder       = "pocketsphinx_continuous"
	debianModels  = "/usr/share/pocketsphinx/model/en-us"
	defaultAcoust = debianModels + "/en-us"
	defaultDict   = debianModels + "/cmudict-en-us.dict"
	defaultLM     = debianModels + "/en-us.lm.bin"
)

// rejected is the event's word for speech not heard as a key.
const rejected = "rejected"

// defaultPause is the quiet that ends an utterance in a stream (the
// microphone, a pipe).
const defaultPause = 400 * time.Millisecond

// defaultScoreLimit is the confidence under which a hypothesis is
// rejected: the share of the utterance's speech that its words account
// for (see confidence).
const defaultScoreLimit = 0.8

var asrAttrs = map[string]schema.AttrSpec{
	"input":      {},
	"grammar":    {},
	"hmm":        {},
	"dict":       {},
	"lm":         {},
	"scorelimit": {},
	"bargein":    {},
	"pause":      {Kind: schema.PosFloat},
	"device":     {},
}

// listener is how an asr adaptor hears, from its attributes.
type listener struct {
	// input: a WAV file, a directory whose WAV files are heard in name
	// order, a named pipe, or "mic".
	input      string
	device     string // the microphone's device (ALSA's name), "" for the default
	recorder   string // arecord or rec, for the microphone
	pause      time.Duration
	bargein    string // the tts adaptor speech cuts short
	grammar    string // "keys", "lm" (the language model: any words), or a JSGF file
	hmm, dict  string
	lm         string
	scoreLimit float64
}

func parseListener(d adaptors.Decl) (listener, []adaptors.Problem) {
	var probs []adaptors.Problem
	l := listener{input: strings.TrimSpace(d.Attrs["input"]), grammar: d.Attrs["grammar"], scoreLimit: defaultScoreLimit,
		device: d.Attrs["device"], bargein: d.Attrs["bargein"], pause: defaultPause}
	if v, ok := d.Attrs["pause"]; ok {
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f > 0 && f <= 10 {
			l.pause = time.Duration(f * float64(time.Second))
		} // else reported by the schema (a number > 0)
	}
	if l.input == mic {
		if l.recorder = recorder(); l.recorder == "" {
			probs = append(probs, adaptors.Problem{Attr: "input", Machine: true,
				Msg: "nothing records sound on this machine (Debian: apt-get install alsa-utils, or sox)"})
		}
	} else if _, ok := d.Attrs["device"]; ok {
		probs = append(probs, adaptors.Problem{Attr: "device", Warning: true, Msg: `device is the microphone's, for input="mic"`})
	}
	if l.grammar == "" {
		l.grammar = "keys"
	}
	if l.grammar != "keys" && l.grammar != "lm" {
		l.grammar = given(d, "grammar", "")
		if _, err := os.Stat(l.grammar); err != nil {
			probs = append(probs, adaptors.Problem{Attr: "grammar", Msg: fmt.Sprintf("grammar is keys, lm or a JSGF file; no file %s", l.grammar)})
		}
	}
	if strings.TrimSpace(l.input) == "" {
		probs = append(probs, adaptors.Problem{Attr: "input", AtName: true,
			Msg: `input is the microphone (input="mic"), a WAV file, a directory of them (input="voice-in"), or a named pipe`})
	}
	if v, ok := d.Attrs["scorelimit"]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || f > 1 {
			probs = append(probs, adaptors.Problem{Attr: "scorelimit", Msg: fmt.Sprintf("scorelimit is a confidence from 0 to 1, not %q", v)})
		} else {
			l.scoreLimit = f
		}
	}
	if _, err := exec.LookPath(decoder); err != nil {
		probs = append(probs, adaptors.Problem{Attr: "", Machine: true,
			Msg: "pocketsphinx is not installed on this machine (Debian: apt-get install pocketsphinx)"})
	}
	l.hmm, l.dict, l.lm = given(d, "hmm", defaultAcoust), given(d, "dict", defaultDict), given(d, "lm", defaultLM)
	for _, m := range []struct{ attr, path string }{{"hmm", l.hmm}, {"dict", l.dict}, {"lm", l.lm}} {
		if m.attr == "lm" && l.grammar != "lm" {
			continue
		}
		if _, err := os.Stat(m.path); err != nil {
			if d.Attrs[m.attr] == "" {
				probs = append(probs, adaptors.Problem{Attr: m.attr, Machine: true,
					Msg: fmt.Sprintf("pocketsphinx's English model (%s) is not installed on this machine (Debian: apt-get install pocketsphinx-en-us)", m.path)})
			} else {
				probs = append(probs, adaptors.Problem{Attr: m.attr, Msg: fmt.Sprintf("no such file %s", m.path)})
			}
		}
	}
	return l, probs
}

func checkASR(d adaptors.Decl) []adaptors.Problem {
	_, probs := parseListener(d)
	return probs
}

// keyChecker says why a key cannot be in the grammar: a pattern that
// matches too much, or a word the dictionary does not have; nil unless
// the grammar is made of the keys.
func keyChecker(d adaptors.Decl) func(key string) error {
	l, _ := parseListener(d)
	if l.grammar != "keys" {
		return nil
	}
	dict, err := loadDictionary(l.dict)
	if err != nil {
		dict = nil // reported by the declaration's check; patterns are still checked
	}
	return func(key string) error {
		if key == rejected {
			return nil
		}
		phrases, err := Phrases(key)
		if err != nil || dict == nil {
			return err
		}
		for _, p := range phrases {
			for _, w := range words(p) {
				if !dict[w] {
					return fmt.Errorf("the dictionary has no word %q", w)
				}
			}
		}
		return nil
	}
}

// dictionaries are the pronunciation dictionaries read, by path.
var (
	dictMu       sync.Mutex
	dictionaries = map[string]map[string]bool{}
)

// loadDictionary reads a pocketsphinx dictionary's words ("word(2)" is
// the word's second pronunciation).
func loadDictionary(path string) (map[string]bool, error) {
	dictMu.Lock()
	defer dictMu.Unlock()
	if d, ok := dictionaries[path]; ok {
		return d, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w, _, _ := strings.Cut(sc.Text(), " ")
		if i := strings.IndexByte(w, '('); i > 0 {
			w = w[:i]
		}
		d[strings.ToLower(w)] = true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	dictionaries[path] = d
	return d, nil
}

// asr hears WAV files with pocketsphinx. Each utterance reaches the
// behavior as eSEAT's recognizers send it, "TEXT,CONFIDENCE"; one whose
// confidence is under scorelimit as "rejected,CONFIDENCE,HEARD".
type asr struct {
	name string
	log  *zap.Logger
	l    listener
	keys *adaptors.Keys
	dict map[string]bool
	dir  string // temporary files: the grammar, the utterances of a stream
	peer func(string) adaptors.Adaptor
	// source names the input in logs.
	source string

	mu     sync.Mutex
	active []string
	// grammar is the JSGF file of the active states' keys, made when
	// the first utterance after a change of states is heard ("" until
	// then); phrases maps its phrases' words, joined by spaces, to the
	// key's text.
	grammar string
	phrases map[string]string

	stats  adaptors.Counters
	cancel context.CancelFunc
	done   chan struct{}
}

func newASR(cfg adaptors.Config) (adaptors.Adaptor, error) {
	l, probs := parseListener(adaptors.Decl{Name: cfg.Name, Attrs: cfg.Attrs, Dir: cfg.Dir})
	for _, p := range probs {
		if !p.Warning {
			return nil, errors.New(p.Msg)
		}
	}
	a := &asr{name: cfg.Name, log: cfg.Log, l: l, keys: cfg.Keys, peer: cfg.Peer, source: l.input, done: make(chan struct{})}
	if l.input == mic {
		a.source = "the microphone"
	}
	if a.log == nil {
		a.log = zap.NewNop()
	}
	if l.grammar == "keys" {
		d, err := loadDictionary(l.dict)
		if err != nil {
			return nil, err
		}
		a.dict = d
		if a.keys == nil {
			return nil, errors.New(`grammar="keys" needs the keys of SEATML rules`)
		}
	}
	return a, nil
}

func (a *asr) Name() string { return a.name }

// Stats counts the utterances not heard (Dropped): unreadable files, a
// decoder that failed.
func (a *asr) Stats() adaptors.Stats { return a.stats.Snapshot() }

// Send is refused: a recognizer takes nothing.
func (a *asr) Send(string) error { return errors.New("an asr adaptor hears; it does not send") }

// StateChanged is ActiveChanged for the current state alone (the machine
// tells a StateObserver that is an ActiveObserver through ActiveChanged).
func (a *asr) StateChanged(name string) { a.ActiveChanged(name, []string{name}) }

// ActiveChanged makes the grammar of the active states' keys and the
// general rules' (adaptors.ActiveObserver).
func (a *asr) ActiveChanged(_ string, active []string) {
	a.mu.Lock()
	a.active = append(a.active[:0], active...)
	a.grammar = "" // made again for the next utterance
	a.mu.Unlock()
}

// Open starts hearing the input.
func (a *asr) Open(ctx context.Context, sink adaptors.Sink) error {
	dir, err := os.MkdirTemp("", "seat-asr-")
	if err != nil {
		return err
	}
	a.dir = dir
	stream := a.l.input == mic || isPipe(a.l.input)
	if st, err := os.Stat(a.l.input); !stream && (err != nil || st.IsDir()) {
		if err := os.MkdirAll(a.l.input, 0o755); err != nil {
			return err
		}
	}
	ctx, a.cancel = context.WithCancel(ctx)
	if stream {
		go a.hearStream(ctx, sink)
	} else {
		go a.hear(ctx, sink)
	}
	return nil
}

// Close stops hearing.
func (a *asr) Close() error {
	if a.cancel != nil {
		a.cancel()
		if a.l.input != mic && isPipe(a.l.input) {
			a.endPipeWait()
		}
		<-a.done
		os.RemoveAll(a.dir)
	}
	return nil
}

// pollEvery is how often a directory is looked at for new WAV files.
const pollEvery = 50 * time.Millisecond

// hear takes each WAV file of the input, once, in name order, when it
// is whole: a file input once, a directory's files as they come.
func (a *asr) hear(ctx context.Context, sink adaptors.Sink) {
	defer close(a.done)
	seen := map[string]bool{}
	size := map[string]int64{} // a file's size when last looked at
	still := map[string]int{}  // for how many looks it has not changed
	for {
		var files []string
		if st, err := os.Stat(a.l.input); err == nil && !st.IsDir() {
			files = []string{a.l.input}
		} else {
			files, _ = filepath.Glob(filepath.Join(a.l.input, "*.wav"))
			sort.Strings(files)
		}
		for _, f := range files {
			if seen[f] || ctx.Err() != nil {
				continue
			}
			// A file still being written (espeak-ng -w voice-in/1.wav)
			// is heard once it is whole: its RIFF header's size is the
			// file's, or it has not changed for a second.
			st, err := os.Stat(f)
			if err != nil {
				continue
			}
			if last, ok := size[f]; !ok || last != st.Size() {
				size[f], still[f] = st.Size(), 0
			} else {
				still[f]++
			}
			if !riffWhole(f, st.Size()) && still[f] < int(time.Second/pollEvery) {
				break // in name order: the files after it wait too
			}
			seen[f] = true
			delete(size, f)
			delete(still, f)
			a.bargeIn()
			if text, ok := a.recognize(ctx, f, f); ok {
				_ = sink.Deliver(ctx, adaptors.Event{Source: a.name, Text: text})
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollEvery):
		}
	}
}

// riffWhole says whether a WAV file's RIFF header gives its size as the
// file's: writers fill it in when they are done.
func riffWhole(path string, size int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [8]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != "RIFF" {
		return false
	}
	return int64(binary.LittleEndian.Uint32(h[4:]))+8 == size
}

// currentGrammar returns the grammar file of the active states' keys and
// its phrases, written first if the states changed since.
func (a *asr) currentGrammar() (string, map[string]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.grammar != "" {
		return a.grammar, a.phrases, nil
	}
	var keys []string
	keys = append(keys, a.keys.General...)
	for _, s := range a.active {
		keys = append(keys, a.keys.States[s]...)
	}
	phrases := map[string]string{}
	for _, k := range keys {
		if k == rejected {
			continue // the adaptor's own word for what it did not hear
		}
		ps, err := Phrases(k)
		if err != nil {
			continue // seat check warned of it
		}
	phrase:
		for _, p := range ps {
			ws := words(p)
			for _, w := range ws {
				if !a.dict[w] {
					continue phrase
				}
			}
			if _, dup := phrases[strings.Join(ws, " ")]; !dup {
				phrases[strings.Join(ws, " ")] = p
			}
		}
	}
	if len(phrases) == 0 {
		return "", nil, errors.New("no key of the active states can be heard")
	}
	var list []string
	for w := range phrases {
		list = append(list, w)
	}
	sort.Strings(list)
	path := filepath.Join(a.dir, "keys.gram")
	if err := os.WriteFile(path, []byte(jsgf(list)), 0o644); err != nil {
		return "", nil, err
	}
	a.grammar, a.phrases = path, phrases
	return path, phrases, nil
}

// recognize hears one WAV file, name in logs; ok is false when it could
// not.
func (a *asr) recognize(ctx context.Context, file, name string) (string, bool) {
	w, err := wav.Read(file)
	if err == nil && (w.Rate != 16000 || w.Channels != 1) {
		// pocketsphinx hears 16 kHz mono: sox makes it so.
		conv := filepath.Join(a.dir, "16k.wav")
		if cerr := exec.CommandContext(ctx, "sox", file, "-r", "16000", "-c", "1", "-b", "16", conv).Run(); cerr != nil {
			err = fmt.Errorf("%d Hz, %d channels, and sox could not make it 16 kHz mono: %w", w.Rate, w.Channels, cerr)
		} else if w, err = wav.Read(conv); err == nil {
			file = conv
		}
	}
	if err != nil {
		a.log.Warn("audio file not heard", zap.String("file", name), zap.Error(err))
		a.stats.Dropped.Add(1)
		return "", false
	}
	args := []string{"-infile", file, "-hmm", a.l.hmm, "-dict", a.l.dict, "-time", "yes", "-logfn", os.DevNull}
	var phrases map[string]string
	switch a.l.grammar {
	case "keys":
		g, p, err := a.currentGrammar()
		if err != nil {
			a.log.Warn("audio file not heard", zap.String("file", name), zap.Error(err))
			a.stats.Dropped.Add(1)
			return "", false
		}
		args, phrases = append(args, "-jsgf", g), p
	case "lm":
		args = append(args, "-lm", a.l.lm)
	default:
		args = append(args, "-jsgf", a.l.grammar)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(dctx, decoder, args...).Output()
	if err != nil {
		a.log.Warn("audio file not heard", zap.String("file", name), zap.Error(fmt.Errorf("%s: %w", decoder, err)))
		a.stats.Dropped.Add(1)
		return "", false
	}
	heard, segs := parseDecoded(string(out))
	conf := confidence(w.Speech(), segs)
	text := heard
	if phrases != nil {
		if p, ok := phrases[heard]; ok {
			text = p
		}
	}
	c := strconv.FormatFloat(conf, 'f', 2, 64)
	if heard == "" || conf < a.l.scoreLimit {
		a.log.Info("speech rejected", zap.String("file", name), zap.String("heard", heard), zap.String("confidence", c))
		return rejected + "," + c + "," + heard, true
	}
	a.log.Info("speech heard", zap.String("file", name), zap.String("text", text), zap.String("confidence", c))
	return text + "," + c, true
}

// segment is a word's time in an utterance, in seconds.
type segment struct{ start, end float64 }

// parseDecoded reads pocketsphinx_continuous -time yes: each utterance's
// hypothesis line, then a line per word or filler, "word start end
// posterior". It returns the words heard, and their times (not the
// fillers').
func parseDecoded(out string) (string, []segment) {
	var heard []string
	var segs []segment
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			continue
		}
		start, err1 := strconv.ParseFloat(f[1], 64)
		end, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		w := f[0]
		if strings.HasPrefix(w, "<") || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "+") {
			continue // <sil>, <s>, [NOISE], ++UH++
		}
		if i := strings.IndexByte(w, '('); i > 0 {
			w = w[:i] // tickets(2): a second pronunciation
		}
		heard = append(heard, w)
		segs = append(segs, segment{start, end})
	}
	return strings.Join(heard, " "), segs
}

// confidence is the share of the frames with sound that the words heard
// account for. A grammar makes any speech one of its phrases; speech that
// is not one of them is heard as a short phrase amid what the decoder
// takes for silence, and its confidence is low.
//
// margin widens each word's time by one frame. Widening it more covered
// the fading end of words heard right (the last vowel of "the cafe"),
// and as much the speech of a word heard wrong: a word not in the
// grammar was accepted.
func confidence(speech []bool, words []segment) float64 {
	const margin = 0.01
	n, in := 0, 0
	for i, s := range speech {
		if !s {
			continue
		}
		n++
		t := float64(i) * wav.Frame.Seconds()
		for _, w := range words {
			if t >= w.start-margin && t <= w.end+margin {
				in++
				break
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(in) / float64(n)
}

var (
	_ adaptors.StateObserver  = (*asr)(nil)
	_ adaptors.ActiveObserver = (*asr)(nil)
	_ adaptors.Worker         = (*tts)(nil)
)
