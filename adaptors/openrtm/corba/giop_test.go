package corba

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// splitMessage cuts a whole GIOP 1.1 or 1.2 message into fragments whose
// bodies hold at most chunk bytes (a multiple of 8), as a peer sending a
// large message does.
func splitMessage(msg []byte, chunk int) ([][]byte, error) {
	h, err := ParseHeader(msg)
	if err != nil {
		return nil, err
	}
	if h.Version.Minor < 1 || chunk%8 != 0 || chunk < 8 {
		return nil, fmt.Errorf("cannot fragment a GIOP %v message into %d bytes", h.Version, chunk)
	}
	body := msg[HeaderSize:]
	var out [][]byte
	frame := func(t MsgType, more bool, prefix, data []byte) {
		g := Header{Version: h.Version, Order: h.Order, MoreFragments: more, Type: t, Size: uint32(len(prefix) + len(data))}
		out = append(out, append(append(g.appendTo(nil), prefix...), data...))
	}
	first := min(chunk, len(body))
	frame(h.Type, first < len(body), nil, body[:first])
	var prefix []byte
	if h.Version.Minor >= 2 {
		prefix = body[:4] // the request id
	}
	for rest := body[first:]; len(rest) > 0; {
		n := min(chunk, len(rest))
		frame(MsgFragment, n < len(rest), prefix, rest[:n])
		rest = rest[n:]
	}
	return out, nil
}

// TestReassembler puts vectors cut into fragments back together, in GIOP
// 1.2 (two messages interleaved, both byte orders) and 1.1.
func TestReassembler(t *testing.T) {
	vs := loadVectors(t)
	var big [][]byte // the connect and notify_connect replies
	for _, v := range vs {
		if len(v.Bytes) > 1000 {
			big = append(big, v.Bytes)
		}
	}
	if len(big) < 2 {
		t.Fatalf("%d large vectors", len(big))
	}
	// Two GIOP 1.2 replies of different request ids, interleaved.
	a, _ := splitMessage(big[0], 64)
	b, _ := splitMessage(big[1], 128)
	if len(a) < 10 || len(b) < 5 {
		t.Fatalf("%d and %d fragments", len(a), len(b))
	}
	r := NewReassembler(4096)
	var got [][]byte
	for i := 0; i < max(len(a), len(b)); i++ {
		for _, fr := range [][][]byte{a, b} {
			if i < len(fr) {
				m, err := r.Add(fr[i])
				if err != nil {
					t.Fatal(err)
				}
				if m != nil {
					got = append(got, m)
				}
			}
		}
	}
	if len(got) != 2 || !bytes.Equal(got[0], big[1]) || !bytes.Equal(got[1], big[0]) || r.held != 0 {
		t.Errorf("reassembled %d messages, holding %d bytes", len(got), r.held)
	}
	// GIOP 1.1 and 1.2 in both byte orders: written again, then cut.
	m, err := ParseMessage(big[0])
	if err != nil {
		t.Fatal(err)
	}
	vals := decodeBody(t, m, "notify_connect")
	for _, ver := range []Version{GIOP11, GIOP12} {
		for _, order := range []ByteOrder{BigEndian, LittleEndian} {
			whole := encodeLike(t, m, vals, ver, order, "notify_connect").Bytes()
			frs, err := splitMessage(whole, 200)
			if err != nil {
				t.Fatal(err)
			}
			r := NewReassembler(len(whole))
			for i, fr := range frs {
				m, err := r.Add(fr)
				if err != nil || (m != nil) != (i == len(frs)-1) {
					t.Fatalf("GIOP %v %v fragment %d: %v, %v", ver, order, i, m != nil, err)
				}
				if m != nil && !bytes.Equal(m, whole) {
					t.Errorf("GIOP %v %v: reassembled differently", ver, order)
				}
			}
		}
	}
	// A whole message passes through.
	if m, err := NewReassembler(0).Add(vs[0].Bytes); err != nil || !bytes.Equal(m, vs[0].Bytes) {
		t.Errorf("a whole message: %v", err)
	}
}

func TestReassemblerErrors(t *testing.T) {
	msg := mustRequest(t, GIOP12, LittleEndian, &Request{RequestID: 9, ResponseFlags: 3, ObjectKey: []byte("key"), Operation: "put"}, bytes.Repeat([]byte{7}, 100))
	frs, err := splitMessage(msg, 32)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReassembler(1 << 10)
	if _, err := r.Add(frs[1]); err == nil || err.Error() != "giop: a Fragment of request id 9, which no fragmented message began" {
		t.Errorf("a fragment first: %v", err)
	}
	r.Add(frs[0])
	if _, err := r.Add(frs[0]); err == nil || err.Error() != "giop: a second fragmented message with request id 9 began before the first ended" {
		t.Errorf("the first part twice: %v", err)
	}
	r.Add(frs[0])
	r.Cancel(9)
	if _, err := r.Add(frs[1]); err == nil || r.held != 0 {
		t.Errorf("a fragment after its request was cancelled: %v, holding %d", err, r.held)
	}
	small := NewReassembler(100)
	small.Add(frs[0])
	_, err = small.Add(frs[1])
	_, err2 := small.Add(frs[2])
	if err == nil && err2 == nil || small.held != 0 {
		t.Errorf("over the limit: %v, %v, holding %d", err, err2, small.held)
	}
	if err == nil {
		err = err2
	}
	if err.Error() != "giop: fragmented messages exceed the limit of 100 bytes" {
		t.Errorf("over the limit: %v", err)
	}
	// A fragment in the other byte order.
	other, _ := splitMessage(mustRequest(t, GIOP12, BigEndian, &Request{RequestID: 9, Operation: "put"}, make([]byte, 64)), 32)
	r = NewReassembler(1 << 10)
	r.Add(frs[0])
	if _, err := r.Add(other[1]); err == nil || !strings.Contains(err.Error(), "continues a GIOP 1.2 little endian message") {
		t.Errorf("a big-endian fragment of a little-endian message: %v", err)
	}
}

func mustRequest(t *testing.T, v Version, order ByteOrder, r *Request, body []byte) []byte {
	t.Helper()
	e, err := EncodeRequest(v, order, r)
	if err != nil {
		t.Fatal(err)
	}
	e.WriteBytes(body)
	return e.Bytes()
}

// TestRequestHeaders: the request header of each version, written and
// parsed (a oneway, a principal, a CodeSets context), with the body where
// each version puts it.
func TestRequestHeaders(t *testing.T) {
	cs := CodeSetContext{CodeSetISO8859_1, CodeSetUTF16}
	for _, c := range []struct {
		v    Version
		r    Request
		body int // the body's offset
	}{
		{GIOP10, Request{RequestID: 1, ObjectKey: []byte("k"), Operation: "op", Principal: []byte("me")}, 0x2e},
		{GIOP11, Request{RequestID: 2, ResponseFlags: 3, ObjectKey: []byte("k"), Operation: "op", ServiceContexts: []ServiceContext{cs.ServiceContext(LittleEndian)}}, 0x40},
		{GIOP12, Request{RequestID: 3, ObjectKey: []byte("k"), Operation: "op"}, 0x30},
	} {
		for _, order := range []ByteOrder{BigEndian, LittleEndian} {
			b := mustRequest(t, c.v, order, &c.r, []byte{0xaa})
			m, err := ParseMessage(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&c.r, m.Request, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("GIOP %v %v (-written +read):\n%s", c.v, order, diff)
			}
			if m.BodyOffset != c.body || b[m.BodyOffset] != 0xaa || m.Request.ResponseExpected() != (c.r.ResponseFlags == 3) {
				t.Errorf("GIOP %v %v: body at %#x, want %#x", c.v, order, m.BodyOffset, c.body)
			}
		}
	}
	// The CodeSets context as omniORB writes it (vector 04 at 0x4c).
	if got := cs.ServiceContext(LittleEndian); fmt.Sprintf("%x", got.Data) != "010000000100010009010100" {
		t.Errorf("CodeSets context %x", got.Data)
	}
	if _, err := EncodeRequest(GIOP12, LittleEndian, &Request{Principal: []byte("x")}); err == nil {
		t.Error("a GIOP 1.2 request with a principal")
	}
}

// TestReplies: exceptions and forwards in replies and locate replies.
func TestReplies(t *testing.T) {
	ior := sampleAnys()[22].Value.(*IOR)
	sysex := &SystemException{"IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0", 0x4f4d0001, CompletedNo}
	for _, v := range []Version{GIOP10, GIOP11, GIOP12} {
		for _, order := range []ByteOrder{BigEndian, LittleEndian} {
			name := fmt.Sprintf("%v/%v", v, order)
			reply := func(s ReplyStatus, body func(e *Encoder)) *Message {
				e, err := EncodeReply(v, order, &Reply{RequestID: 5, Status: s})
				if err != nil {
					t.Fatal(err)
				}
				body(e)
				m, err := ParseMessage(e.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			m := reply(ReplySystemException, func(e *Encoder) { e.WriteSystemException(sysex) })
			var x *SystemException
			if err := m.Exception(); !errors.As(err, &x) || *x != *sysex ||
				err.Error() != "CORBA system exception IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0 (minor 0x4f4d0001, COMPLETED_NO)" {
				t.Errorf("%s: %v", name, err)
			}
			m = reply(ReplyUserException, func(e *Encoder) { e.WriteString("IDL:test/Oops:1.0"); e.WriteLong(-7) })
			var u *UserExceptionError
			if err := m.Exception(); !errors.As(err, &u) || u.ID != "IDL:test/Oops:1.0" || u.Members.ReadLong() != -7 {
				t.Errorf("%s: %v", name, err)
			}
			m = reply(ReplyLocationForward, func(e *Encoder) { e.WriteIOR(ior) })
			var f *ForwardError
			if err := m.Exception(); !errors.As(err, &f) || !cmp.Equal(f.IOR, ior) || f.Permanent {
				t.Errorf("%s: %v", name, err)
			}
			if m := reply(ReplyNoException, func(*Encoder) {}); m.Exception() != nil || m.BodyOffset != len(m.Bytes()) {
				t.Errorf("%s: a reply without a body: %v, body at %#x", name, m.Exception(), m.BodyOffset)
			}
			// A LocateReply's body follows its status directly, in 1.2 too.
			e, err := EncodeLocateReply(v, order, &LocateReply{RequestID: 6, Status: LocateObjectForward})
			if err != nil {
				t.Fatal(err)
			}
			e.WriteIOR(ior)
			if m, err = ParseMessage(e.Bytes()); err != nil || m.BodyOffset != 20 || m.Exception().(*ForwardError).IOR.TypeID != ior.TypeID {
				t.Errorf("%s: locate reply forward: %v, body at %#x", name, err, m.BodyOffset)
			}
			if _, err := EncodeReply(v, order, &Reply{Status: ReplyLocationForwardPerm}); (err == nil) != (v == GIOP12) {
				t.Errorf("%s: LOCATION_FORWARD_PERM: %v", name, err)
			}
		}
	}
	e, _ := EncodeLocateReply(GIOP12, LittleEndian, &LocateReply{RequestID: 6, Status: LocateSystemException})
	e.WriteSystemException(sysex)
	m, err := ParseMessage(e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if x, ok := m.Exception().(*SystemException); !ok || *x != *sysex {
		t.Errorf("LOC_SYSTEM_EXCEPTION: %v", m.Exception())
	}
}

// TestSmallMessages: CancelRequest, CloseConnection, MessageError and
// LocateRequest in each version.
func TestSmallMessages(t *testing.T) {
	for _, v := range []Version{GIOP10, GIOP11, GIOP12} {
		c, _ := EncodeCancelRequest(v, BigEndian, 77)
		cl, _ := EncodeCloseConnection(v, LittleEndian)
		me, _ := EncodeMessageError(v, BigEndian)
		lr, _ := EncodeLocateRequest(v, BigEndian, &LocateRequest{RequestID: 3, ObjectKey: []byte("ロボット")})
		for _, b := range [][]byte{c, cl, me, lr} {
			m, err := ParseMessage(b)
			if err != nil {
				t.Fatalf("GIOP %v: %v", v, err)
			}
			switch m.Type {
			case MsgCancelRequest:
				if m.CancelRequest.RequestID != 77 {
					t.Errorf("cancel %+v", m.CancelRequest)
				}
			case MsgLocateRequest:
				if m.LocateRequest.RequestID != 3 || string(m.LocateRequest.ObjectKey) != "ロボット" {
					t.Errorf("locate %+v", m.LocateRequest)
				}
			default:
				if len(b) != HeaderSize {
					t.Errorf("%v of %d bytes", m.Type, len(b))
				}
			}
		}
	}
	if _, err := EncodeCloseConnection(Version{1, 3}, BigEndian); !errors.Is(err, ErrUnsupported) {
		t.Errorf("GIOP 1.3: %v", err)
	}
}

// TestMessageErrors pins what a malformed or unsupported message reports.
func TestMessageErrors(t *testing.T) {
	vs := loadVectors(t)
	put := vs[6].Bytes // 07: put TimedLong 1
	patch := func(b []byte, at int, with ...byte) []byte {
		c := append([]byte(nil), b...)
		copy(c[at:], with)
		return c
	}
	for _, c := range []struct {
		name        string
		in          []byte
		err         string
		unsupported bool
	}{
		{"object key length", patch(put, 0x18, 0xff, 0xff, 0xff, 0xff),
			"giop: request header at offset 0x18: object key length 4294967295 exceeds the 52 bytes left", false},
		{"magic", patch(put, 3, 'X'), `giop: header at offset 0x0: magic "GIOX" is not "GIOP"`, false},
		{"version", patch(put, 5, 3), "giop: header at offset 0x4: GIOP version 1.3 is not supported (1.0 to 1.2 are)", true},
		{"flags", patch(put, 6, 0x81), "giop: header at offset 0x6: flags 0x81 set reserved bits", false},
		{"type", patch(put, 7, 8), "giop: header at offset 0x7: unknown message type 8", false},
		{"short", put[:70], "giop: header at offset 0x8: message size 68, but 58 bytes follow the header", false},
		{"header", put[:5], "giop: header at offset 0x5: a header has 12 bytes, there are 5", false},
		{"fragment", patch(put, 6, 3), "giop: header at offset 0x6: a fragment of a Request: reassemble it first", false},
		{"ProfileAddr", patch(put, 0x14, 1), "giop: request header at offset 0x14: TargetAddress ProfileAddr (1) is not supported, only KeyAddr (0)", true},
		{"ReferenceAddr", patch(put, 0x14, 2), "giop: request header at offset 0x14: TargetAddress ReferenceAddr (2) is not supported, only KeyAddr (0)", true},
		{"TargetAddress 9", patch(put, 0x14, 9), "giop: request header at offset 0x14: unknown TargetAddress discriminator 9", false},
		{"operation", patch(put, 0x34, 9), "giop: request header at offset 0x40: operation of length 9 does not end in NUL (0x0c)", false},
		{"reply status", patch(vs[7].Bytes, 0x10, 6), "giop: reply header at offset 0x10: GIOP 1.2 has no reply status 6", false},
		{"locate status", patch(vs[1].Bytes, 0x10, 6), "giop: locate reply header at offset 0x10: GIOP 1.2 has no locate status 6", false},
		{"contexts", patch(put, 0x3c, 0xff), "giop: request header at offset 0x3c: service context list length 255 needs at least 2040 bytes, 16 left", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseMessage(c.in)
			if err == nil || err.Error() != c.err {
				t.Fatalf("parsed %+v, error %v; want %q", m, err, c.err)
			}
			if errors.Is(err, ErrUnsupported) != c.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v", !c.unsupported)
			}
		})
	}
}

// TestReadMessage reads messages one after another from a stream, within
// a size limit.
func TestReadMessage(t *testing.T) {
	vs := loadVectors(t)
	var stream []byte
	for _, v := range vs {
		stream = append(stream, v.Bytes...)
	}
	r := bytes.NewReader(stream)
	for _, v := range vs {
		b, err := ReadMessage(r, 2000)
		if err != nil || !bytes.Equal(b, v.Bytes) {
			t.Fatalf("%s: %v", v.Name, err)
		}
	}
	if _, err := ReadMessage(r, 2000); err != io.EOF {
		t.Errorf("at the end: %v", err)
	}
	if _, err := ReadMessage(bytes.NewReader(vs[4].Bytes), 1000); err == nil || err.Error() != "giop: Reply of 1276 bytes exceeds the limit of 1000" {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ReadMessage(bytes.NewReader(vs[4].Bytes[:100]), 2000); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut short: %v", err)
	}
}
