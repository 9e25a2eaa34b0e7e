package corba

import "fmt"

// Message is a parsed GIOP message: its header, the header of its type
// (one of the pointers is set, none for CloseConnection and MessageError)
// and where its body starts.
type Message struct {
	Header
	Request       *Request
	Reply         *Reply
	LocateRequest *LocateRequest
	LocateReply   *LocateReply
	CancelRequest *CancelRequest
	// BodyOffset is the offset of the body from the start of the message;
	// the message's length when there is no body.
	BodyOffset int
	raw        []byte
}

// Request is the header of a Request message.
type Request struct {
	RequestID uint32
	// ResponseFlags: GIOP 1.2's response_flags, 3 for a two-way call, 0 for
	// a oneway. GIOP 1.0 and 1.1 carry a boolean response_expected: it is
	// read as 3 or 0 and written as ResponseExpected.
	ResponseFlags   byte
	ObjectKey       []byte // the target (GIOP 1.2: TargetAddress KeyAddr)
	Operation       string
	ServiceContexts []ServiceContext
	Principal       []byte // GIOP 1.0 and 1.1 only
}

// ResponseExpected says whether the client waits for a reply.
func (r *Request) ResponseExpected() bool { return r.ResponseFlags&1 != 0 }

// Reply is the header of a Reply message.
type Reply struct {
	RequestID       uint32
	Status          ReplyStatus
	ServiceContexts []ServiceContext
}

// ReplyStatus says what a Reply's body holds.
type ReplyStatus uint32

// The reply statuses.
const (
	ReplyNoException         ReplyStatus = iota // the results
	ReplyUserException                          // a user exception: its repository id and members
	ReplySystemException                        // a system exception (see ReadSystemException)
	ReplyLocationForward                        // an IOR to retry the request at
	ReplyLocationForwardPerm                    // GIOP 1.2: the same, permanently
	ReplyNeedsAddressingMode                    // GIOP 1.2: a short, the addressing disposition
)

var replyStatusNames = [...]string{"NO_EXCEPTION", "USER_EXCEPTION", "SYSTEM_EXCEPTION",
	"LOCATION_FORWARD", "LOCATION_FORWARD_PERM", "NEEDS_ADDRESSING_MODE"}

func (s ReplyStatus) String() string {
	if int(s) < len(replyStatusNames) {
		return replyStatusNames[s]
	}
	return fmt.Sprintf("reply status %d", uint32(s))
}

// LocateRequest is the header of a LocateRequest message: is the object
// with this key here?
type LocateRequest struct {
	RequestID uint32
	ObjectKey []byte
}

// LocateReply is the header of a LocateReply message.
type LocateReply struct {
	RequestID uint32
	Status    LocateStatus
}

// LocateStatus is a LocateReply's answer.
type LocateStatus uint32

// The locate statuses.
const (
	LocateUnknownObject       LocateStatus = iota
	LocateObjectHere                       // what an omniORB client waits for before its first call
	LocateObjectForward                    // the body is an IOR
	LocateObjectForwardPerm                // GIOP 1.2: the body is an IOR
	LocateSystemException                  // GIOP 1.2: the body is a system exception
	LocateNeedsAddressingMode              // GIOP 1.2: the body is a short
)

var locateStatusNames = [...]string{"UNKNOWN_OBJECT", "OBJECT_HERE", "OBJECT_FORWARD",
	"OBJECT_FORWARD_PERM", "LOC_SYSTEM_EXCEPTION", "LOC_NEEDS_ADDRESSING_MODE"}

func (s LocateStatus) String() string {
	if int(s) < len(locateStatusNames) {
		return locateStatusNames[s]
	}
	return fmt.Sprintf("locate status %d", uint32(s))
}

// CancelRequest is the header of a CancelRequest message.
type CancelRequest struct {
	RequestID uint32
}

// TargetAddress discriminators (GIOP 1.2).
const (
	KeyAddr       = 0
	ProfileAddr   = 1
	ReferenceAddr = 2
)

// ParseMessage parses one whole GIOP message (as ReadMessage returns it).
// A fragment is refused: a Reassembler puts a fragmented message together
// first. The message is not copied: the Message refers to b.
func ParseMessage(b []byte) (*Message, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return nil, err
	}
	if uint64(len(b)) != HeaderSize+uint64(h.Size) {
		return nil, fmt.Errorf("giop: %w", &Error{Part: "header", Offset: 8,
			Msg: fmt.Sprintf("message size %d, but %d bytes follow the header", h.Size, len(b)-HeaderSize)})
	}
	if h.MoreFragments || h.Type == MsgFragment {
		return nil, fmt.Errorf("giop: %w", &Error{Part: "header", Offset: 6,
			Msg: fmt.Sprintf("a fragment of a %v: reassemble it first", h.Type)})
	}
	m := &Message{Header: h, raw: b}
	d := NewDecoder(b, h.Order)
	d.pos = HeaderSize
	v12 := h.Version.Minor >= 2
	switch h.Type {
	case MsgRequest:
		d.SetPart("request header")
		m.Request = d.readRequest(h.Version)
	case MsgReply:
		d.SetPart("reply header")
		r := &Reply{}
		if !v12 {
			r.ServiceContexts = d.readServiceContexts()
		}
		r.RequestID = d.ReadULong()
		at := d.pos
		r.Status = ReplyStatus(d.ReadULong())
		if d.Err() == nil && (r.Status > ReplyNeedsAddressingMode || !v12 && r.Status > ReplyLocationForward) {
			d.failAt(at, false, "GIOP %v has no reply status %d", h.Version, uint32(r.Status))
		}
		if v12 {
			r.ServiceContexts = d.readServiceContexts()
		}
		m.Reply = r
	case MsgLocateRequest:
		d.SetPart("locate request header")
		r := &LocateRequest{RequestID: d.ReadULong()}
		if v12 {
			r.ObjectKey = d.readTarget()
		} else {
			r.ObjectKey = d.ReadOctetSeq("object key")
		}
		m.LocateRequest = r
	case MsgLocateReply:
		d.SetPart("locate reply header")
		r := &LocateReply{RequestID: d.ReadULong()}
		at := d.pos
		r.Status = LocateStatus(d.ReadULong())
		if d.Err() == nil && (r.Status > LocateNeedsAddressingMode || !v12 && r.Status > LocateObjectForward) {
			d.failAt(at, false, "GIOP %v has no locate status %d", h.Version, uint32(r.Status))
		}
		m.LocateReply = r
	case MsgCancelRequest:
		d.SetPart("cancel request header")
		m.CancelRequest = &CancelRequest{RequestID: d.ReadULong()}
	}
	// GIOP 1.2 aligns a Request's or Reply's body on 8 bytes, when there is
	// one; a LocateReply's body follows its status directly (as omniORB
	// writes it).
	if v12 && (h.Type == MsgRequest || h.Type == MsgReply) && d.Len() > 0 {
		d.SetPartOf(h.Type.String(), " body")
		d.Align(8)
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("giop: %w", err)
	}
	m.BodyOffset = d.pos
	return m, nil
}

func (d *Decoder) readRequest(v Version) *Request {
	r := &Request{}
	if v.Minor >= 2 {
		r.RequestID = d.ReadULong()
		r.ResponseFlags = d.ReadOctet()
		d.ReadBytes(3, "reserved octets")
		r.ObjectKey = d.readTarget()
		r.Operation = d.ReadString("operation")
		r.ServiceContexts = d.readServiceContexts()
		return r
	}
	r.ServiceContexts = d.readServiceContexts()
	r.RequestID = d.ReadULong()
	if d.ReadBoolean() {
		r.ResponseFlags = 3
	}
	if v.Minor == 1 {
		d.ReadBytes(3, "reserved octets")
	}
	r.ObjectKey = d.ReadOctetSeq("object key")
	r.Operation = d.ReadString("operation")
	r.Principal = d.ReadOctetSeq("principal")
	return r
}

// readTarget reads a GIOP 1.2 TargetAddress; only KeyAddr is supported.
func (d *Decoder) readTarget() []byte {
	at := d.pos
	switch disc := d.ReadShort(); {
	case d.Err() != nil:
		return nil
	case disc == KeyAddr:
		return d.ReadOctetSeq("object key")
	case disc == ProfileAddr:
		d.failAt(at, true, "TargetAddress ProfileAddr (1) is not supported, only KeyAddr (0)")
	case disc == ReferenceAddr:
		d.failAt(at, true, "TargetAddress ReferenceAddr (2) is not supported, only KeyAddr (0)")
	default:
		d.failAt(at, false, "unknown TargetAddress discriminator %d", disc)
	}
	return nil
}

// Body returns a Decoder for the message's body, positioned at its start,
// with alignment measured from the start of the message.
func (m *Message) Body() *Decoder {
	d := NewDecoder(m.raw, m.Order)
	d.pos = m.BodyOffset
	d.SetPartOf(m.Type.String(), " body")
	return d
}

// Bytes returns the message as it was parsed.
func (m *Message) Bytes() []byte { return m.raw }

func checkVersion(v Version) error {
	if !v.supported() {
		return fmt.Errorf("giop: GIOP version %v: %w", v, ErrUnsupported)
	}
	return nil
}

// EncodeRequest begins a Request message: the GIOP header and r. The
// caller writes the arguments into the Encoder (GIOP 1.2 aligns them on 8
// bytes before the first) and takes the message with Bytes.
func EncodeRequest(v Version, order ByteOrder, r *Request) (*Encoder, error) {
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	e := NewMessage(v, order, MsgRequest)
	if v.Minor >= 2 {
		if len(r.Principal) > 0 {
			return nil, fmt.Errorf("giop: a GIOP 1.2 request has no principal")
		}
		e.WriteULong(r.RequestID)
		e.WriteOctet(r.ResponseFlags)
		e.WriteBytes([]byte{0, 0, 0})
		e.WriteShort(KeyAddr)
		e.WriteOctetSeq(r.ObjectKey)
		e.WriteString(r.Operation)
		e.writeServiceContexts(r.ServiceContexts)
		e.bodyAlign = 8
		return e, nil
	}
	e.writeServiceContexts(r.ServiceContexts)
	e.WriteULong(r.RequestID)
	e.WriteBoolean(r.ResponseExpected())
	if v.Minor == 1 {
		e.WriteBytes([]byte{0, 0, 0})
	}
	e.WriteOctetSeq(r.ObjectKey)
	e.WriteString(r.Operation)
	e.WriteOctetSeq(r.Principal)
	return e, nil
}

// EncodeReply begins a Reply message: the GIOP header and r. The caller
// writes the body (results, an exception, a forward IOR) into the Encoder
// and takes the message with Bytes.
func EncodeReply(v Version, order ByteOrder, r *Reply) (*Encoder, error) {
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	if r.Status > ReplyNeedsAddressingMode || v.Minor < 2 && r.Status > ReplyLocationForward {
		return nil, fmt.Errorf("giop: GIOP %v has no %v", v, r.Status)
	}
	e := NewMessage(v, order, MsgReply)
	if v.Minor < 2 {
		e.writeServiceContexts(r.ServiceContexts)
	}
	e.WriteULong(r.RequestID)
	e.WriteULong(uint32(r.Status))
	if v.Minor >= 2 {
		e.writeServiceContexts(r.ServiceContexts)
		e.bodyAlign = 8
	}
	return e, nil
}

// EncodeLocateRequest writes a LocateRequest message.
func EncodeLocateRequest(v Version, order ByteOrder, r *LocateRequest) ([]byte, error) {
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	e := NewMessage(v, order, MsgLocateRequest)
	e.WriteULong(r.RequestID)
	if v.Minor >= 2 {
		e.WriteShort(KeyAddr)
	}
	e.WriteOctetSeq(r.ObjectKey)
	return e.Bytes(), nil
}

// EncodeLocateReply begins a LocateReply message; for a forward the caller
// writes the IOR into the Encoder, for LocateSystemException the exception.
func EncodeLocateReply(v Version, order ByteOrder, r *LocateReply) (*Encoder, error) {
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	if r.Status > LocateNeedsAddressingMode || v.Minor < 2 && r.Status > LocateObjectForward {
		return nil, fmt.Errorf("giop: GIOP %v has no %v", v, r.Status)
	}
	e := NewMessage(v, order, MsgLocateReply)
	e.WriteULong(r.RequestID)
	e.WriteULong(uint32(r.Status))
	return e, nil
}

// EncodeCancelRequest writes a CancelRequest message.
func EncodeCancelRequest(v Version, order ByteOrder, requestID uint32) ([]byte, error) {
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	e := NewMessage(v, order, MsgCancelRequest)
	e.WriteULong(requestID)
	return e.Bytes(), nil
}

// EncodeCloseConnection writes a CloseConnection message (a bare header).
func EncodeCloseConnection(v Version, order ByteOrder) ([]byte, error) {
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	return NewMessage(v, order, MsgCloseConnection).Bytes(), nil
}

// EncodeMessageError writes a MessageError message (a bare header), the
// answer to a message that cannot be parsed.
func EncodeMessageError(v Version, order ByteOrder) ([]byte, error) {
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	return NewMessage(v, order, MsgMessageError).Bytes(), nil
}
