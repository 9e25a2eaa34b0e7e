package corba

import (
	"bytes"
	"fmt"
	"io"
)

// Version is a GIOP or IIOP version.
type Version struct{ Major, Minor byte }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// The GIOP versions this package reads and writes.
var (
	GIOP10 = Version{1, 0}
	GIOP11 = Version{1, 1}
	GIOP12 = Version{1, 2}
)

func (v Version) supported() bool { return v.Major == 1 && v.Minor <= 2 }

// MsgType is a GIOP message type.
type MsgType byte

// The GIOP message types.
const (
	MsgRequest MsgType = iota
	MsgReply
	MsgCancelRequest
	MsgLocateRequest
	MsgLocateReply
	MsgCloseConnection
	MsgMessageError
	MsgFragment
)

var msgTypeNames = [...]string{"Request", "Reply", "CancelRequest", "LocateRequest",
	"LocateReply", "CloseConnection", "MessageError", "Fragment"}

func (t MsgType) String() string {
	if int(t) < len(msgTypeNames) {
		return msgTypeNames[t]
	}
	return fmt.Sprintf("message type %d", byte(t))
}

// HeaderSize is the size of a GIOP message header.
const HeaderSize = 12

// flagMoreFragments is the more-fragments bit of the header's flags (GIOP
// 1.1 and later); bit 0 is the byte order.
const flagMoreFragments = 2

// Header is a GIOP message header.
type Header struct {
	Version       Version
	Order         ByteOrder
	MoreFragments bool // GIOP 1.1 and later: more fragments of this message follow
	Type          MsgType
	Size          uint32 // the size of the message after the header
}

var magic = []byte("GIOP")

// ParseHeader parses the first HeaderSize bytes of b as a GIOP header.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	fail := func(at int, unsupported bool, format string, args ...any) (Header, error) {
		return h, fmt.Errorf("giop: %w", &Error{Part: "header", Offset: at, Msg: fmt.Sprintf(format, args...), Unsupported: unsupported})
	}
	if len(b) < HeaderSize {
		return fail(len(b), false, "a header has %d bytes, there are %d", HeaderSize, len(b))
	}
	if !bytes.Equal(b[:4], magic) {
		return fail(0, false, "magic %q is not \"GIOP\"", b[:4])
	}
	h.Version = Version{b[4], b[5]}
	if !h.Version.supported() {
		return fail(4, true, "GIOP version %v is not supported (1.0 to 1.2 are)", h.Version)
	}
	flags := b[6]
	if h.Version == GIOP10 && flags > 1 {
		return fail(6, false, "GIOP 1.0 byte order %#02x is neither 0 nor 1", flags)
	}
	if flags&^3 != 0 {
		return fail(6, false, "flags %#02x set reserved bits", flags)
	}
	h.Order = ByteOrder(flags & 1)
	h.MoreFragments = flags&flagMoreFragments != 0
	h.Type = MsgType(b[7])
	if h.Type > MsgFragment {
		return fail(7, false, "unknown message type %d", b[7])
	}
	if h.Type == MsgFragment && h.Version == GIOP10 {
		return fail(7, false, "GIOP 1.0 has no Fragment messages")
	}
	h.Size = h.Order.binary().Uint32(b[8:12])
	return h, nil
}

// appendTo appends the header's 12 bytes to b.
func (h Header) appendTo(b []byte) []byte {
	flags := byte(h.Order)
	if h.MoreFragments {
		flags |= flagMoreFragments
	}
	b = append(b, magic...)
	b = append(b, h.Version.Major, h.Version.Minor, flags, byte(h.Type), 0, 0, 0, 0)
	h.Order.binary().PutUint32(b[len(b)-4:], h.Size)
	return b
}

// readBuffer is the size of a connection's read buffer.
const readBuffer = 16 << 10

// ReadMessage reads one GIOP message (a header and the size it gives) from
// r. A message larger than maxSize bytes is refused before its body is
// read.
func ReadMessage(r io.Reader, maxSize int) ([]byte, error) {
	b := make([]byte, HeaderSize, 256)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	h, err := ParseHeader(b)
	if err != nil {
		return nil, err
	}
	if uint64(h.Size)+HeaderSize > uint64(maxSize) {
		return nil, fmt.Errorf("giop: %v of %d bytes exceeds the limit of %d", h.Type, uint64(h.Size)+HeaderSize, maxSize)
	}
	b = append(b, make([]byte, h.Size)...)
	if _, err := io.ReadFull(r, b[HeaderSize:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("giop: %v body of %d bytes: %w", h.Type, h.Size, err)
	}
	return b, nil
}

// NewMessage returns an Encoder for a message: the header is written (its
// size is set by Bytes), then the caller writes the rest. Alignment is
// measured from the header's first byte.
func NewMessage(v Version, order ByteOrder, t MsgType) *Encoder {
	e := NewEncoder(order)
	e.buf = Header{Version: v, Order: order, Type: t}.appendTo(e.buf)
	e.message = true
	return e
}
