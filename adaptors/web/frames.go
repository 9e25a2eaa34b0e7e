package web

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/seatml/seat/adaptors"
)

// After the handshake (gorilla's Upgrader) a page's connection is read
// and written here, by RFC 6455 §5, with no extension negotiated: the
// reader can then tell when more messages are already buffered and hand
// them to the behavior together (one pass, one write of the replies), and
// every frame the server sends goes through one outbox, so that a pong or
// a close reply never races with a reply written from the behavior's
// goroutine (client.writeNow).

// Opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0
	opText         = websocket.TextMessage
	opBinary       = websocket.BinaryMessage
	opClose        = websocket.CloseMessage
	opPing         = websocket.PingMessage
	opPong         = websocket.PongMessage
)

// maxControl is the longest payload of a control frame (§5.5).
const maxControl = 125

// errTooBig: a message longer than the reader's limit; the connection is
// closed with code 1009.
var errTooBig = errors.New("message too big")

// protocolError: the peer broke RFC 6455; the connection is closed with
// code 1002.
type protocolError string

func (e protocolError) Error() string { return "WebSocket protocol error: " + string(e) }

// peerClosed is the peer's close frame: the reply echoes its code.
type peerClosed struct {
	code   int // websocket.CloseNoStatusReceived when the frame had none
	reason string
}

func (e *peerClosed) Error() string {
	return fmt.Sprintf("closed by the peer (%d %s)", e.code, e.reason)
}

// reply is the close frame's payload that answers it.
func (e *peerClosed) reply() []byte {
	if e.code == websocket.CloseNoStatusReceived {
		return nil
	}
	return websocket.FormatCloseMessage(e.code, "")
}

// frameReader reads a page's messages; one goroutine at a time uses it.
type frameReader struct {
	br  *bufio.Reader
	max int
	msg []byte // the message being read, reused: valid until the next call
	ctl [maxControl]byte
	// onPing is given each ping's payload (to queue the pong).
	onPing func(payload []byte)
}

func newFrameReader(r io.Reader, max int, onPing func([]byte)) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 4096), max: max, onPing: onPing}
}

// frameHeader is a frame's first bytes, parsed.
type frameHeader struct {
	fin  bool
	op   int
	n    int // payload length
	mask [4]byte
	size int // the header's length in bytes
}

// errShort: the bytes given do not hold the whole header.
var errShort = errors.New("short header")

// parseHeader parses a client's frame header at the start of b.
func parseHeader(b []byte) (h frameHeader, err error) {
	if len(b) < 2 {
		return h, errShort
	}
	h.fin = b[0]&0x80 != 0
	h.op = int(b[0] & 0x0f)
	if b[0]&0x70 != 0 {
		return h, protocolError("reserved bits set, and no extension was agreed")
	}
	if b[1]&0x80 == 0 {
		return h, protocolError("a client's frame must be masked")
	}
	n, size := uint64(b[1]&0x7f), 2
	switch n {
	case 126:
		size += 2
		if len(b) < size {
			return h, errShort
		}
		n = uint64(binary.BigEndian.Uint16(b[2:]))
	case 127:
		size += 8
		if len(b) < size {
			return h, errShort
		}
		n = binary.BigEndian.Uint64(b[2:])
		if n>>63 != 0 {
			return h, protocolError("payload length has its top bit set")
		}
	}
	if len(b) < size+4 {
		return h, errShort
	}
	copy(h.mask[:], b[size:size+4])
	h.size = size + 4
	if n > 1<<30 { // far past any limit: an int of 32 bits holds it, and a message's length added
		n = 1 << 30
	}
	h.n = int(n)
	return h, nil
}

// header reads the next frame's header.
func (r *frameReader) header() (frameHeader, error) {
	need := 2
	for {
		b, err := r.br.Peek(need)
		if err != nil {
			if len(b) == 0 && need == 2 && errors.Is(err, io.EOF) {
				return frameHeader{}, io.EOF
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return frameHeader{}, err
		}
		h, err := parseHeader(b)
		if err == errShort {
			need = 2 + 4
			switch b[1] & 0x7f {
			case 126:
				need += 2
			case 127:
				need += 8
			}
			continue
		}
		if err != nil {
			return h, err
		}
		_, _ = r.br.Discard(h.size)
		return h, nil
	}
}

// payload reads h's payload into dst, unmasked.
func (r *frameReader) payload(h frameHeader, dst []byte) error {
	if _, err := io.ReadFull(r.br, dst); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	unmask(h.mask, dst)
	return nil
}

// unmask applies a frame's masking key to its whole payload (§5.3).
func unmask(key [4]byte, b []byte) {
	k := uint64(binary.LittleEndian.Uint32(key[:]))
	k |= k << 32
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k)
	}
	for ; i < len(b); i++ {
		b[i] ^= key[i&3]
	}
}

// next returns the next text or binary message, whole (its fragments
// joined), answering pings on the way. A close frame from the peer is a
// *peerClosed error; a broken frame a protocolError; a message over the
// limit errTooBig.
func (r *frameReader) next() (op int, data []byte, err error) {
	if cap(r.msg) > 8<<10 {
		r.msg = nil // a large message's buffer is not kept for the connection's life
	}
	r.msg = r.msg[:0]
	for {
		h, err := r.header()
		if err != nil {
			return 0, nil, err
		}
		if h.op >= opClose {
			if err := r.control(h); err != nil {
				return 0, nil, err
			}
			continue
		}
		switch {
		case h.op == opContinuation && op == 0:
			return 0, nil, protocolError("a continuation frame with no message to continue")
		case h.op == opText || h.op == opBinary:
			if op != 0 {
				return 0, nil, protocolError("a new message before the last one's final frame")
			}
			op = h.op
		case h.op != opContinuation:
			return 0, nil, protocolError(fmt.Sprintf("unknown opcode %d", h.op))
		}
		if len(r.msg)+h.n > r.max {
			return 0, nil, errTooBig
		}
		start := len(r.msg)
		r.msg = append(r.msg, make([]byte, h.n)...)
		if err := r.payload(h, r.msg[start:]); err != nil {
			return 0, nil, err
		}
		if h.fin {
			return op, r.msg, nil
		}
	}
}

// control handles a control frame: a ping is answered, a pong ignored, a
// close returned as an error.
func (r *frameReader) control(h frameHeader) error {
	if !h.fin || h.n > maxControl {
		return protocolError("a control frame must be final and at most 125 bytes")
	}
	p := r.ctl[:h.n]
	if err := r.payload(h, p); err != nil {
		return err
	}
	switch h.op {
	case opPing:
		r.onPing(p)
		return nil
	case opPong:
		return nil
	case opClose:
		return closeOf(p)
	}
	return protocolError(fmt.Sprintf("unknown opcode %d", h.op))
}

// closeOf reads a close frame's payload: a status code and a UTF-8 reason,
// or nothing.
func closeOf(p []byte) error {
	switch {
	case len(p) == 0:
		return &peerClosed{code: websocket.CloseNoStatusReceived}
	case len(p) == 1:
		return protocolError("a close frame with a one-byte payload")
	}
	code := int(binary.BigEndian.Uint16(p))
	if !validCloseCode(code) {
		return protocolError(fmt.Sprintf("close code %d may not be sent", code))
	}
	if !utf8.Valid(p[2:]) {
		return protocolError("a close reason that is not UTF-8")
	}
	return &peerClosed{code: code, reason: string(p[2:])}
}

// validCloseCode reports whether a peer may send code (§7.4).
func validCloseCode(code int) bool {
	switch {
	case code >= 3000 && code <= 4999:
		return true
	case code < 1000 || code > 1014:
		return false
	}
	return code != 1004 && code != 1005 && code != 1006
}

// ready reports whether a whole single-frame text message is buffered,
// so that next will return it without waiting for input.
func (r *frameReader) ready() bool {
	n := r.br.Buffered()
	if n < 6 {
		return false
	}
	b, _ := r.br.Peek(n)
	h, err := parseHeader(b)
	return err == nil && h.fin && h.op == opText && h.size+h.n <= n && h.n <= r.max
}

// textFrame encodes a server's text frame (RFC 6455 §5.2: final, not
// masked) around payload.
func textFrame(payload []byte) string { return encodeFrame(websocket.TextMessage, payload) }

// controlFrame encodes a ping, pong or close frame; payload is at most
// 125 bytes, longer is cut.
func controlFrame(kind int, payload []byte) string {
	return encodeFrame(kind, payload[:min(len(payload), 125)])
}

// appendFrame appends an encoded frame of the outbox as it is written.
func appendFrame(dst []byte, f string) []byte { return append(dst, f...) }

func encodeFrame(kind int, payload []byte) string {
	var b strings.Builder
	n := len(payload)
	b.Grow(n + 10)
	b.WriteByte(0x80 | byte(kind))
	switch {
	case n < 126:
		b.WriteByte(byte(n))
	case n <= 0xffff:
		b.Write([]byte{126, byte(n >> 8), byte(n)})
	default:
		b.Write([]byte{127, 0, 0, 0, 0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	}
	b.Write(payload)
	return b.String()
}

// messageFrame is the text frame of a "message" frame (SEATML §10.3),
// the JSON written as encoding/json writes frame{Type: "message", Text:
// text, Adaptor: a.name}, byte for byte (TestMessageFrameIsJSONs), without
// its reflection: it is every reply's.
func (a *Adaptor) messageFrame(text string) string { return messageFrameOf(a.name, text, false) }

// messageFrameOf is a message frame for a message to adaptor; sent marks
// one the behavior sent to another adaptor (show=), which the page's log
// shows as said.
func messageFrameOf(adaptor, text string, sent bool) string {
	var scratch [256]byte
	b := append(scratch[:0], `{"type":"message","text":`...)
	b = adaptors.AppendJSONString(b, text)
	b = append(b, `,"adaptor":`...)
	b = adaptors.AppendJSONString(b, adaptor)
	if sent {
		b = append(b, `,"sent":true`...)
	}
	b = append(b, '}')
	return textFrame(b)
}
