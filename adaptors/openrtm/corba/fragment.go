package corba

import "fmt"

// Reassembler puts the fragmented GIOP 1.1 and 1.2 messages of one
// connection back together. GIOP 1.2 fragments carry their message's
// request id, so several messages may be in progress at once; GIOP 1.1
// fragments follow their message's first part directly. A Reassembler is
// not safe for concurrent use.
type Reassembler struct {
	max     int // bytes held in all partial messages together
	held    int
	pending map[uint32][]byte // GIOP 1.2 messages in progress, by request id
	v11     []byte            // the GIOP 1.1 message in progress
}

// NewReassembler returns a Reassembler that holds at most maxSize bytes of
// partial messages.
func NewReassembler(maxSize int) *Reassembler {
	return &Reassembler{max: maxSize, pending: make(map[uint32][]byte)}
}

// Add takes one message as ReadMessage returns it. It returns a whole
// message: msg itself when it is not fragmented, the reassembled message
// (with the more-fragments flag cleared) after its last fragment, or nil
// while fragments are still to come. An error drops the message it
// concerns.
func (r *Reassembler) Add(msg []byte) ([]byte, error) {
	h, err := ParseHeader(msg)
	if err != nil {
		return nil, err
	}
	if uint64(len(msg)) != HeaderSize+uint64(h.Size) {
		return nil, fmt.Errorf("giop: message size %d, but %d bytes follow the header", h.Size, len(msg)-HeaderSize)
	}
	if h.Type != MsgFragment && !h.MoreFragments {
		return msg, nil
	}
	v12 := h.Version.Minor >= 2
	var id uint32
	if v12 {
		if h.Size < 4 {
			return nil, fmt.Errorf("giop: a fragmented GIOP 1.2 %v without a request id", h.Type)
		}
		id = h.Order.binary().Uint32(msg[HeaderSize:])
	}
	if h.Type != MsgFragment {
		switch {
		case h.Type != MsgRequest && h.Type != MsgReply && !(v12 && (h.Type == MsgLocateRequest || h.Type == MsgLocateReply)):
			return nil, fmt.Errorf("giop: a GIOP %v %v cannot be fragmented", h.Version, h.Type)
		case v12 && r.pending[id] != nil:
			r.drop(id, v12)
			return nil, fmt.Errorf("giop: a second fragmented message with request id %d began before the first ended", id)
		case !v12 && r.v11 != nil:
			r.drop(id, v12)
			return nil, fmt.Errorf("giop: a second fragmented GIOP 1.1 message began before the first ended")
		}
		if err := r.hold(len(msg)); err != nil {
			return nil, err
		}
		r.set(id, v12, append([]byte(nil), msg...))
		return nil, nil
	}
	p, data := r.v11, msg[HeaderSize:]
	if v12 {
		p, data = r.pending[id], msg[HeaderSize+4:]
	}
	switch {
	case p == nil && v12:
		return nil, fmt.Errorf("giop: a Fragment of request id %d, which no fragmented message began", id)
	case p == nil:
		return nil, fmt.Errorf("giop: a GIOP 1.1 Fragment, which no fragmented message began")
	case p[4] != h.Version.Major || p[5] != h.Version.Minor || ByteOrder(p[6]&1) != h.Order:
		r.drop(id, v12)
		return nil, fmt.Errorf("giop: a GIOP %v %v Fragment continues a GIOP %d.%d %v message", h.Version, h.Order, p[4], p[5], ByteOrder(p[6]&1))
	}
	if err := r.hold(len(data)); err != nil {
		r.drop(id, v12)
		return nil, err
	}
	p = append(p, data...)
	if h.MoreFragments {
		r.set(id, v12, p)
		return nil, nil
	}
	r.set(id, v12, p)
	r.drop(id, v12)
	p[6] &^= flagMoreFragments
	h.Order.binary().PutUint32(p[8:12], uint32(len(p)-HeaderSize))
	return p, nil
}

// Cancel drops the fragments held for a request, as a CancelRequest for it
// asks (GIOP 1.2).
func (r *Reassembler) Cancel(requestID uint32) { r.drop(requestID, true) }

func (r *Reassembler) hold(n int) error {
	if n > r.max-r.held {
		return fmt.Errorf("giop: fragmented messages exceed the limit of %d bytes", r.max)
	}
	r.held += n
	return nil
}

func (r *Reassembler) set(id uint32, v12 bool, p []byte) {
	if v12 {
		r.pending[id] = p
	} else {
		r.v11 = p
	}
}

func (r *Reassembler) drop(id uint32, v12 bool) {
	if v12 {
		r.held -= len(r.pending[id])
		delete(r.pending, id)
	} else {
		r.held -= len(r.v11)
		r.v11 = nil
	}
}
