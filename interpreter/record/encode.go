package record

import (
	"encoding/binary"
	"strconv"
	"time"
	"unsafe"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/schema"
)

// AppendJSON appends the line as encoding/json writes it (the same fields
// in the same order, the same escapes), without reflection: the recorder
// writes several lines per event.
func (l *Line) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"t":`...)
	dst = l.T.appendJSON(dst)
	dst = appendField(dst, "kind", l.Kind, false)
	dst = appendField(dst, "behavior", l.Behavior, true)
	dst = appendField(dst, "file", l.File, true)
	dst = appendField(dst, "source", l.Source, true)
	dst = appendField(dst, "peer", l.Peer, true)
	if l.Text != nil {
		dst = appendField(dst, "text", *l.Text, false)
	}
	if l.Message {
		dst = append(dst, `,"message":true`...)
	}
	dst = appendField(dst, "key", l.Key, true)
	dst = appendField(dst, "at", l.At, true)
	dst = appendField(dst, "state", l.State, true)
	dst = appendField(dst, "timer", l.Timer, true)
	dst = appendField(dst, "detail", l.Detail, true)
	dst = appendField(dst, "wall", l.Wall, true)
	dst = appendField(dst, "seat", l.Seat, true)
	return append(dst, '}')
}

// appendRecord appends the line of a behavior's record, timed from start,
// as LineOf(behavior, start, r).AppendJSON would, without making the Line.
func appendRecord(dst []byte, behavior string, start time.Time, r *interpreter.Record) []byte {
	dst = append(dst, `{"t":`...)
	dst = Seconds(r.Time.Sub(start).Seconds()).appendJSON(dst)
	dst = appendField(dst, "kind", string(r.Kind), false)
	dst = appendField(dst, "behavior", behavior, true)
	dst = appendField(dst, "source", r.Source, true)
	dst = appendField(dst, "peer", r.Peer, true)
	if textKind(r.Kind) {
		dst = appendField(dst, "text", r.Text, false)
	} else if r.Kind == interpreter.RecRaise {
		dst = appendField(dst, "text", r.Text, true) // its data, if any
	} else if r.Kind == interpreter.RecError {
		return appendError(dst, r)
	}
	if r.Message {
		dst = append(dst, `,"message":true`...)
	}
	dst = appendField(dst, "key", r.Key, true)
	if r.At.IsValid() {
		dst = append(dst, `,"at":`...)
		dst = adaptors.AppendJSONString(dst, r.At.File)
		dst = dst[:len(dst)-1] // reopen the string for ":line"
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(r.At.Line), 10)
		dst = append(dst, '"')
	}
	dst = appendField(dst, "state", r.State, true)
	dst = appendField(dst, "timer", r.Timer, true)
	return append(dst, '}')
}

// appendError ends an error record's line: its text, what failed (key),
// the state, and the failing line of code (detail).
func appendError(dst []byte, r *interpreter.Record) []byte {
	p := r.Problem
	dst = appendField(dst, "text", p.Text(), false)
	dst = appendField(dst, "key", p.What, true)
	dst = appendField(dst, "state", r.State, true)
	dst = appendField(dst, "detail", p.Diagnostic.Detail, true)
	return append(dst, '}')
}

func appendField(dst []byte, name, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return adaptors.AppendJSONString(dst, value)
}

// The writer's queue holds entries packed into bytes: a tag, then for a
// record its behavior, its time since the start and its fields, each
// string as a length and its bytes; for a line made already, its index.
const (
	tagRecord = 'r'
	tagLine   = 'l'
)

// pack appends a behavior's record to a queue.
func pack(dst []byte, behavior string, start time.Time, r *interpreter.Record) []byte {
	dst = append(dst, tagRecord)
	dst = binary.AppendVarint(dst, int64(r.Time.Sub(start)))
	for _, s := range [...]string{behavior, string(r.Kind), r.Source, r.Peer, r.Text, r.Key, r.At.File, r.State, r.Timer} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.AppendUvarint(dst, uint64(max(r.At.Line, 0)))
	if r.Message {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// unpack reads the first entry of a queue made by pack: a record into r,
// with its behavior, or a line made already. r's strings share src's
// bytes: they are good until src is reused.
func unpack(src []byte, lines []*Line, start time.Time, r *interpreter.Record) (rest []byte, behavior string, line *Line) {
	tag := src[0]
	src = src[1:]
	if tag == tagLine {
		i, n := binary.Uvarint(src)
		return src[n:], "", lines[i]
	}
	d, n := binary.Varint(src)
	src = src[n:]
	var f [9]string
	for i := range f {
		l, n := binary.Uvarint(src)
		src = src[n:]
		f[i] = unsafe.String(unsafe.SliceData(src), int(l))
		src = src[l:]
	}
	at, n := binary.Uvarint(src)
	*r = interpreter.Record{Time: start.Add(time.Duration(d)), Kind: interpreter.RecordKind(f[1]), Source: f[2], Peer: f[3], Text: f[4], Key: f[5],
		At: schema.Pos{File: f[6], Line: int(at)}, State: f[7], Timer: f[8], Message: src[n] == 1}
	return src[n+1:], f[0], nil
}
