package corba

import "math"

// Encoder writes CDR. The primitive writes cannot fail; the writes driven
// by a TypeCode return an error when the value does not fit the type.
type Encoder struct {
	buf       []byte
	base      int // index in buf that alignment is measured from
	order     ByteOrder
	bodyAlign int               // alignment due before the next write (a GIOP 1.2 body)
	message   bool              // buf starts with a GIOP header whose size Bytes fills in
	tcOpen    map[*TypeCode]int // complex TypeCodes being written, by offset, for recursion
	pads      *[][2]int         // when set (tests), records the [start, end) of each padding
}

// NewEncoder returns an Encoder in the given byte order, with alignment
// measured from its first byte.
func NewEncoder(order ByteOrder) *Encoder {
	// One allocation for the Encoder and room for a small message (a
	// data port's put, a reply); a larger one grows as it must.
	x := &struct {
		e   Encoder
		buf [256]byte
	}{}
	e := &x.e
	e.order, e.buf = order, x.buf[:0]
	if recordPadding {
		e.pads = new([][2]int)
	}
	return e
}

// recordPadding makes new Encoders record where they pad; the tests set
// it to compare encodings with omniORB's, whose padding bytes are garbage.
var recordPadding bool

// NewEncapsulation returns an Encoder for the contents of an encapsulation
// (the profile data of an IOR, a service context's data): its first byte is
// the byte-order octet, already written, and alignment is measured from it.
func NewEncapsulation(order ByteOrder) *Encoder {
	e := NewEncoder(order)
	e.buf = append(e.buf, byte(order))
	return e
}

// Bytes returns what was written. For a message (NewMessage) the header's
// size field is set first.
func (e *Encoder) Bytes() []byte {
	if e.message {
		e.order.binary().PutUint32(e.buf[8:12], uint32(len(e.buf)-HeaderSize))
	}
	return e.buf
}

// Align writes zero padding up to the next multiple of n from the
// alignment base.
func (e *Encoder) Align(n int) {
	if a := e.bodyAlign; a > 0 {
		e.bodyAlign = 0
		e.Align(a)
	}
	pad := (n - (len(e.buf)-e.base)%n) % n
	if pad == 0 {
		return
	}
	if e.pads != nil {
		*e.pads = append(*e.pads, [2]int{len(e.buf), len(e.buf) + pad})
	}
	e.buf = append(e.buf, make([]byte, pad)...)
}

func (e *Encoder) put(n int) []byte {
	e.Align(n)
	e.buf = append(e.buf, make([]byte, n)...)
	return e.buf[len(e.buf)-n:]
}

// WriteOctet writes an octet.
func (e *Encoder) WriteOctet(b byte) { e.put(1)[0] = b }

// WriteBoolean writes a boolean.
func (e *Encoder) WriteBoolean(b bool) {
	if b {
		e.WriteOctet(1)
	} else {
		e.WriteOctet(0)
	}
}

// WriteChar writes a char.
func (e *Encoder) WriteChar(c byte) { e.WriteOctet(c) }

// WriteUShort writes an unsigned short.
func (e *Encoder) WriteUShort(v uint16) { e.order.binary().PutUint16(e.put(2), v) }

// WriteShort writes a short.
func (e *Encoder) WriteShort(v int16) { e.WriteUShort(uint16(v)) }

// WriteULong writes an unsigned long.
func (e *Encoder) WriteULong(v uint32) { e.order.binary().PutUint32(e.put(4), v) }

// WriteLong writes a long.
func (e *Encoder) WriteLong(v int32) { e.WriteULong(uint32(v)) }

// WriteULongLong writes an unsigned long long.
func (e *Encoder) WriteULongLong(v uint64) { e.order.binary().PutUint64(e.put(8), v) }

// WriteLongLong writes a long long.
func (e *Encoder) WriteLongLong(v int64) { e.WriteULongLong(uint64(v)) }

// WriteFloat writes a float.
func (e *Encoder) WriteFloat(v float32) { e.WriteULong(math.Float32bits(v)) }

// WriteDouble writes a double.
func (e *Encoder) WriteDouble(v float64) { e.WriteULongLong(math.Float64bits(v)) }

// WriteBytes writes raw bytes, without a length or alignment.
func (e *Encoder) WriteBytes(b []byte) {
	e.Align(1)
	e.buf = append(e.buf, b...)
}

// WriteOctetSeq writes a sequence<octet>.
func (e *Encoder) WriteOctetSeq(b []byte) {
	e.WriteULong(uint32(len(b)))
	e.WriteBytes(b)
}

// WriteString writes a string: its length including the NUL, its bytes
// unchanged, and the NUL.
func (e *Encoder) WriteString(s string) {
	e.WriteULong(uint32(len(s) + 1))
	e.Align(1)
	e.buf = append(append(e.buf, s...), 0)
}

// WriteEncapsulation writes an encapsulation as a sequence<octet>: its
// length, the byte-order octet (this Encoder's order) and what fill writes,
// with alignment measured from the byte-order octet. fill writes into e
// itself; its error is returned.
func (e *Encoder) WriteEncapsulation(fill func(*Encoder) error) error {
	e.WriteULong(0)
	at := len(e.buf)
	saved := e.base
	e.base = at
	e.WriteOctet(byte(e.order))
	err := fill(e)
	e.base = saved
	e.order.binary().PutUint32(e.buf[at-4:at], uint32(len(e.buf)-at))
	return err
}
