package corba

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The JSON of a vector's body, as giopdump.py decoded it.
type jsonBody struct {
	Result           json.RawMessage
	Value            string
	ConnectorProfile *jsonProfile `json:"connector_profile"`
	LengthOffset     int          `json:"length_offset"`
	PayloadOffset    int          `json:"payload_offset"`
	Length           int
	Hex              string
	ConnectorID      string                     `json:"connector_id"`
	Decoded          map[string]json.RawMessage `json:"-"`
}

type jsonProfile struct {
	NameOffset       int `json:"name_offset"`
	Name             string
	ConnectorID      string `json:"connector_id"`
	Ports            []jsonIOR
	PropertiesOffset int `json:"properties_offset"`
	Properties       []struct {
		Name string
		Any  struct {
			Typecode       string
			TypecodeOffset int `json:"typecode_offset"`
			ValueOffset    int `json:"value_offset"`
			Value          json.RawMessage
		}
	}
}

type jsonIOR struct {
	TypeID   string `json:"type_id"`
	Profiles []struct {
		Tag         uint32
		Length      int
		ByteOrder   string `json:"byte_order"`
		IIOPVersion string `json:"iiop_version"`
		Host        string
		Port        uint16
		ObjectKey   string `json:"object_key"`
		Components  []struct {
			Tag  uint32
			Data string
		}
	}
	CDROffset int `json:"cdr_offset"`
	CDRLength int `json:"cdr_length"`
}

// TestVectors decodes every captured message and checks it against what
// vectors.json says of it: the header, the request, reply or locate
// header, and the body (ConnectorProfiles with their IORs and NVLists,
// CdrData payloads as their Timed* types), offsets included.
func TestVectors(t *testing.T) {
	vs := loadVectors(t)
	if len(vs) != 28 {
		t.Errorf("%d vectors, want the 28 the README lists", len(vs))
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			m, err := ParseMessage(v.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			checkHeader(t, m, v.Want)
			vals := decodeBody(t, m, v.Want.Operation)
			checkBody(t, v, m, vals)
		})
	}
}

func checkHeader(t *testing.T, m *Message, w jsonVector) {
	t.Helper()
	got := map[string]any{
		"version": m.Version.String(), "flags": byte(m.Order) | map[bool]byte{true: 2}[m.MoreFragments],
		"order": strings.TrimSuffix(m.Order.String(), " endian"), "more": m.MoreFragments,
		"type": m.Type.String(), "size": m.Size,
	}
	want := map[string]any{
		"version": w.GIOPVersion, "flags": w.Flags, "order": w.ByteOrder, "more": w.MoreFragments,
		"type": w.MessageType, "size": w.MessageSize,
	}
	var sc []string
	switch {
	case m.Request != nil:
		r := m.Request
		got["id"], got["flags"], got["key"], got["op"] = r.RequestID, r.ResponseFlags, hex.EncodeToString(r.ObjectKey), r.Operation
		want["id"], want["flags"], want["key"], want["op"] = *w.RequestID, *w.ResponseFlags, w.ObjectKey, w.Operation
		if w.TargetAddressing != "KeyAddr" {
			t.Errorf("target addressing %s", w.TargetAddressing)
		}
		sc = checkServiceContexts(t, r.ServiceContexts)
	case m.Reply != nil:
		got["id"], got["status"] = m.Reply.RequestID, m.Reply.Status.String()
		want["id"], want["status"] = *w.RequestID, w.ReplyStatus
		sc = checkServiceContexts(t, m.Reply.ServiceContexts)
	case m.LocateRequest != nil:
		got["id"], got["key"] = m.LocateRequest.RequestID, hex.EncodeToString(m.LocateRequest.ObjectKey)
		want["id"], want["key"] = *w.RequestID, w.ObjectKey
	case m.LocateReply != nil:
		got["id"], got["status"], got["name"] = m.LocateReply.RequestID, uint32(m.LocateReply.Status), m.LocateReply.Status.String()
		want["id"], want["status"], want["name"] = *w.RequestID, *w.LocateStatus, w.LocateName
	}
	if m.Request != nil || m.Reply != nil {
		var wsc []string
		for _, c := range w.ServiceContext {
			s := fmt.Sprintf("%s %d %s", c.ContextID, c.Length, c.Data)
			if c.CodeSets != nil {
				s += " " + c.CodeSets.CharData + " " + c.CodeSets.WcharData
			}
			wsc = append(wsc, s)
		}
		got["contexts"], want["contexts"] = sc, wsc
		got["body"], want["body"] = m.BodyOffset, *w.BodyOffset
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("header (-vectors.json +decoded):\n%s", diff)
	}
}

var codeSetNames = map[uint32]string{CodeSetISO8859_1: "ISO-8859-1", CodeSetUTF16: "UTF-16", CodeSetUTF8: "UTF-8"}

// checkServiceContexts describes each context as vectors.json does.
func checkServiceContexts(t *testing.T, scs []ServiceContext) []string {
	t.Helper()
	var out []string
	for _, sc := range scs {
		s := fmt.Sprintf("0x%08x %d %x", sc.ID, len(sc.Data), sc.Data)
		if sc.ID == ServiceCodeSets {
			c, err := sc.CodeSets()
			if err != nil {
				t.Error(err)
			}
			s += fmt.Sprintf(" 0x%08x %s 0x%08x %s", c.Char, codeSetNames[c.Char], c.WChar, codeSetNames[c.WChar])
		}
		out = append(out, s)
	}
	return out
}

// decodeBody reads the values bodyTypes gives for the message's operation
// (the one its vector names for a reply); the body must hold nothing else.
func decodeBody(t *testing.T, m *Message, op string) []any {
	t.Helper()
	if m.Request == nil && m.Reply == nil {
		if m.BodyOffset != len(m.Bytes()) {
			t.Errorf("a %v with a body at %#x", m.Type, m.BodyOffset)
		}
		return nil
	}
	d := m.Body()
	var vals []any
	for _, tc := range bodyTypes(op, m.Reply != nil) {
		vals = append(vals, d.ReadValue(tc))
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if d.Len() != 0 {
		t.Errorf("%d bytes left after the body at %#x", d.Len(), d.Offset())
	}
	return vals
}

func checkBody(t *testing.T, v vector, m *Message, vals []any) {
	t.Helper()
	if len(v.Want.Body) == 0 {
		return
	}
	var b jsonBody
	if err := json.Unmarshal(v.Want.Body, &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(v.Want.Body, &b.Decoded); err != nil {
		t.Fatal(err)
	}
	switch op := v.Want.Operation; {
	case b.ConnectorProfile != nil:
		p := vals[len(vals)-1]
		if m.Reply != nil {
			checkResult(t, vals[0], b.Result)
		}
		checkProfile(t, m, b.ConnectorProfile, p)
	case op == "put" && m.Request != nil, op == "push" && m.Request != nil:
		checkPayload(t, v, m, b, vals[0].([]byte))
	case op == "notify_disconnect" && m.Request != nil:
		if vals[0] != b.ConnectorID {
			t.Errorf("connector id %q, want %q", vals[0], b.ConnectorID)
		}
	case op == "_non_existent" && m.Reply != nil:
		checkResult(t, vals[0], b.Result)
	case m.Reply != nil && b.Value != "":
		if e := vals[0].(Enum); e.Name != b.Value || e.Value != 0 {
			t.Errorf("result %v, want %s", e, b.Value)
		}
	case m.Reply != nil:
		checkResult(t, vals[0], b.Result)
	}
}

func checkResult(t *testing.T, got any, want json.RawMessage) {
	t.Helper()
	var w any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if e, ok := got.(Enum); ok {
		got = e.Name
	}
	if got != w {
		t.Errorf("result %v, want %v", got, w)
	}
}

// checkProfile reads the ConnectorProfile again field by field, to check
// the offsets vectors.json gives, and compares both with it.
func checkProfile(t *testing.T, m *Message, w *jsonProfile, value any) {
	t.Helper()
	d := m.Body()
	d.ReadBytes(w.NameOffset-d.Offset(), "the result")
	s := value.(Struct)
	field := func(name string) any { v, _ := s.Get(name); return v }
	if got := []any{d.ReadString("name"), d.ReadString("connector_id")}; !cmp.Equal(got, []any{w.Name, w.ConnectorID}) ||
		!cmp.Equal(got, []any{field("name"), field("connector_id")}) {
		t.Errorf("name, connector_id = %q and %v, want %q, %q", got, s, w.Name, w.ConnectorID)
	}
	ports := field("ports").([]any)
	if n := d.ReadLength("ports", 8); n != len(w.Ports) || len(ports) != n {
		t.Fatalf("%d ports read, %d read field by field, want %d", len(ports), n, len(w.Ports))
	}
	for i, wp := range w.Ports {
		d.Align(4)
		at := d.Offset()
		ior := d.ReadIOR()
		if at != wp.CDROffset || d.Offset()-at != wp.CDRLength {
			t.Errorf("port %d at %#x, %d bytes; want %#x, %d", i, at, d.Offset()-at, wp.CDROffset, wp.CDRLength)
		}
		if !cmp.Equal(ior, ports[i]) {
			t.Errorf("port %d: %v read field by field, %v in the value", i, ior, ports[i])
		}
		checkIOR(t, ior, wp)
	}
	d.Align(4)
	if d.Offset() != w.PropertiesOffset {
		t.Errorf("properties at %#x, want %#x", d.Offset(), w.PropertiesOffset)
	}
	props := field("properties").([]any)
	if n := d.ReadLength("properties", 9); n != len(w.Properties) || len(props) != n {
		t.Fatalf("%d properties, %d field by field, want %d", len(props), n, len(w.Properties))
	}
	var ior string
	for i, wp := range w.Properties {
		// vectors.json gives the offsets where the TypeCode and the value
		// begin, before their alignment.
		name := d.ReadString("name")
		tcAt := d.Offset()
		tc := d.ReadTypeCode()
		valAt := d.Offset()
		val := d.ReadValue(tc)
		if err := d.Err(); err != nil {
			t.Fatal(err)
		}
		nv := props[i].(Struct)
		if !cmp.Equal(nv, Struct{{"name", name}, {"value", &Any{tc, val}}}) {
			t.Errorf("property %d: %v read field by field, %v in the value", i, Struct{{"name", name}, {"value", &Any{tc, val}}}, nv)
		}
		if name != wp.Name || tcAt != wp.Any.TypecodeOffset || valAt != wp.Any.ValueOffset {
			t.Errorf("property %q, TypeCode at %#x, value at %#x; want %q, %#x, %#x", name, tcAt, valAt, wp.Name, wp.Any.TypecodeOffset, wp.Any.ValueOffset)
		}
		switch wp.Any.Typecode {
		case "string(bound=0)":
			var want string
			if err := json.Unmarshal(wp.Any.Value, &want); err != nil {
				t.Fatal(err)
			}
			if tc.Kind != TkString || tc.Bound != 0 || val != want {
				t.Errorf("property %s: %v %q, want string %q", name, tc, val, want)
			}
			if strings.HasSuffix(name, ".inport_ior") {
				ior = want
			}
		case "objref":
			var want struct{ IOR jsonIOR }
			if err := json.Unmarshal(wp.Any.Value, &want); err != nil {
				t.Fatal(err)
			}
			r, ok := val.(*IOR)
			if tc.Kind != TkObjref || tc.ID != want.IOR.TypeID || !ok {
				t.Fatalf("property %s: %v %v (%s), want an objref %s", name, tc, val, tc.ID, want.IOR.TypeID)
			}
			if tc.Name != strings.TrimSuffix(strings.TrimPrefix(tc.ID[strings.LastIndex(tc.ID, "/")+1:], ""), ":1.0") {
				t.Errorf("objref TypeCode name %q for %s", tc.Name, tc.ID)
			}
			if valAt != want.IOR.CDROffset || d.Offset()-valAt != want.IOR.CDRLength {
				t.Errorf("property %s: IOR at %#x, %d bytes; want %#x, %d", name, valAt, d.Offset()-valAt, want.IOR.CDROffset, want.IOR.CDRLength)
			}
			checkIOR(t, r, want.IOR)
			// The inport_ior property is the same reference, stringified.
			s, err := ParseIOR(ior)
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(s, r) || r.String() != ior {
				t.Errorf("inport_ref %v and inport_ior %v differ (or the IOR is written back as %s)", r, s, r.String())
			}
		default:
			t.Errorf("property %s: TypeCode %s in vectors.json", name, wp.Any.Typecode)
		}
	}
}

func checkIOR(t *testing.T, ior *IOR, w jsonIOR) {
	t.Helper()
	if ior.TypeID != w.TypeID || len(ior.Profiles) != len(w.Profiles) {
		t.Fatalf("IOR %s with %d profiles, want %s with %d", ior.TypeID, len(ior.Profiles), w.TypeID, len(w.Profiles))
	}
	for i, wp := range w.Profiles {
		p := ior.Profiles[i]
		iiop, err := ParseIIOPProfile(p.Data)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%d %d %s %v %s:%d %x", p.Tag, len(p.Data), strings.TrimSuffix(ByteOrder(p.Data[0]).String(), " endian"),
			iiop.Version, iiop.Host, iiop.Port, iiop.ObjectKey)
		want := fmt.Sprintf("%d %d %s %s %s:%d %s", wp.Tag, wp.Length, wp.ByteOrder, wp.IIOPVersion, wp.Host, wp.Port, wp.ObjectKey)
		for _, c := range iiop.Components {
			got += fmt.Sprintf(" %d:%x", c.Tag, c.Data)
		}
		for _, c := range wp.Components {
			want += fmt.Sprintf(" %d:%s", c.Tag, c.Data)
		}
		if got != want {
			t.Errorf("IIOP profile %s, want %s", got, want)
		}
		// What omniORB puts in its IORs: its ORB type, and ISO-8859-1 for
		// char (converting to UTF-8) and UTF-16 for wchar.
		for _, c := range iiop.Components {
			switch c.Tag {
			case TagORBType:
				if id, err := c.ORBType(); err != nil || id != ORBTypeOmniORB {
					t.Errorf("ORB type %#x, %v; want omniORB's", id, err)
				}
			case TagCodeSets:
				cs, err := c.CodeSets()
				want := &CodeSetComponentInfo{CodeSetComponent{CodeSetISO8859_1, []uint32{CodeSetUTF8}}, CodeSetComponent{CodeSetUTF16, []uint32{CodeSetUTF16}}}
				if err != nil || !cmp.Equal(cs, want) {
					t.Errorf("code sets %+v, %v; want %+v", cs, err, want)
				}
			}
		}
		if again := iiop.Profile(ByteOrder(p.Data[0])); !bytes.Equal(again.Data, p.Data) {
			t.Errorf("IIOP profile written back:\n%x\nwant\n%x", again.Data, p.Data)
		}
	}
}

// checkPayload checks a put's or push's CdrData: where it is, its bytes
// (also in the .payload.bin file), and its value as the Timed* type the
// vector names, read with alignment from the payload's byte 0.
func checkPayload(t *testing.T, v vector, m *Message, b jsonBody, payload []byte) {
	t.Helper()
	if m.BodyOffset != b.LengthOffset || b.PayloadOffset != b.LengthOffset+4 || len(payload) != b.Length ||
		hex.EncodeToString(payload) != b.Hex || !bytes.Equal(payload, v.Payload) ||
		!bytes.Equal(payload, m.Bytes()[b.PayloadOffset:]) {
		t.Errorf("payload at %#x: %x; want %d bytes at %#x: %s", m.BodyOffset+4, payload, b.Length, b.PayloadOffset, b.Hex)
	}
	for key, raw := range b.Decoded {
		name, ok := strings.CutPrefix(key, "decoded_as_")
		if !ok {
			continue
		}
		var w map[string]any
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatal(err)
		}
		order := LittleEndian
		if strings.HasPrefix(w["byte_order"].(string), "big") {
			order = BigEndian
		}
		if w["alignment_base"] != "payload byte 0" {
			t.Errorf("alignment base %v", w["alignment_base"])
		}
		tc := timed[name]
		d := NewDecoder(payload, order)
		val := d.ReadValue(tc)
		if err := d.Err(); err != nil {
			t.Fatal(err)
		}
		if d.Len() != 0 {
			t.Errorf("%d bytes left after the %s", d.Len(), name)
		}
		s := val.(Struct)
		tm, _ := s.Get("tm")
		data, _ := s.Get("data")
		want := Struct{{"sec", uint32(w["tm.sec"].(float64))}, {"nsec", uint32(w["tm.nsec"].(float64))}}
		if !cmp.Equal(tm, want) {
			t.Errorf("%s tm %v, want %v", name, tm, want)
		}
		if got, want := fmt.Sprint(data), fmt.Sprint(jsonInts(w["data"])); got != want {
			t.Errorf("%s data %s, want %s", name, got, want)
		}
		if name == "TimedString" && !bytes.Equal([]byte(data.(string)), payload[12:len(payload)-1]) {
			t.Errorf("TimedString %q is not the payload's bytes %x", data, payload[12:len(payload)-1])
		}
		// Written back from payload byte 0, in the same byte order.
		e := NewEncoder(order)
		if err := e.WriteValue(tc, val); err != nil {
			t.Fatal(err)
		}
		if diff := maskedDiff(e, payload); diff != "" {
			t.Errorf("%s written back: %s", name, diff)
		}
	}
}

// TestVectorUTF8: vector 23's TimedString is "utf-8: こんにちは", byte for
// byte as the C++ component sent it, and comes back the same when written.
func TestVectorUTF8(t *testing.T) {
	for _, v := range loadVectors(t) {
		if !strings.HasPrefix(v.Name, "23_") {
			continue
		}
		d := NewDecoder(v.Payload, LittleEndian)
		got := d.ReadValue(timed["TimedString"]).(Struct)
		data, _ := got.Get("data")
		want := "utf-8: こんにちは"
		if data != want || !bytes.Equal(v.Payload[12:12+len(want)], []byte(want)) {
			t.Errorf("data %q, want %q", data, want)
		}
		e := NewEncoder(LittleEndian)
		if err := e.WriteValue(timed["TimedString"], got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Bytes(), v.Payload) {
			t.Errorf("written back as %x, want %x", e.Bytes(), v.Payload)
		}
		return
	}
	t.Error("no vector 23")
}

// TestVectorsWrittenBack writes every vector again from what was decoded
// (the same version and byte order) and compares it with the captured
// bytes, except the padding, where omniORB leaves garbage.
func TestVectorsWrittenBack(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			m, err := ParseMessage(v.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			vals := decodeBody(t, m, v.Want.Operation)
			e := encodeLike(t, m, vals, m.Version, m.Order, v.Want.Operation)
			if diff := maskedDiff(e, v.Bytes); diff != "" {
				t.Error(diff)
			}
			var padded int
			for _, p := range *e.pads {
				padded += p[1] - p[0]
			}
			t.Logf("%d bytes equal, %d of padding masked", len(v.Bytes), padded)
		})
	}
}

// TestVectorsInOtherVersions writes every vector again in each GIOP
// version and byte order (the big-endian frames a big-endian peer would
// send), and checks that they decode to the same fields and values.
func TestVectorsInOtherVersions(t *testing.T) {
	for _, v := range loadVectors(t) {
		m, err := ParseMessage(v.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		vals := decodeBody(t, m, v.Want.Operation)
		for _, ver := range []Version{GIOP10, GIOP11, GIOP12} {
			for _, order := range []ByteOrder{BigEndian, LittleEndian} {
				t.Run(fmt.Sprintf("%s/%v/%s", v.Name, ver, strings.ReplaceAll(order.String(), " ", "_")), func(t *testing.T) {
					b := encodeLike(t, m, vals, ver, order, v.Want.Operation).Bytes()
					if order == BigEndian && (b[6]&1 != 0 || b[8] != 0) {
						t.Fatalf("not a big-endian frame: % x", b[:12])
					}
					m2, err := ParseMessage(b)
					if err != nil {
						t.Fatal(err)
					}
					if m2.Version != ver || m2.Order != order || m2.Type != m.Type {
						t.Errorf("header %+v", m2.Header)
					}
					if diff := cmp.Diff(
						[]any{m.Request, m.Reply, m.LocateRequest, m.LocateReply, m.CancelRequest},
						[]any{m2.Request, m2.Reply, m2.LocateRequest, m2.LocateReply, m2.CancelRequest}, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("headers differ (-captured +written):\n%s", diff)
					}
					if diff := cmp.Diff(vals, decodeBody(t, m2, v.Want.Operation)); diff != "" {
						t.Errorf("bodies differ (-captured +written):\n%s", diff)
					}
				})
			}
		}
	}
}

// encodeLike writes a message with m's headers and the body values.
func encodeLike(t *testing.T, m *Message, vals []any, v Version, order ByteOrder, op string) *Encoder {
	t.Helper()
	var e *Encoder
	var err error
	switch m.Type {
	case MsgRequest:
		e, err = EncodeRequest(v, order, m.Request)
	case MsgReply:
		e, err = EncodeReply(v, order, m.Reply)
	case MsgLocateRequest:
		var b []byte
		b, err = EncodeLocateRequest(v, order, m.LocateRequest)
		e = &Encoder{buf: b, pads: new([][2]int)}
		if v.Minor >= 2 {
			*e.pads = append(*e.pads, [2]int{0x12, 0x14}) // after the TargetAddress discriminator
		}
	case MsgLocateReply:
		e, err = EncodeLocateReply(v, order, m.LocateReply)
	case MsgCloseConnection:
		var b []byte
		b, err = EncodeCloseConnection(v, order)
		e = &Encoder{buf: b, pads: new([][2]int)}
	default:
		t.Fatalf("no vectors of type %v", m.Type)
	}
	if err != nil {
		t.Fatal(err)
	}
	if m.Request != nil || m.Reply != nil {
		for i, tc := range bodyTypes(op, m.Reply != nil) {
			if err := e.WriteValue(tc, vals[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e
}

// maskedDiff compares what e wrote with want, except where e wrote
// padding; it describes the first difference, or returns "".
func maskedDiff(e *Encoder, want []byte) string {
	got := e.Bytes()
	pad := make([]bool, len(got))
	for _, p := range *e.pads {
		for i := p[0]; i < p[1]; i++ {
			pad[i] = true
		}
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] && !pad[i] {
			lo := max(0, i-8)
			return fmt.Sprintf("byte %#x is %#02x, want %#02x (from %#x: % x, want % x)", i, got[i], want[i], lo,
				got[lo:min(len(got), i+8)], want[lo:min(len(want), i+8)])
		}
	}
	if len(got) != len(want) {
		return "length " + strconv.Itoa(len(got)) + ", want " + strconv.Itoa(len(want))
	}
	return ""
}

// jsonInts turns the whole numbers JSON decoded as float64 into int64,
// so that they print as Go prints integers.
func jsonInts(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonInts(e)
		}
		return out
	}
	return v
}
