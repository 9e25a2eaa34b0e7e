package main

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/speech/speechtest"
	"github.com/seatml/seat/adaptors/web/webtest"
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
	stdout, stderr, code := seatProcessIn(t, dir, "hello\ntickets\nbye\n", "run", example)
	if code != 0 {
		t.Fatalf("seat exited %d:\n%s", code, stderr)
	}
	want := []string{"Welcome to the museum. Say tickets, map, or help.", "Tickets are twelve euros, and free for children.",
		"Goodbye, and thank you for visiting."}
	var said []string
	for _, l := range strings.Split(stdout, "\n") {
		if s, ok := strings.CutPrefix(l, "said: "); ok {
			said = append(said, s)
		}
	}
	if strings.Join(said, "\n") != strings.Join(want, "\n") {
		t.Errorf("said %q, want %q", said, want)
	}
	for i, text := range want {
		// About 0.15 to 0.6 s a word, at speed 0.9.
		words := float64(len(strings.Fields(text)))
		file := filepath.Join(dir, "voice-out", "kiosk-"+strconv.Itoa(i+1)+".wav")
		if secs := soxSpeech(t, file); secs < 0.15*words || secs > 0.6*words {
			t.Errorf("%s (%q): %v s of sound, want %.1f to %.1f", file, text, secs, 0.15*words, 0.6*words)
		}
	}
}

// TestJapaneseSpeechOnTheRealBinary: 受付ロボット on the real binary
// answers a visitor's Japanese on its socket in Japanese, spoken by
// open_jtalk into WAV files named in Japanese, and tells the visitor
// what it said once the voice has finished.
func TestJapaneseSpeechOnTheRealBinary(t *testing.T) {
	speechtest.Require(t, "open_jtalk", "sox")
	dir := t.TempDir()
	example, err := filepath.Abs("../../examples/speech/reception-voice.seatml")
	if err != nil {
		t.Fatal(err)
	}
	port, control := freePortNumber(t), freePort(t)
	_, log := startSeatIn(t, dir, "run", "--control", control, "--set", "来客.port="+port, example)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitForWithin(t, 30*time.Second, func() bool { return strings.Contains(log.String(), "listening") })
	conn, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for i, c := range []struct{ visitor, answer string }{
		{"こんにちは", "こんにちは。受付ロボットです。ご用件をどうぞ。"},
		{"山田さんと約束があります", "かしこまりました。担当の者をお呼びしますので、少々お待ちください。"},
	} {
		conn.Write([]byte(c.visitor + "\n"))
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		line, err := r.ReadString('\n')
		if got := strings.TrimSpace(line); err != nil || got != "話しました: "+c.answer {
			t.Fatalf("%s: told %q (%v), want 話しました: %s", c.visitor, got, err, c.answer)
		}
		// About 0.08 to 0.4 s a character.
		chars := float64(len([]rune(c.answer)))
		file := filepath.Join(dir, "voice-out", "受付-"+strconv.Itoa(i+1)+".wav")
		if secs := soxSpeech(t, file); secs < 0.08*chars || secs > 0.4*chars {
			t.Errorf("%s (%q): %v s of sound, want %.1f to %.1f", file, c.answer, secs, 0.08*chars, 0.4*chars)
		}
	}
	// The monitor, opened after the conversation (it keeps the history),
	// shows what the voice said in Japanese and that it was said whole.
	waitForWithin(t, 30*time.Second, func() bool { return strings.Contains(log.String(), "\tmonitor\t") })
	b := webtest.Start(t)
	b.Navigate("http://" + control + "/monitor/")
	rows := `Array.from(document.querySelectorAll('section[data-behavior="受付音声"] table.speech tbody tr')).map(r => Array.from(r.cells).slice(1).map(c => c.textContent).join("|")).join("\n")`
	want := "said|声|かしこまりました。担当の者をお呼びしますので、少々お待ちください。|done\nsaid|声|こんにちは。受付ロボットです。ご用件をどうぞ。|done"
	deadline := time.Now().Add(10 * time.Second)
	for got := ""; got != want; got, _ = b.Eval(rows).(string) {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor's speech rows:\n%s\nwant\n%s", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// soxSpeech is how long the sound in a WAV file lasts, as sox reads it;
// it fails the test when the file is silence.
func soxSpeech(t *testing.T, file string) float64 {
	t.Helper()
	out, err := exec.Command("sox", "--i", "-D", file).Output()
	if err != nil {
		t.Fatalf("sox --i -D %s: %v", file, err)
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		t.Fatalf("sox --i -D %s: %q", file, out)
	}
	stat, _ := exec.Command("sox", file, "-n", "stat").CombinedOutput() // stat writes to standard error
	var rms float64
	for _, l := range strings.Split(string(stat), "\n") {
		if v, ok := strings.CutPrefix(l, "RMS     amplitude:"); ok {
			rms, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if rms < 0.01 {
		t.Errorf("%s: RMS amplitude %v, silence:\n%s", file, rms, stat)
	}
	return secs
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
	_, stderr := startSeatIn(t, dir, "run", "--record", rec, example)
	t.Cleanup(func() {
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
		// The answer is sent to the voice, then spoken whole into its
		// file: the recording has the message, then the voice's done.
		sent := `"kind":"out","behavior":"kiosk-talk","source":"voice","text":` + strconv.Quote(a.answer)
		done := `"kind":"in","behavior":"kiosk-talk","source":"voice","text":` + strconv.Quote("done,"+a.answer)
		waitForWithin(t, 30*time.Second, func() bool {
			b, _ := os.ReadFile(rec)
			return strings.Count(string(b), `"kind":"out"`) == i+1 && strings.Contains(string(b), done)
		})
		if b, _ := os.ReadFile(rec); !strings.Contains(string(b), sent) {
			t.Fatalf("%q: not answered %q; the recording:\n%s", a.said, a.answer, b)
		}
		// Speech of a plausible length: about 0.15 to 0.6 s a word.
		out := filepath.Join(dir, "voice-out", "kiosk-talk-"+strconv.Itoa(i+1)+".wav")
		words := float64(len(strings.Fields(a.answer)))
		if secs := soxSpeech(t, out); secs < 0.15*words || secs > 0.6*words {
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

// TestBargeInOnTheRealBinary: the talking kiosk on the real binary hears
// a named pipe, as it would a microphone: a visitor's "hello" is heard
// where the visitor pauses, and the kiosk answers, taking as long as
// its answer would to play; the visitor says "tickets" over it, and the
// kiosk stops (its answer told interrupted), hears it, and answers that.
// The monitor, in headless Chromium, shows what was heard with its
// confidence, what was rejected, and what was said and became of it.
func TestBargeInOnTheRealBinary(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "sox", "pocketsphinx_continuous")
	dir := t.TempDir()
	example, err := filepath.Abs("../../examples/speech/kiosk-talk.seatml")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "visitor.pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "talk.jsonl")
	control := freePort(t)
	_, stderr := startSeatIn(t, dir, "run", "--record", rec, "--control", control, "--set", "ear.input=visitor.pipe", example)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(rec)
			t.Logf("seat logged:\n%s\nrecorded:\n%s", stderr.String(), b)
		}
	})
	waitForWithin(t, 30*time.Second, func() bool {
		return strings.Contains(stderr.String(), `"to": "attract"`) && strings.Contains(stderr.String(), "\tmonitor\t")
	})
	b := webtest.Start(t)
	b.Navigate("http://" + control + "/monitor/")
	b.WaitFor("the monitor's speech table", `document.querySelector('section[data-behavior="kiosk-talk"] table.speech') != null`)
	speak := func(text string) {
		wav := filepath.Join(dir, "visitor.wav")
		if out, err := exec.Command("espeak-ng", "-v", "en-us", "-s", "160", "-w", wav, text).CombinedOutput(); err != nil {
			t.Fatalf("espeak-ng: %v\n%s", err, out)
		}
		// 16 kHz mono, with a second's pause after it, as a recorder
		// would send it.
		if out, err := exec.Command("sox", wav, "-r", "16000", "-c", "1", "-b", "16", "-t", "wav", filepath.Join(dir, "visitor.pipe"), "pad", "0", "1").CombinedOutput(); err != nil {
			t.Fatalf("sox: %v\n%s", err, out)
		}
	}
	recorded := func(kind, source, text string) bool {
		b, _ := os.ReadFile(rec)
		return strings.Contains(string(b), `"kind":"`+kind+`","behavior":"kiosk-talk","source":"`+source+`","text":`+strconv.Quote(text))
	}
	welcome := "Welcome to the museum. Say tickets, map, or help."
	speak("hello")
	waitForWithin(t, 30*time.Second, func() bool { return recorded("in", "voice", "speaking,"+welcome) })
	speak("tickets")
	tickets := "Tickets are twelve euros, and free for children."
	waitForWithin(t, 30*time.Second, func() bool { return recorded("in", "voice", "done,"+tickets) })
	if !recorded("in", "voice", "interrupted,"+welcome) || recorded("in", "voice", "done,"+welcome) {
		t.Errorf("the welcome was not cut short")
	}
	if !strings.Contains(stderr.String(), "barge-in") {
		t.Errorf("no barge-in in the log")
	}
	speak("how much does the ticket cost")
	sorry := "Sorry, please say that again."
	waitForWithin(t, 30*time.Second, func() bool { return recorded("in", "voice", "done,"+sorry) })

	// The monitor's rows, newest first: what, adaptor, text, and the
	// confidence or what became of the utterance.
	rows := `Array.from(document.querySelectorAll('section[data-behavior="kiosk-talk"] table.speech tbody tr')).map(r => Array.from(r.cells).slice(1).map(c => c.textContent).join("|")).join("\n")`
	conf := `0\.\d\d|1\.00`
	want := regexp.MustCompile(`^said\|voice\|` + regexp.QuoteMeta(sorry) + `\|done\n` +
		`rejected\|ear\|[a-z ]*\|(` + conf + `)\n` +
		`said\|voice\|` + regexp.QuoteMeta(tickets) + `\|done\n` +
		`heard\|ear\|tickets\|(` + conf + `)\n` +
		`said\|voice\|` + regexp.QuoteMeta(welcome) + `\|interrupted\n` +
		`heard\|ear\|hello\|(` + conf + `)$`)
	deadline := time.Now().Add(10 * time.Second)
	for got := ""; !want.MatchString(got); got, _ = b.Eval(rows).(string) {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor's speech rows:\n%s\nwant %s", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBargeInChecked: seat check refuses a bargein that names no tts
// adaptor of the behavior, at the name.
func TestBargeInChecked(t *testing.T) {
	speechtest.Require(t, "pocketsphinx_continuous")
	file := filepath.Join(t.TempDir(), "ear.seatml")
	os.WriteFile(file, []byte(`<seatml><general name="ear">
<adaptor name="ear" type="asr" input="in" bargein="voice"/>
<adaptor name="peer" type="socket" port="0"/><adaptor name="ear2" type="asr" input="in2" bargein="peer"/>
</general><state name="s"><rule><key>hello</key></rule></state></seatml>`), 0o644)
	_, stderr, code := runSeat("check", file)
	for _, want := range []string{
		`ear.seatml:2:52: adaptor "ear": bargein names no adaptor "voice" (it names a tts adaptor of this behavior)`,
		`ear.seatml:3:99: adaptor "ear2": bargein names adaptor "peer", a socket adaptor; it names a tts adaptor`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %s in\n%s", want, stderr)
		}
	}
	if code == 0 {
		t.Errorf("exit 0:\n%s", stderr)
	}
}

// TestSpeechReloadOnTheRealBinary: a reload of the talking kiosk, hearing
// a named pipe, opens the new version's recognizer once the old one has
// let the pipe go: the visitor's next "hello" is heard once, by the new
// version, which answers with its own welcome.
func TestSpeechReloadOnTheRealBinary(t *testing.T) {
	speechtest.Require(t, "espeak-ng", "sox", "pocketsphinx_continuous")
	dir := t.TempDir()
	b, err := os.ReadFile("../../examples/speech/kiosk-talk.seatml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "kiosk-talk.seatml")
	os.WriteFile(file, b, 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "visitor.pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec, control := filepath.Join(dir, "talk.jsonl"), freePort(t)
	_, stderr := startSeatIn(t, dir, "run", "--record", rec, "--control", control, "--set", "ear.input=visitor.pipe", file)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(rec)
			t.Logf("seat logged:\n%s\nrecorded:\n%s", stderr.String(), b)
		}
	})
	waitForWithin(t, 30*time.Second, func() bool {
		return strings.Contains(stderr.String(), `"to": "attract"`) && strings.Contains(stderr.String(), "\tcontrol API\t")
	})
	welcome := "Welcome back to the museum. Say tickets, map, or help."
	os.WriteFile(file, []byte(strings.Replace(string(b), "Welcome to the museum.", "Welcome back to the museum.", 1)), 0o644)
	if out, errOut, code := ctlAt(control, "reload", "kiosk-talk", "--set", "ear.input=visitor.pipe"); code != 0 {
		t.Fatalf("reload: exit %d\n%s%s", code, out, errOut)
	}
	wav := filepath.Join(dir, "visitor.wav")
	if out, err := exec.Command("espeak-ng", "-v", "en-us", "-s", "160", "-w", wav, "hello").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v\n%s", err, out)
	}
	if out, err := exec.Command("sox", wav, "-r", "16000", "-c", "1", "-b", "16", "-t", "wav", filepath.Join(dir, "visitor.pipe"), "pad", "0", "1").CombinedOutput(); err != nil {
		t.Fatalf("sox: %v\n%s", err, out)
	}
	done := `"source":"voice","text":` + strconv.Quote("done,"+welcome)
	waitForWithin(t, 30*time.Second, func() bool {
		b, _ := os.ReadFile(rec)
		return strings.Contains(string(b), done)
	})
	b, _ = os.ReadFile(rec)
	if n := strings.Count(string(b), `"source":"ear","text":"hello,`); n != 1 {
		t.Errorf("hello heard %d times, want once", n)
	}
}
