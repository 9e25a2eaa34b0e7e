// Package record writes and reads recordings of running behaviors: one
// JSON object per line (JSON Lines), every event in, message out, rule
// fired, state entered and timer run, each with its time since the start.
// seat run --record writes them; seat replay and seat test --from read
// them. docs/tools.md describes the format.
package record

import (
	"bufio"
	"encoding/binary"
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
	Text *string `json:"text,omitempty"`
	// Message marks an event whose text is a structured message (a ROS
	// message) written as JSON.
	Message bool   `json:"message,omitempty"`
	Key     string `json:"key,omitempty"`
	At      string `json:"at,omitempty"`
	State   string `json:"state,omitempty"`
	Timer   string `json:"timer,omitempty"`
	// Detail is an error line's failing line of code, numbered, with a
	// caret under what failed (schema.Diagnostic's Detail).
	Detail string `json:"detail,omitempty"`
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
func (s Seconds) MarshalJSON() ([]byte, error) { return s.appendJSON(nil), nil }

// appendJSON writes what strconv.AppendFloat(round(s*1e6)/1e6, 'f', -1)
// writes, from the whole microseconds: below 2^53 µs the shortest decimal
// of k/1e6 is k/1e6 itself, trailing zeros dropped (FuzzAppendJSON).
func (s Seconds) appendJSON(dst []byte) []byte {
	k := math.Round(float64(s) * 1e6)
	if math.IsNaN(k) || math.Abs(k) >= 1<<53 {
		return strconv.AppendFloat(dst, k/1e6, 'f', -1, 64)
	}
	n := int64(k)
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	dst = strconv.AppendInt(dst, n/1e6, 10)
	frac := n % 1e6
	if frac == 0 {
		return dst
	}
	var digits [7]byte
	digits[0] = '.'
	for i := 6; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	end := 7
	for digits[end-1] == '0' {
		end--
	}
	return append(dst, digits[:end]...)
}

// Writer writes a recording. It is safe for several behaviors at once.
// An observer only packs what it is told into a queue of bytes (no
// pointers for the collector to follow, nothing to encode), under a lock
// nothing else holds for longer than a swap; the writer's goroutine turns
// the queue into JSON lines and writes them, so the machine never waits
// for JSON or for the disk, unless the disk falls maxPending bytes behind:
// a recording never loses a line, it slows the behaviors down to the
// disk's pace instead.
type Writer struct {
	mu      sync.Mutex
	cond    sync.Cond // signalled when the queue is taken
	pending []byte    // packed entries (pack)
	lines   []*Line   // lines made already, by their index in pending
	spare   []byte
	stopped bool

	f     io.WriteCloser
	w     *bufio.Writer // the writer's goroutine's, and Close's after it
	buf   []byte
	start time.Time
	err   error // under mu
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

const (
	// flushEvery bounds how much of a recording a crash can lose.
	flushEvery = 100 * time.Millisecond
	// kickAt is how many queued bytes wake the writer before its tick,
	// and maxPending how many make observers wait for it.
	kickAt     = 256 << 10
	maxPending = 8 << 20
)

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
	rw := &Writer{f: w, w: bufio.NewWriterSize(w, 64<<10), start: start, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	rw.cond.L = &rw.mu
	rw.addLine(&Line{Kind: KindHeader, Wall: start.UTC().Format(time.RFC3339Nano), Seat: version})
	go rw.run()
	return rw, nil
}

// addRecord queues a behavior's record.
func (w *Writer) addRecord(behavior string, r *interpreter.Record) {
	w.mu.Lock()
	w.waitRoom()
	w.pending = pack(w.pending, behavior, w.start, r)
	w.queued()
}

// addLine queues a line made already.
func (w *Writer) addLine(l *Line) {
	w.mu.Lock()
	w.waitRoom()
	w.pending = append(w.pending, tagLine)
	w.pending = binary.AppendUvarint(w.pending, uint64(len(w.lines)))
	w.lines = append(w.lines, l)
	w.queued()
}

// waitRoom waits, under mu, while the writer is maxPending bytes behind.
func (w *Writer) waitRoom() {
	for len(w.pending) >= maxPending && !w.stopped {
		w.cond.Wait()
	}
}

// queued unlocks mu after an entry was queued, and wakes the writer when
// much is waiting.
func (w *Writer) queued() {
	n := len(w.pending)
	w.mu.Unlock()
	if n >= kickAt {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// run writes what is queued every flushEvery, or sooner when much is.
func (w *Writer) run() {
	defer close(w.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		case <-w.kick:
		}
		w.writeQueued()
	}
}

// writeQueued writes the queued lines and flushes them to the file.
func (w *Writer) writeQueued() {
	w.mu.Lock()
	list, lines := w.pending, w.lines
	w.pending, w.lines = w.spare[:0], nil
	failed := w.err != nil
	w.cond.Broadcast()
	w.mu.Unlock()
	var err error
	if !failed {
		var r interpreter.Record
		for rest := list; len(rest) > 0 && err == nil; {
			var behavior string
			var line *Line
			rest, behavior, line = unpack(rest, lines, w.start, &r)
			if line != nil {
				w.buf = line.AppendJSON(w.buf[:0])
			} else {
				w.buf = appendRecord(w.buf[:0], behavior, w.start, &r)
			}
			w.buf = append(w.buf, '\n')
			_, err = w.w.Write(w.buf)
		}
		if err == nil {
			err = w.w.Flush()
		}
	}
	w.mu.Lock()
	if cap(list) <= maxPending*2 {
		w.spare = list
	}
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// Close writes out what is queued and closes the file; it returns the
// first error the recording met.
func (w *Writer) Close() error {
	close(w.stop)
	<-w.done
	w.writeQueued()
	w.mu.Lock()
	w.stopped = true
	w.cond.Broadcast()
	err := w.err
	w.mu.Unlock()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Behavior returns the observer that records one behavior, after writing
// its "start" line.
func (w *Writer) Behavior(name, file string) interpreter.Observer {
	w.addLine(&Line{T: w.since(time.Now()), Kind: KindStart, Behavior: name, File: file})
	return &observer{w: w, name: name}
}

func (w *Writer) since(t time.Time) Seconds { return Seconds(t.Sub(w.start).Seconds()) }

type observer struct {
	w    *Writer
	name string
}

func (o *observer) Observe(r interpreter.Record) {
	switch {
	case r.Kind.Detail(): // a trace's, not a recording's
	case r.Kind == interpreter.RecError: // rare, and more than a record packs
		l := LineOf(o.name, o.w.start, r)
		o.w.addLine(&l)
	default:
		o.w.addRecord(o.name, &r)
	}
}

// textKind reports whether a record of kind k is written with its text,
// empty or not: an event's, a message's, an answer's, a value the
// debugger set, a pause's length.
func textKind(k interpreter.RecordKind) bool {
	switch k {
	case interpreter.RecIn, interpreter.RecOut, interpreter.RecAnswer, interpreter.RecSet, interpreter.RecPaused:
		return true
	}
	return false
}

// LineOf is the line of a behavior's record, timed from start.
func LineOf(behavior string, start time.Time, r interpreter.Record) Line {
	l := Line{T: Seconds(r.Time.Sub(start).Seconds()), Kind: string(r.Kind), Behavior: behavior, Source: r.Source, Peer: r.Peer,
		Key: r.Key, State: r.State, Timer: r.Timer, Message: r.Message}
	switch {
	case textKind(r.Kind):
		text := r.Text
		l.Text = &text
	case r.Kind == interpreter.RecRaise:
		if r.Text != "" {
			text := r.Text
			l.Text = &text
		}
	case r.Kind == interpreter.RecError:
		text := r.Problem.Text()
		l.Text, l.Key, l.Detail = &text, r.Problem.What, r.Problem.Diagnostic.Detail
	}
	if r.At.IsValid() {
		l.At = r.At.File + ":" + strconv.Itoa(r.At.Line)
	}
	return l
}

// Read reads a recording; an error names the file and line. A last line
// that does not parse is not an error but a warning: a recording cut by a
// crash (kill -9, power loss) ends inside a line, and what comes before
// it is whole.
func Read(name string, r io.Reader) (lines []Line, warning string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var bad error
	badLine := 0
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if bad != nil { // the line that did not parse was not the last
			return nil, "", fmt.Errorf("%s:%d: not a line of a recording: %v", name, badLine, bad)
		}
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			bad, badLine = err, n
			continue
		}
		if l.Kind == "" {
			return nil, "", fmt.Errorf("%s:%d: a line without a kind", name, n)
		}
		l.Line = n
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("%s: %v", name, err)
	}
	if len(lines) == 0 || lines[0].Kind != KindHeader {
		return nil, "", fmt.Errorf("%s:1: not a seat recording (it starts with a %q line)", name, KindHeader)
	}
	if bad != nil {
		warning = fmt.Sprintf("%s:%d: the last line is cut short (seat stopped while writing it?); using the %d lines before it", name, badLine, len(lines))
	}
	return lines, warning, nil
}

// ReadFile reads a recording from a file (see Read).
func ReadFile(file string) (lines []Line, warning string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	return Read(file, f)
}
