package record

import (
	"encoding/binary"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

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
	if r.Kind == interpreter.RecIn || r.Kind == interpreter.RecOut || r.Kind == interpreter.RecAnswer {
		dst = appendField(dst, "text", r.Text, false)
	} else if r.Kind == interpreter.RecRaise {
		dst = appendField(dst, "text", r.Text, true) // its data, if any
	}
	if r.Message {
		dst = append(dst, `,"message":true`...)
	}
	dst = appendField(dst, "key", r.Key, true)
	if r.At.IsValid() {
		dst = append(dst, `,"at":`...)
		dst = appendString(dst, r.At.File)
		dst = dst[:len(dst)-1] // reopen the string for ":line"
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(r.At.Line), 10)
		dst = append(dst, '"')
	}
	dst = appendField(dst, "state", r.State, true)
	dst = appendField(dst, "timer", r.Timer, true)
	return append(dst, '}')
}

func appendField(dst []byte, name, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return appendString(dst, value)
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string with encoding/json's escapes:
// control characters, <, > and & as \u00XX, U+2028 and U+2029 escaped, and
// invalid UTF-8 as U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
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
