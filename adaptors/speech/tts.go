// Package speech is the "tts" and "asr" adaptors: a behavior that speaks,
// with Debian's open_jtalk (Japanese) or espeak-ng (other languages), to
// the sound device or to WAV files, and that hears WAV files with
// pocketsphinx against a grammar made of its keys (docs/speech.md).
package speech

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	adaptors.RegisterKind(adaptors.Kind{Name: "tts", New: newTTS, Attrs: ttsAttrs, Check: adaptors.Check{Decl: checkTTS}, Caps: adaptors.NoInput})
}

// The engines.
const (
	openJTalk = "open_jtalk"
	espeakNG  = "espeak-ng"
)

// Where Debian's packages put open_jtalk's dictionary and voice.
const (
	debianDictionary = "/var/lib/mecab/dic/open-jtalk/naist-jdic"
	debianVoice      = "/usr/share/hts-voice/nitech-jp-atr503-m001/nitech_jp_atr503_m001.htsvoice"
)

var ttsAttrs = map[string]schema.AttrSpec{
	"engine":     {Kind: schema.Enum, Enum: []string{openJTalk, espeakNG}},
	"lang":       {},
	"voice":      {},
	"dictionary": {},
	"speed":      {Kind: schema.PosFloat},
	"pitch":      {},
	"wav":        {},
	"device":     {},
	"events":     {Kind: schema.Enum, Enum: []string{"on", "off"}},
	"realtime":   {Kind: schema.Enum, Enum: []string{"on", "off"}},
}

// synth is how a tts adaptor speaks, from its attributes.
type synth struct {
	engine string
	// voice: open_jtalk's .htsvoice file, or espeak-ng's voice name
	// ("en-us").
	voice string
	dict  string  // open_jtalk's dictionary directory
	speed float64 // 1 is the engine's own speed
	pitch float64 // half-tones up, or down when negative
	// wav is the WAV files' name pattern, {n} the utterance's number
	// from 1; "" plays each utterance on the sound device with player.
	wav    string
	player string // aplay or sox's play
	device string // the sound device (ALSA's name), "" for the default
	events bool
	// realtime: an utterance written to a WAV file lasts as long as its
	// sound, as one played does, so barge-in can cut it short.
	realtime bool
}

// parseSynth reads a declaration, and says what is wrong with it or
// missing on this machine (naming the Debian package to install).
func parseSynth(d adaptors.Decl) (synth, []adaptors.Problem) {
	var probs []adaptors.Problem
	s := synth{engine: d.Attrs["engine"], speed: 1, wav: d.Attrs["wav"], device: d.Attrs["device"], events: d.Attrs["events"] != "off",
		realtime: d.Attrs["realtime"] == "on"}
	lang := strings.ToLower(strings.TrimSpace(d.Attrs["lang"]))
	if s.engine == "" {
		s.engine = espeakNG
		if lang == "ja" || strings.HasPrefix(lang, "ja-") || strings.HasPrefix(lang, "ja_") {
			s.engine = openJTalk
		}
	}
	if v, ok := d.Attrs["speed"]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
			s.speed = f
		} // else reported by the schema (a number > 0)
	}
	if v, ok := d.Attrs["pitch"]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < -24 || f > 24 {
			probs = append(probs, adaptors.Problem{Attr: "pitch", Msg: fmt.Sprintf("pitch is half-tones up or down, from -24 to 24, not %q", v)})
		} else {
			s.pitch = f
		}
	}
	missing := func(attr, what, pkg string) {
		probs = append(probs, adaptors.Problem{Attr: attr, Machine: true,
			Msg: fmt.Sprintf("%s is not installed on this machine (Debian: apt-get install %s)", what, pkg)})
	}
	switch s.engine {
	case openJTalk:
		if _, err := exec.LookPath(openJTalk); err != nil {
			missing("engine", "open_jtalk", "open-jtalk")
		}
		s.dict = given(d, "dictionary", debianDictionary)
		if st, err := os.Stat(s.dict); err != nil || !st.IsDir() {
			if d.Attrs["dictionary"] == "" {
				missing("dictionary", "open_jtalk's dictionary ("+debianDictionary+")", "open-jtalk-mecab-naist-jdic")
			} else {
				probs = append(probs, adaptors.Problem{Attr: "dictionary", Msg: fmt.Sprintf("no dictionary directory %s", s.dict)})
			}
		}
		s.voice = given(d, "voice", debianVoice)
		if st, err := os.Stat(s.voice); err != nil || !st.Mode().IsRegular() {
			if d.Attrs["voice"] == "" {
				missing("voice", "open_jtalk's voice ("+debianVoice+")", "hts-voice-nitech-jp-atr503-m001, from Debian's contrib section")
			} else {
				probs = append(probs, adaptors.Problem{Attr: "voice", Msg: fmt.Sprintf("no voice file %s (an HTS voice, .htsvoice)", s.voice)})
			}
		}
	case espeakNG:
		if _, err := exec.LookPath(espeakNG); err != nil {
			missing("engine", "espeak-ng", "espeak-ng")
		}
		s.voice = d.Attrs["voice"]
		if s.voice == "" {
			s.voice = lang
		}
		if s.voice == "" {
			s.voice = "en"
		}
	}
	if s.wav == "" {
		for _, p := range []string{"aplay", "play"} {
			if _, err := exec.LookPath(p); err == nil {
				s.player = p
				break
			}
		}
		if s.player == "" {
			probs = append(probs, adaptors.Problem{Attr: "", Machine: true,
				Msg: "nothing plays sound on this machine (Debian: apt-get install alsa-utils, or sox); or write WAV files with wav=\"voice-{n}.wav\""})
		}
	}
	return s, probs
}

// given is an attribute naming a file, relative to the behavior's
// directory, or def.
func given(d adaptors.Decl, attr, def string) string {
	v := strings.TrimSpace(d.Attrs[attr])
	if v == "" {
		return def
	}
	if !filepath.IsAbs(v) && d.Dir != "" {
		v = filepath.Join(d.Dir, v)
	}
	return v
}

func checkTTS(d adaptors.Decl) []adaptors.Problem {
	_, probs := parseSynth(d)
	return probs
}

// command is what synthesizes text (given on standard input) into the
// WAV file out.
func (s synth) command(ctx context.Context, out string) *exec.Cmd {
	if s.engine == openJTalk {
		return exec.CommandContext(ctx, openJTalk, "-x", s.dict, "-m", s.voice,
			"-r", strconv.FormatFloat(s.speed, 'f', -1, 64), "-fm", strconv.FormatFloat(s.pitch, 'f', -1, 64), "-ow", out)
	}
	// espeak-ng: 175 words a minute is its own speed; its pitch is 0 to
	// 99, 50 its own, about four steps to a half-tone.
	pitch := min(max(int(50+4*s.pitch), 0), 99)
	return exec.CommandContext(ctx, espeakNG, "-v", s.voice, "-s", strconv.Itoa(int(175*s.speed)),
		"-p", strconv.Itoa(pitch), "-w", out, "--stdin")
}

// playCommand is what plays the WAV file on the sound device.
func (s synth) playCommand(ctx context.Context, file string) *exec.Cmd {
	if s.player == "aplay" {
		args := []string{"-q"}
		if s.device != "" {
			args = append(args, "-D", s.device)
		}
		return exec.CommandContext(ctx, "aplay", append(args, file)...)
	}
	cmd := exec.CommandContext(ctx, "play", "-q", file)
	if s.device != "" {
		cmd.Env = append(os.Environ(), "AUDIODRIVER=alsa", "AUDIODEV="+s.device)
	}
	return cmd
}

// synthLimit bounds one utterance's synthesis, and playLimit its playing.
const (
	synthLimit = 30 * time.Second
	playLimit  = 5 * time.Minute
)

// tts speaks each message, in order, one at a time. It tells the
// behavior "speaking,TEXT" when an utterance starts, then "done,TEXT"
// when it ends, or "interrupted,TEXT" when it was cut short or failed.
type tts struct {
	name  string
	log   *zap.Logger
	s     synth
	queue *adaptors.Outbox
	stats adaptors.Counters

	mu      sync.Mutex
	n       int                // utterances begun
	current context.CancelFunc // ends the utterance being spoken
	pending int                // utterances sent and not yet told done or interrupted
	idle    chan struct{}      // closed while pending is 0
	// queued counts the utterances put in the queue, taken those taken
	// from it, and cut is queued when Interrupt ended the robot's turn:
	// the utterances up to it are not spoken.
	queued, taken, cut uint64

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func newTTS(cfg adaptors.Config) (adaptors.Adaptor, error) {
	s, probs := parseSynth(adaptors.Decl{Name: cfg.Name, Attrs: cfg.Attrs, Dir: cfg.Dir})
	for _, p := range probs {
		if !p.Warning {
			return nil, errors.New(p.Msg)
		}
	}
	a := &tts{name: cfg.Name, log: cfg.Log, s: s, queue: adaptors.NewOutbox(cfg.Tuning), done: make(chan struct{}), idle: make(chan struct{})}
	close(a.idle)
	if a.log == nil {
		a.log = zap.NewNop()
	}
	return a, nil
}

func (a *tts) Name() string { return a.name }

// Stats counts the utterances that did not end as they should
// (Dropped): cut short, failed, or left queued at the stop.
func (a *tts) Stats() adaptors.Stats { return a.stats.Snapshot() }

// Open starts speaking what is sent.
func (a *tts) Open(ctx context.Context, sink adaptors.Sink) error {
	ctx, a.cancel = context.WithCancel(ctx)
	go a.speakAll(ctx, sink)
	return nil
}

// Send queues an utterance; it never waits.
func (a *tts) Send(text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	a.mu.Lock()
	if a.pending == 0 {
		a.idle = make(chan struct{})
	}
	a.pending++
	ok := a.queue.Put(text)
	if ok {
		a.queued++
	}
	a.mu.Unlock()
	if !ok {
		a.stats.Dropped.Add(1)
		a.finished(1)
		return adaptors.ErrQueueFull
	}
	return nil
}

// Idle is closed once every utterance sent so far has been spoken (or
// cut short) and the behavior told (adaptors.Worker): the run of a
// behavior whose standard input has ended waits for it.
func (a *tts) Idle() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.idle
}

// finished counts n utterances as over.
func (a *tts) finished(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending -= n
	if a.pending <= 0 {
		a.pending = 0
		select {
		case <-a.idle:
		default:
			close(a.idle)
		}
	}
}

// Interrupt ends the robot's turn (adaptors.Interrupter): the utterance
// being spoken is cut short, and those queued behind it are not spoken;
// each is told "interrupted". It says whether anything was being spoken.
func (a *tts) Interrupt() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.current == nil && a.pending == 0 {
		return false
	}
	if a.current != nil {
		a.current()
	}
	a.cut = a.queued
	return true
}

// Close stops speaking: the utterance being spoken is cut short, those
// queued are dropped and counted.
func (a *tts) Close() error {
	a.once.Do(func() {
		if a.cancel != nil {
			a.cancel()
		}
		a.queue.Close()
	})
	if a.cancel != nil {
		<-a.done
	}
	return nil
}

func (a *tts) speakAll(ctx context.Context, sink adaptors.Sink) {
	defer close(a.done)
	var batch []string
	for {
		select {
		case <-a.queue.Wait():
		case <-ctx.Done():
			if n := len(a.queue.Take(nil)); n > 0 {
				a.stats.Dropped.Add(int64(n))
				a.log.Info("utterances left unspoken at the stop", zap.Int("count", n))
				a.finished(n)
			}
			return
		}
		batch = a.queue.Take(batch)
		for i, text := range batch {
			if ctx.Err() != nil {
				a.stats.Dropped.Add(int64(len(batch) - i))
				a.finished(len(batch) - i)
				break
			}
			a.mu.Lock()
			a.taken++
			skip := a.taken <= a.cut
			a.mu.Unlock()
			if skip {
				a.log.Info("utterance not spoken: the turn was interrupted", zap.String("text", text))
				a.stats.Dropped.Add(1)
				a.tell(ctx, sink, "interrupted", text)
			} else {
				a.speak(ctx, sink, text)
			}
			a.finished(1)
		}
		clear(batch)
	}
}

// speak says one utterance and tells the behavior.
func (a *tts) speak(ctx context.Context, sink adaptors.Sink, text string) {
	a.mu.Lock()
	a.n++
	n := a.n
	uctx, cancel := context.WithCancel(ctx)
	a.current = cancel
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.current = nil
		a.mu.Unlock()
		cancel()
	}()
	a.tell(ctx, sink, "speaking", text)
	err := a.say(uctx, n, text)
	switch {
	case err == nil:
		a.log.Info("utterance spoken", zap.String("text", text))
		a.tell(ctx, sink, "done", text)
		return
	case uctx.Err() != nil && ctx.Err() == nil:
		a.log.Info("utterance interrupted", zap.String("text", text))
	default:
		a.log.Warn("utterance failed", zap.String("text", text), zap.Error(err))
	}
	a.stats.Dropped.Add(1)
	if ctx.Err() == nil {
		a.tell(ctx, sink, "interrupted", text)
	}
}

// say synthesizes text into the utterance's WAV file, or into a
// temporary one that is then played.
func (a *tts) say(ctx context.Context, n int, text string) error {
	out := strings.ReplaceAll(a.s.wav, "{n}", strconv.Itoa(n))
	if a.s.wav == "" {
		f, err := os.CreateTemp("", "seat-tts-*.wav")
		if err != nil {
			return err
		}
		out = f.Name()
		f.Close()
		defer os.Remove(out)
	} else if dir := filepath.Dir(out); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	sctx, cancel := context.WithTimeout(ctx, synthLimit)
	defer cancel()
	cmd := a.s.command(sctx, out)
	cmd.Stdin = strings.NewReader(text + "\n")
	if err := run(cmd); err != nil {
		return fmt.Errorf("%s: %w", a.s.engine, err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() <= 44 {
		return fmt.Errorf("%s wrote no sound to %s", a.s.engine, out)
	}
	if a.s.wav != "" {
		if a.s.realtime {
			return lasts(ctx, out)
		}
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, playLimit)
	defer cancel()
	cmd = a.s.playCommand(pctx, out)
	if err := run(cmd); err != nil {
		return fmt.Errorf("playing on the sound device (%s): %w", a.s.player, err)
	}
	return nil
}

// lasts waits as long as the WAV file's sound lasts, or until ctx ends.
func lasts(ctx context.Context, file string) error {
	w, err := wav.Read(file)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	t := time.NewTimer(w.Duration())
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run runs a program; its error carries the last line it printed.
func run(cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	if err != nil {
		if last := lastLine(out); last != "" {
			return fmt.Errorf("%w: %s", err, last)
		}
	}
	return err
}

// lastLine is the last line a program printed, trimmed.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// tell delivers a status event, unless events="off".
func (a *tts) tell(ctx context.Context, sink adaptors.Sink, status, text string) {
	if a.s.events {
		_ = sink.Deliver(ctx, adaptors.Event{Source: a.name, Text: status + "," + text})
	}
}
