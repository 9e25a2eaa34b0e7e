package corba

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ByteOrder is a CDR byte order, with the values of GIOP's flag bit and of
// an encapsulation's first octet.
type ByteOrder byte

// The two byte orders.
const (
	BigEndian    ByteOrder = 0
	LittleEndian ByteOrder = 1
)

func (o ByteOrder) String() string {
	if o == LittleEndian {
		return "little endian"
	}
	return "big endian"
}

func (o ByteOrder) binary() binary.ByteOrder {
	if o == LittleEndian {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

// maxDepth bounds the nesting of TypeCodes and values (structs in
// sequences in anys ...) a Decoder follows, so hostile input cannot
// exhaust the stack.
const maxDepth = 64

// Decoder reads CDR from a byte slice. Errors are sticky: after the first
// one every read returns a zero value, Len returns 0, and Err returns that
// error (an *Error with the part being decoded and the offset).
type Decoder struct {
	buf   []byte
	pos   int // index in buf of the next byte
	base  int // index in buf that alignment is measured from
	off   int // offset of buf[0] in the outermost input, for errors and indirections
	order ByteOrder
	// part and partOf name the part being decoded (part+partOf), joined
	// only for an error.
	part, partOf string
	st           *decState // shared with the decoders of nested encapsulations
}

type decState struct {
	err   error
	depth int
	tcs   map[int]*TypeCode // complex TypeCodes decoded so far, by offset, for indirections
}

// NewDecoder returns a Decoder for b in the given byte order, with
// alignment measured from b[0] (the GIOP header's first byte for a message,
// byte 0 of an OpenRTM CdrData payload).
func NewDecoder(b []byte, order ByteOrder) *Decoder {
	x := &struct {
		d  Decoder
		st decState
	}{} // one allocation
	x.d = Decoder{buf: b, order: order, st: &x.st}
	return &x.d
}

// Err returns the first error met, or nil.
func (d *Decoder) Err() error { return d.st.err }

// Offset is the offset of the next byte from the start of the outermost
// input (the message, not a nested encapsulation).
func (d *Decoder) Offset() int { return d.off + d.pos }

// Len is the number of bytes left (0 after an error).
func (d *Decoder) Len() int {
	if d.st.err != nil {
		return 0
	}
	return len(d.buf) - d.pos
}

// Order is the byte order being read.
func (d *Decoder) Order() ByteOrder { return d.order }

// SetPart names the part being decoded in the errors that follow
// ("request header", "body of notify_connect").
func (d *Decoder) SetPart(part string) { d.part, d.partOf = part, "" }

// SetPartOf is SetPart(what + of), joined only when an error needs it
// ("results of ", op).
func (d *Decoder) SetPartOf(what, of string) { d.part, d.partOf = what, of }

// Failf records an error at the current offset, unless one was recorded
// before; a caller decoding a type of its own reports its checks with it.
func (d *Decoder) Failf(format string, args ...any) { d.failAt(d.pos, false, format, args...) }

func (d *Decoder) unsupportedf(format string, args ...any) { d.failAt(d.pos, true, format, args...) }

func (d *Decoder) failAt(pos int, unsupported bool, format string, args ...any) {
	if d.st.err == nil {
		d.st.err = &Error{Part: d.part + d.partOf, Offset: d.off + pos, Msg: fmt.Sprintf(format, args...), Unsupported: unsupported}
	}
}

// Align skips the padding up to the next multiple of n from the alignment
// base. Padding bytes are not checked: omniORB leaves garbage in them.
func (d *Decoder) Align(n int) {
	if d.st.err != nil {
		return
	}
	pad := (n - (d.pos-d.base)%n) % n
	if pad > len(d.buf)-d.pos {
		d.Failf("padding to a %d-byte boundary needs %d bytes, %d left", n, pad, len(d.buf)-d.pos)
		return
	}
	d.pos += pad
}

// take aligns to n and returns the next n bytes, or nil after an error.
func (d *Decoder) take(n int, what string) []byte {
	d.Align(n)
	if d.st.err != nil {
		return nil
	}
	if n > len(d.buf)-d.pos {
		d.Failf("%s needs %d bytes, %d left", what, n, len(d.buf)-d.pos)
		return nil
	}
	b := d.buf[d.pos : d.pos+n]
	d.pos += n
	return b
}

// ReadOctet reads an octet.
func (d *Decoder) ReadOctet() byte {
	if b := d.take(1, "octet"); b != nil {
		return b[0]
	}
	return 0
}

// ReadBoolean reads a boolean: an octet that must be 0 or 1.
func (d *Decoder) ReadBoolean() bool {
	b := d.take(1, "boolean")
	if b == nil {
		return false
	}
	if b[0] > 1 {
		d.failAt(d.pos-1, false, "boolean %#02x is neither 0 nor 1", b[0])
		return false
	}
	return b[0] == 1
}

// ReadChar reads a char: one byte of the transmission code set, passed
// through unchanged.
func (d *Decoder) ReadChar() byte {
	if b := d.take(1, "char"); b != nil {
		return b[0]
	}
	return 0
}

// ReadUShort reads an unsigned short.
func (d *Decoder) ReadUShort() uint16 {
	if b := d.take(2, "unsigned short"); b != nil {
		return d.order.binary().Uint16(b)
	}
	return 0
}

// ReadShort reads a short.
func (d *Decoder) ReadShort() int16 { return int16(d.ReadUShort()) }

// ReadULong reads an unsigned long (32 bits).
func (d *Decoder) ReadULong() uint32 {
	if b := d.take(4, "unsigned long"); b != nil {
		return d.order.binary().Uint32(b)
	}
	return 0
}

// ReadLong reads a long (32 bits).
func (d *Decoder) ReadLong() int32 { return int32(d.ReadULong()) }

// ReadULongLong reads an unsigned long long.
func (d *Decoder) ReadULongLong() uint64 {
	if b := d.take(8, "unsigned long long"); b != nil {
		return d.order.binary().Uint64(b)
	}
	return 0
}

// ReadLongLong reads a long long.
func (d *Decoder) ReadLongLong() int64 { return int64(d.ReadULongLong()) }

// ReadFloat reads a float.
func (d *Decoder) ReadFloat() float32 {
	if b := d.take(4, "float"); b != nil {
		return math.Float32frombits(d.order.binary().Uint32(b))
	}
	return 0
}

// ReadDouble reads a double.
func (d *Decoder) ReadDouble() float64 {
	if b := d.take(8, "double"); b != nil {
		return math.Float64frombits(d.order.binary().Uint64(b))
	}
	return 0
}

// ReadLength reads the unsigned long length of a sequence of what whose
// elements take at least elemSize bytes each, and checks it against the
// bytes left, so that nothing is allocated for a length the input cannot
// hold.
func (d *Decoder) ReadLength(what string, elemSize int) int {
	d.Align(4)
	if d.st.err != nil {
		return 0
	}
	if len(d.buf)-d.pos < 4 {
		d.Failf("%s length needs 4 bytes, %d left", what, len(d.buf)-d.pos)
		return 0
	}
	b := d.buf[d.pos : d.pos+4]
	d.pos += 4
	at, n := d.pos-4, d.order.binary().Uint32(b)
	left := len(d.buf) - d.pos
	if elemSize < 1 {
		elemSize = 1
	}
	if uint64(n)*uint64(elemSize) > uint64(left) {
		if elemSize == 1 {
			d.failAt(at, false, "%s length %d exceeds the %d bytes left", what, n, left)
		} else {
			d.failAt(at, false, "%s length %d needs at least %d bytes, %d left", what, n, uint64(n)*uint64(elemSize), left)
		}
		return 0
	}
	return int(n)
}

// ReadBytes reads n raw bytes (a copy).
func (d *Decoder) ReadBytes(n int, what string) []byte {
	if d.st.err != nil {
		return nil
	}
	if n > len(d.buf)-d.pos {
		d.Failf("%s needs %d bytes, %d left", what, n, len(d.buf)-d.pos)
		return nil
	}
	b := make([]byte, n)
	copy(b, d.buf[d.pos:])
	d.pos += n
	return b
}

// ReadOctetSeq reads a sequence<octet> (a copy), naming it what in errors.
func (d *Decoder) ReadOctetSeq(what string) []byte {
	n := d.ReadLength(what, 1)
	return d.ReadBytes(n, what)
}

// ReadString reads a string: its length including the terminating NUL,
// its bytes and the NUL. The bytes are passed through unchanged (UTF-8
// between omniORB peers with the ISO-8859-1 native code set).
func (d *Decoder) ReadString(what string) string {
	d.Align(4)
	at := d.pos
	n := d.ReadLength(what, 1)
	if d.st.err != nil {
		return ""
	}
	if n == 0 {
		d.failAt(at, false, "%s length 0: a CDR string holds at least its terminating NUL", what)
		return ""
	}
	b := d.buf[d.pos : d.pos+n]
	if b[n-1] != 0 {
		d.failAt(d.pos+n-1, false, "%s of length %d does not end in NUL (%#02x)", what, n, b[n-1])
		return ""
	}
	d.pos += n
	return string(b[:n-1])
}

// ReadEncapsulation reads a sequence<octet> holding an encapsulation and
// returns a Decoder for its contents, positioned after the byte-order octet
// that it reads; alignment there is measured from that octet. Errors in
// the returned Decoder are this Decoder's errors too.
func (d *Decoder) ReadEncapsulation(what string) *Decoder {
	n := d.ReadLength(what, 1)
	e := &Decoder{off: d.off + d.pos, order: d.order, part: d.part, partOf: d.partOf, st: d.st}
	if d.st.err != nil {
		return e
	}
	if n == 0 {
		d.Failf("%s is an empty encapsulation, without its byte-order octet", what)
		return e
	}
	e.buf = d.buf[d.pos : d.pos+n]
	d.pos += n
	switch o := e.buf[0]; o {
	case 0, 1:
		e.order = ByteOrder(o)
		e.pos = 1
	default:
		e.Failf("%s: byte-order octet %#02x is neither 0 nor 1", what, o)
	}
	return e
}

// enter counts one more level of nesting; it fails beyond maxDepth.
func (d *Decoder) enter(what string) bool {
	if d.st.err != nil {
		return false
	}
	if d.st.depth >= maxDepth {
		d.Failf("%s nested deeper than %d levels", what, maxDepth)
		return false
	}
	d.st.depth++
	return true
}

func (d *Decoder) leave() { d.st.depth-- }
