// Package record writes and reads recordings of running behaviors: one
// JSON object per line (JSON Lines), every event in, message out, rule
// fired, state entered and timer run, each with its time since the start.
// seat run --record writes them; seat replay and seat test --from read
// them. docs/tools.md describes the format.
package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/seatml/seat/interpreter"
)

// Line is one line of a recording.
type Line struct {
	// T is the time in seconds since the recording started.
	T    Seconds `json:"t"`
	Kind string  `json:"kind"`
	// Behavior names the behavior the line is about.
	Behavior string `json:"behavior,omitempty"`
	// File is a "start" line's behavior file.
	File string `json:"file,omitempty"`
	// Source is the adaptor of an event or message.
	Source string `json:"source,omitempty"`
	Peer   string `json:"peer,omitempty"`
	// Text is an event's or message's text; nil for other kinds.
	Text  *string `json:"text,omitempty"`
	Key   string  `json:"key,omitempty"`
	At    string  `json:"at,omitempty"`
	State string  `json:"state,omitempty"`
	Timer string  `json:"timer,omitempty"`
	// Wall and Seat are the header's: when the recording began (RFC 3339)
	// and seat's version.
	Wall string `json:"wall,omitempty"`
	Seat string `json:"seat,omitempty"`

	// Line is the line's number in its file (not written).
	Line int `json:"-"`
}

// Kinds of lines beyond interpreter.RecordKind's.
const (
	KindHeader = "recording" // the first line
	KindStart  = "start"     // a behavior starts: its name and file
)

// TextOf returns a line's text, or "".
func (l Line) TextOf() string {
	if l.Text == nil {
		return ""
	}
	return *l.Text
}

// Duration is T as a duration.
func (l Line) Duration() time.Duration { return time.Duration(float64(l.T) * float64(time.Second)) }

// Seconds is a time in seconds, written to the microsecond.
type Seconds float64

// MarshalJSON writes s with six decimals at most: 1.16983, not
// 1.1698303939999999.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, math.Round(float64(s)*1e6)/1e6, 'f', -1, 64), nil
}

// Writer writes a recording. It is safe for several behaviors at once.
type Writer struct {
	mu    sync.Mutex
	f     io.WriteCloser
	w     *bufio.Writer
	start time.Time
	err   error
	stop  chan struct{}
	done  chan struct{}
}

// flushEvery bounds how much of a recording a crash can lose.
const flushEvery = 100 * time.Millisecond

// Create starts a recording in file, timed from now.
func Create(file, version string) (*Writer, error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	return New(f, time.Now(), version)
}

// New starts a recording on w, timed from start. Close closes w.
func New(w io.WriteCloser, start time.Time, version string) (*Writer, error) {
	rw := &Writer{f: w, w: bufio.NewWriterSize(w, 64<<10), start: start, stop: make(chan struct{}), done: make(chan struct{})}
	rw.write(Line{Kind: KindHeader, Wall: start.UTC().Format(time.RFC3339Nano), Seat: version})
	go rw.flusher()
	return rw, rw.err
}

func (w *Writer) flusher() {
	defer close(w.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.mu.Lock()
			if w.err == nil {
				w.err = w.w.Flush()
			}
			w.mu.Unlock()
		}
	}
}

func (w *Writer) write(l Line) {
	data, err := json.Marshal(l)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if err != nil {
		w.err = err
		return
	}
	data = append(data, '\n')
	_, w.err = w.w.Write(data)
}

// Close writes out what is buffered and closes the file; it returns the
// first error the recording met.
func (w *Writer) Close() error {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.w.Flush(); w.err == nil {
		w.err = err
	}
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	return w.err
}

// Behavior returns the observer that records one behavior, after writing
// its "start" line.
func (w *Writer) Behavior(name, file string) interpreter.Observer {
	w.write(Line{T: w.since(time.Now()), Kind: KindStart, Behavior: name, File: file})
	return &observer{w: w, name: name}
}

func (w *Writer) since(t time.Time) Seconds { return Seconds(t.Sub(w.start).Seconds()) }

type observer struct {
	w    *Writer
	name string
}

func (o *observer) Observe(r interpreter.Record) { o.w.write(LineOf(o.name, o.w.start, r)) }

// LineOf is the line of a behavior's record, timed from start.
func LineOf(behavior string, start time.Time, r interpreter.Record) Line {
	l := Line{T: Seconds(r.Time.Sub(start).Seconds()), Kind: string(r.Kind), Behavior: behavior, Source: r.Source, Peer: r.Peer,
		Key: r.Key, State: r.State, Timer: r.Timer}
	switch r.Kind {
	case interpreter.RecIn, interpreter.RecOut:
		text := r.Text
		l.Text = &text
	}
	if r.At.IsValid() {
		l.At = r.At.File + ":" + strconv.Itoa(r.At.Line)
	}
	return l
}

// Read reads a recording; an error names the file and line.
func Read(name string, r io.Reader) ([]Line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var out []Line
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s:%d: not a line of a recording: %v", name, n, err)
		}
		if l.Kind == "" {
			return nil, fmt.Errorf("%s:%d: a line without a kind", name, n)
		}
		l.Line = n
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(out) == 0 || out[0].Kind != KindHeader {
		return nil, fmt.Errorf("%s:1: not a seat recording (it starts with a %q line)", name, KindHeader)
	}
	return out, nil
}

// ReadFile reads a recording from a file.
func ReadFile(file string) ([]Line, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(file, f)
}
