package corba

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fuzz targets' seeds are the captured vectors (when they are here) and
// the regression inputs in testdata/fuzz/<Target>.

// seedVectors returns the captured vectors, or none when they are missing.
func seedVectors() []vector {
	dir, _ := openrtmDir()
	vs, _ := readVectors(filepath.Join(dir, "wire", "vectors"))
	return vs
}

// FuzzMessage parses arbitrary bytes as a GIOP message: no panic; a
// message that parses is written again from its headers and body and
// parses to the same; a body of an operation the vectors carry is decoded
// with its types, written again and decoded to the same bytes; a reply's
// exception is read.
func FuzzMessage(f *testing.F) {
	for _, v := range seedVectors() {
		f.Add(v.Bytes)
	}
	for _, m := range handMadeMessages(f) {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMessage(data)
		if err != nil {
			return
		}
		_ = m.Exception()
		body := data[m.BodyOffset:]
		var e *Encoder
		switch {
		case m.Request != nil:
			e, err = EncodeRequest(m.Version, m.Order, m.Request)
		case m.Reply != nil:
			e, err = EncodeReply(m.Version, m.Order, m.Reply)
		case m.LocateReply != nil:
			e, err = EncodeLocateReply(m.Version, m.Order, m.LocateReply)
		default:
			return
		}
		if err != nil {
			t.Fatalf("%v parsed, but not written: %v", m.Type, err)
		}
		e.WriteBytes(body)
		m2, err := ParseMessage(e.Bytes())
		if err != nil {
			t.Fatalf("written again: %v", err)
		}
		if diff := cmp.Diff([]any{m.Request, m.Reply, m.LocateReply}, []any{m2.Request, m2.Reply, m2.LocateReply}); diff != "" {
			t.Fatalf("written again (-first +second):\n%s", diff)
		}
		if !bytes.Equal(body, e.Bytes()[m2.BodyOffset:]) {
			t.Fatalf("body %x written again as %x", body, e.Bytes()[m2.BodyOffset:])
		}
		if m.Request == nil && m.Reply == nil {
			return
		}
		op := ""
		if m.Request != nil {
			op = m.Request.Operation
		}
		for _, o := range []string{op, "connect", "put", "notify_disconnect"} {
			tcs, ok := operationTypes(o, m.Reply != nil)
			if !ok {
				continue
			}
			roundTrip(t, m.Body(), tcs)
		}
	})
}

// roundTrip decodes values of the types from d; when they decode, it
// writes them, decodes what it wrote and writes that again: both writings
// must be equal.
func roundTrip(t *testing.T, d *Decoder, tcs []*TypeCode) {
	t.Helper()
	var vals []any
	for _, tc := range tcs {
		vals = append(vals, d.ReadValue(tc))
	}
	if d.Err() != nil {
		return
	}
	write := func(vals []any) []byte {
		e := NewEncoder(d.Order())
		for i, tc := range tcs {
			if err := e.WriteValue(tc, vals[i]); err != nil {
				t.Fatalf("decoded %v, but not written: %v", tc, err)
			}
		}
		return e.Bytes()
	}
	first := write(vals)
	d2 := NewDecoder(first, d.Order())
	var again []any
	for _, tc := range tcs {
		again = append(again, d2.ReadValue(tc))
	}
	if err := d2.Err(); err != nil {
		t.Fatalf("written %x, but not decoded: %v", first, err)
	}
	if second := write(again); !bytes.Equal(first, second) {
		t.Fatalf("written as %x, then as %x", first, second)
	}
}

// FuzzAny decodes arbitrary bytes as an any (a TypeCode and a value) in
// either byte order, and as each Timed* type and a ConnectorProfile: no
// panic, and what decodes is written, decoded and written again to the
// same bytes.
func FuzzAny(f *testing.F) {
	for _, v := range seedVectors() {
		if v.Payload != nil {
			f.Add(v.Payload, false)
		}
	}
	for _, a := range sampleAnys() {
		for _, order := range []ByteOrder{BigEndian, LittleEndian} {
			e := NewEncoder(order)
			if err := e.WriteAny(a); err != nil {
				f.Fatal(err)
			}
			f.Add(e.Bytes(), order == BigEndian)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, big bool) {
		order := LittleEndian
		if big {
			order = BigEndian
		}
		roundTrip(t, NewDecoder(data, order), []*TypeCode{tcAny})
		for _, tc := range []*TypeCode{timed["TimedString"], timed["TimedDoubleSeq"], tcConnectorProfile} {
			roundTrip(t, NewDecoder(data, order), []*TypeCode{tc})
		}
	})
}

// FuzzIOR parses arbitrary text as a stringified IOR: no panic; an IOR
// that parses is written and parsed to the same, and its IIOP profile and
// components are decoded and written again.
func FuzzIOR(f *testing.F) {
	for _, v := range seedVectors() {
		if m, err := ParseMessage(v.Bytes); err == nil && m.Reply != nil && v.Want.Operation == "notify_connect" {
			d := m.Body()
			d.ReadValue(tcReturnCode)
			p := d.ReadValue(tcConnectorProfile)
			ports, _ := p.(Struct).Get("ports")
			for _, ior := range ports.([]any) {
				f.Add(ior.(*IOR).String())
			}
		}
	}
	f.Add("IOR:000000000000000100000000")
	f.Fuzz(func(t *testing.T, s string) {
		ior, err := ParseIOR(s)
		if err != nil {
			return
		}
		again, err := ParseIOR(ior.String())
		if err != nil {
			t.Fatalf("%s written as %s, which does not parse: %v", s, ior.String(), err)
		}
		if !cmp.Equal(ior, again) {
			t.Fatalf("%v written and parsed as %v", ior, again)
		}
		p, err := ior.IIOP()
		if err != nil {
			return
		}
		for _, c := range p.Components {
			c.ORBType()
			c.CodeSets()
		}
		q, err := ParseIIOPProfile(p.Profile(BigEndian).Data)
		if err != nil {
			t.Fatalf("profile %+v written, but not parsed: %v", p, err)
		}
		if !cmp.Equal(p, q, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })) {
			t.Fatalf("profile %+v written and parsed as %+v", p, q)
		}
	})
}

// FuzzCorbaloc parses arbitrary text as a corbaloc URL: no panic, and a
// URL that parses is written and parsed to the same.
func FuzzCorbaloc(f *testing.F) {
	for _, s := range []string{"corbaloc::127.0.0.1:2809/NameService", "corbaloc:iiop:1.2@localhost:2809/NameService",
		"corbaloc:iiop:[::1]:2809,:host/%ffshortcut%fe", "corbaloc:rir:/NameService", "corbaloc::ロボット:1/鍵"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCorbaloc(s)
		if err != nil {
			return
		}
		again, err := ParseCorbaloc(c.String())
		if err != nil {
			t.Fatalf("%s written as %s, which does not parse: %v", s, c, err)
		}
		if !cmp.Equal(c, again) {
			t.Fatalf("%+v written as %s and parsed as %+v", c, c, again)
		}
	})
}

// FuzzReassembler feeds arbitrary bytes, cut into messages by their
// headers' sizes, to a Reassembler: no panic, no more held than its limit,
// and what it returns is a whole message.
func FuzzReassembler(f *testing.F) {
	for _, v := range seedVectors() {
		if fr, err := splitMessage(v.Bytes, 32); err == nil {
			f.Add(bytes.Join(fr, nil))
		}
	}
	for _, m := range handMadeMessages(f) {
		if fr, err := splitMessage(m, 16); err == nil {
			f.Add(bytes.Join(fr, nil))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReassembler(1 << 16)
		for len(data) >= HeaderSize {
			h, err := ParseHeader(data)
			if err != nil || uint64(h.Size) > uint64(len(data)-HeaderSize) {
				return
			}
			n := HeaderSize + int(h.Size)
			msg, err := r.Add(data[:n:n])
			data = data[n:]
			if r.held > r.max || r.held < 0 {
				t.Fatalf("holds %d bytes, limit %d", r.held, r.max)
			}
			if err != nil || msg == nil {
				continue
			}
			h, err = ParseHeader(msg)
			if err != nil || h.MoreFragments || h.Type == MsgFragment || int(h.Size) != len(msg)-HeaderSize {
				t.Fatalf("returned % x: %v", msg[:min(len(msg), 12)], err)
			}
		}
	})
}

// handMadeMessages are seeds that do not need the vectors: a message of
// each kind and version, bodies with exceptions, forwards and anys.
func handMadeMessages(f *testing.F) [][]byte {
	var out [][]byte
	add := func(e *Encoder, err error) {
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, e.Bytes())
	}
	ior := sampleAnys()[22].Value.(*IOR)
	for _, v := range []Version{GIOP10, GIOP11, GIOP12} {
		order := ByteOrder(v.Minor % 2)
		e, err := EncodeRequest(v, order, &Request{RequestID: 1, ResponseFlags: 3, ObjectKey: []byte("key"), Operation: "put",
			ServiceContexts: []ServiceContext{CodeSetContext{CodeSetISO8859_1, CodeSetUTF16}.ServiceContext(order)}})
		if err == nil {
			e.WriteOctetSeq([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0})
		}
		add(e, err)
		e, err = EncodeRequest(v, order, &Request{RequestID: 2, ResponseFlags: 3, Operation: "notify_disconnect"})
		if err == nil {
			e.WriteString("b226567f-e64e-493b-a596-85ffa30db33a")
		}
		add(e, err)
		e, err = EncodeReply(v, order, &Reply{RequestID: 3, Status: ReplySystemException})
		if err == nil {
			e.WriteSystemException(&SystemException{"IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0", 1, CompletedNo})
		}
		add(e, err)
		e, err = EncodeReply(v, order, &Reply{RequestID: 4, Status: ReplyLocationForward})
		if err == nil {
			e.WriteIOR(ior)
		}
		add(e, err)
		e, err = EncodeReply(v, order, &Reply{RequestID: 5})
		if err == nil {
			e.WriteULong(0)
			for _, a := range sampleAnys() {
				err = e.WriteAny(a)
			}
		}
		add(e, err)
		e, err = EncodeLocateReply(v, order, &LocateReply{RequestID: 6, Status: LocateObjectForward})
		if err == nil {
			e.WriteIOR(ior)
		}
		add(e, err)
		b, err := EncodeLocateRequest(v, order, &LocateRequest{RequestID: 7, ObjectKey: []byte("key")})
		add(&Encoder{buf: b}, err)
		b, err = EncodeCancelRequest(v, order, 8)
		add(&Encoder{buf: b}, err)
	}
	return out
}
