package record

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// TestRoundTrip: what a behavior's observer is told is written as lines
// timed from the start, to the microsecond, and read back the same.
func TestRoundTrip(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	f, _ := os.Create(file)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w, err := New(f, t0, "test")
	if err != nil {
		t.Fatal(err)
	}
	o := w.Behavior("受付", "reception.seatml")
	o.Observe(interpreter.Record{Time: t0.Add(1169830394 * time.Nanosecond), Kind: interpreter.RecIn, Source: "音声", Peer: "127.0.0.1:1", Text: "はい,0.9"})
	o.Observe(interpreter.Record{Time: t0.Add(2 * time.Second), Kind: interpreter.RecFire, At: schema.Pos{File: "reception.seatml", Line: 73, Col: 5}})
	o.Observe(interpreter.Record{Time: t0.Add(2 * time.Second), Kind: interpreter.RecOut, Source: "音声", Text: ""})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), `{"t":1.16983,"kind":"in","behavior":"受付","source":"音声","peer":"127.0.0.1:1","text":"はい,0.9"}`) ||
		!strings.Contains(string(data), `"kind":"fire","behavior":"受付","at":"reception.seatml:73"}`) ||
		!strings.Contains(string(data), `"kind":"out","behavior":"受付","source":"音声","text":""}`) {
		t.Errorf("recording:\n%s", data)
	}
	lines, warning, err := ReadFile(file)
	if err != nil || warning != "" {
		t.Fatal(err, warning)
	}
	if len(lines) != 5 || lines[0].Kind != KindHeader || lines[1].Kind != KindStart || lines[1].File != "reception.seatml" ||
		lines[2].TextOf() != "はい,0.9" || lines[2].Duration() != 1169830*time.Microsecond || lines[2].Line != 3 ||
		lines[4].Text == nil || lines[4].TextOf() != "" {
		t.Errorf("read back: %+v", lines)
	}
}

// TestRecordingLeavesOutATracesDetails: a machine with a trace and a
// recorder tells both the same records; the trace shows the details (a
// state exited, a lifecycle step), the recording leaves them out, and a
// reply is recorded as an "out" line to its peer as before.
func TestRecordingLeavesOutATracesDetails(t *testing.T) {
	prog, diags := seatml.LoadBytes("t.seatml", []byte(`<seatml><general name="t"><adaptor name="chat" type="socket" role="server" port="0"/></general>
<state name="a"><rule><key>go</key><message sendto="chat">行く</message><statetransition>b</statetransition></rule></state>
<state name="b"><onentry><message sendto="chat">着いた</message></onentry></state></seatml>`), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	file := filepath.Join(t.TempDir(), "r.jsonl")
	f, _ := os.Create(file)
	w, err := New(f, time.Now(), "test")
	if err != nil {
		t.Fatal(err)
	}
	var trace []string
	m, err := interpreter.New(prog, interpreter.Options{Observer: w.Behavior("t", "t.seatml"), Trace: func(s string) { trace = append(trace, s) }})
	if err != nil {
		t.Fatal(err)
	}
	h := interpreter.NewHand(m, nil)
	h.Begin()
	h.Dispatch(adaptors.Event{Source: "chat", Text: "go"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trace, " "); !strings.Contains(got, "lua:open") || !strings.Contains(got, "exit:a") || !strings.Contains(got, "send:chat:行く") {
		t.Errorf("trace %q: no lifecycle step, exit or send", got)
	}
	lines, _, err := ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range lines {
		kinds = append(kinds, l.Kind)
	}
	if got, want := strings.Join(kinds, " "), "recording start state in fire out state out"; got != want {
		t.Errorf("recorded kinds %q, want %q", got, want)
	}
}

// TestReadErrors name the file and line.
func TestReadErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "r.jsonl:1: not a seat recording",
		`{"t":0,"kind":"start"}` + "\n": "r.jsonl:1: not a seat recording",
		`{"t":0,"kind":"recording"}` + "\nx\n" + `{"t":1,"kind":"in"}`: "r.jsonl:2: not a line of a recording",
		`{"t":0,"kind":"recording"}` + "\n{\"t\":1}\n":                 "r.jsonl:2: a line without a kind",
	} {
		if _, _, err := Read("r.jsonl", strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// TestReadCutRecording: a last line cut short by a crash is left out with
// a warning naming it; the lines before it are read.
func TestReadCutRecording(t *testing.T) {
	in := `{"t":0,"kind":"recording"}` + "\n" + `{"t":1,"kind":"in","text":"hi"}` + "\n" + `{"t":2,"kind":"out","te`
	lines, warning, err := Read("r.jsonl", strings.NewReader(in))
	if err != nil || len(lines) != 2 || warning != "r.jsonl:3: the last line is cut short (seat stopped while writing it?); using the 2 lines before it" {
		t.Errorf("lines %d, warning %q, err %v", len(lines), warning, err)
	}
}

// FuzzAppendJSON: the recorder's encoder writes what encoding/json writes,
// for any text (Japanese, control characters, invalid UTF-8, <>&, U+2028).
func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{"", "ping", "はい,0.93", "a\"b\\c\n\r\t\b\f\x00\x1f", "<script>&amp;", "\u2028\u2029", "\xff\xfe", "名前は\xe3\x81です", "😀"} {
		f.Add(s, 1.1698303939, s)
	}
	f.Fuzz(func(t *testing.T, text string, secs float64, peer string) {
		message := len(text)%2 == 1 // a structured message's JSON, or a line
		l := Line{T: Seconds(secs), Kind: "in", Behavior: "受付", Source: peer, Peer: peer, Text: &text, Message: message, Key: text, At: "f.seatml:3", State: text}
		want, err := json.Marshal(l)
		if err != nil {
			t.Skip() // NaN and infinities are not times
		}
		if got := l.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON:\n%s\nencoding/json:\n%s", got, want)
		}
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if math.Abs(secs) > 1e9 || math.IsNaN(secs) {
			return // beyond time.Duration
		}
		for _, kind := range []interpreter.RecordKind{interpreter.RecIn, interpreter.RecFire, interpreter.RecState, interpreter.RecError} {
			r := interpreter.Record{Time: start.Add(time.Duration(secs * 1e9)), Kind: kind, Source: peer, Peer: peer, Text: text, Message: message, Key: text,
				At: schema.Pos{File: text, Line: 7, Col: 1}, State: text, Timer: peer}
			if kind == interpreter.RecError {
				r = interpreter.Record{Time: r.Time, Kind: kind, Peer: peer, State: text, Problem: &interpreter.Problem{What: "script failed",
					Diagnostic: schema.Diagnostic{Pos: schema.Pos{File: "f.seatml", Line: 3}, Msg: text, Detail: schema.Snippet(3, text, 2)}}}
			}
			want, _ := json.Marshal(LineOf("受付", start, r))
			if got := appendRecord(nil, "受付", start, &r); string(got) != string(want) {
				t.Errorf("appendRecord:\n%s\nencoding/json:\n%s", got, want)
			}
			if kind == interpreter.RecError {
				continue // the writer queues an error as a line (Observe), not packed
			}
			// What the writer's queue gives back is the same line.
			var back interpreter.Record
			rest, behavior, line := unpack(pack(nil, "受付", start, &r), nil, start, &back)
			if got := appendRecord(nil, behavior, start, &back); string(got) != string(want) || len(rest) != 0 || line != nil {
				t.Errorf("packed and unpacked:\n%s\nencoding/json:\n%s", got, want)
			}
		}
	})
}

// BenchmarkRecord: what the recorder costs a machine per record, and its
// writer per line.
func BenchmarkRecord(b *testing.B) {
	w, err := New(nopCloser{io.Discard}, time.Now(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	o := w.Behavior("bench", "b.seatml")
	r := interpreter.Record{Time: time.Now(), Kind: interpreter.RecIn, Source: "chat0", Peer: "127.0.0.1:40000", Text: "ping"}
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(r)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// TestDebuggerLines: a variable the debugger set and a pause it ended
// are written with their text (the value, the seconds), as LineOf
// writes them.
func TestDebuggerLines(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	f, _ := os.Create(file)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w, err := New(f, t0, "test")
	if err != nil {
		t.Fatal(err)
	}
	o := w.Behavior("受付", "reception.seatml")
	recs := []interpreter.Record{
		{Time: t0.Add(time.Second), Kind: interpreter.RecSet, Key: "guest", Text: `"田中"`},
		{Time: t0.Add(3 * time.Second), Kind: interpreter.RecPaused, Key: "breakpoint 1: entering 確認", Text: "2.5"},
	}
	for _, r := range recs {
		o.Observe(r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	for _, r := range recs {
		l := LineOf("受付", t0, r)
		want := string(l.AppendJSON(nil))
		if !strings.Contains(string(data), want+"\n") {
			t.Errorf("no line %s in\n%s", want, data)
		}
	}
	if !strings.Contains(string(data), `{"t":1,"kind":"set","behavior":"受付","text":"\"田中\"","key":"guest"}`) {
		t.Errorf("the set's line:\n%s", data)
	}
}
