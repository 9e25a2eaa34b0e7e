package adaptors

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// DefaultMaxLine is the default longest line, in bytes, without its end.
const DefaultMaxLine = 65536

// ErrLineTooLong is returned by LineReader.Next for a line over the limit.
var ErrLineTooLong = errors.New("line too long")

// ErrPartialLine is returned by LineReader.Next when input ends inside a
// line; the partial line is returned with it.
var ErrPartialLine = errors.New("input ended inside a line")

// LineReader splits a stream into lines (LF or CRLF), bounded in length,
// with invalid UTF-8 and NUL bytes replaced by U+FFFD. It allocates only
// for lines longer than its buffer.
type LineReader struct {
	r        *bufio.Reader
	max      int
	buf      []byte
	skip     bool // the rest of an over-long line is still to be discarded
	repaired bool
}

// NewLineReader reads lines of at most max bytes from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LineReader{r: bufio.NewReaderSize(r, 4096), max: max}
}

// Repaired reports whether the line Next returned last had invalid UTF-8
// or NUL bytes replaced.
func (lr *LineReader) Repaired() bool { return lr.repaired }

// Next returns the next line without its end. At the end of input it
// returns io.EOF, or the partial last line with ErrPartialLine. After
// ErrLineTooLong, the next call skips the rest of that line.
func (lr *LineReader) Next() (string, error) {
	for lr.skip {
		_, err := lr.r.ReadSlice('\n')
		switch {
		case err == nil:
			lr.skip = false
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return "", err
		}
	}
	lr.buf = lr.buf[:0]
	lr.repaired = false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		lr.buf = append(lr.buf, chunk...)
		if len(lr.buf) > lr.max+2 || (err == nil && len(trimEOL(lr.buf)) > lr.max) {
			lr.skip = err != nil
			return "", fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, lr.max)
		}
		switch {
		case err == nil:
			return lr.clean(trimEOL(lr.buf)), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 {
				return "", io.EOF
			}
			if len(trimEOL(lr.buf)) > lr.max {
				return "", fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, lr.max)
			}
			return lr.clean(trimEOL(lr.buf)), ErrPartialLine
		default:
			return "", err
		}
	}
}

// Ready reports whether a whole line is already buffered, so that Next
// will not wait for input.
func (lr *LineReader) Ready() bool {
	n := lr.r.Buffered()
	if n == 0 || lr.skip {
		return false
	}
	b, _ := lr.r.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

func (lr *LineReader) clean(b []byte) string {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		return string(b)
	}
	s, _ := CleanText(string(b))
	lr.repaired = true
	return s
}

// WriteLine writes text as one line: each line break inside it (LF, CR or
// CRLF) becomes one space, then LF ends it. A line protocol must not let
// one message become several events on the other side.
func WriteLine(w *bufio.Writer, text string) {
	w.Write(AppendLine(w.AvailableBuffer(), text))
}

// AppendLine appends text to dst as WriteLine writes it.
func AppendLine(dst []byte, text string) []byte {
	for {
		i := lineBreak(text)
		if i < 0 {
			break
		}
		dst = append(dst, text[:i]...)
		dst = append(dst, ' ')
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	dst = append(dst, text...)
	return append(dst, '\n')
}

// lineBreak is strings.IndexAny(s, "\r\n") by two IndexByte searches,
// which look at many bytes at a time where IndexAny decodes rune by rune:
// every line written goes through it (13 % of the socket path's
// instructions went to IndexAny).
func lineBreak(s string) int {
	i := strings.IndexByte(s, '\n')
	end := i
	if i < 0 {
		end = len(s)
	}
	if j := strings.IndexByte(s[:end], '\r'); j >= 0 {
		return j
	}
	return i
}
