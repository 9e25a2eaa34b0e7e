package corba

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The InPortCdr reference a ConsoleOut published in vector 05.
const inportIOR = "IOR:010000001a00000049444c3a4f70656e52544d2f496e506f72744364723a312e30000000010000000000000068000000010102000a0000003132372e302e302e3100d3b817000000ff73686f7274637574fe4e0d096b010009c80000000000000200000000000000080000000100000000545441010000001c00000001000000010001000100000001000105090101000100000009010100"

// TestIORAsOmniORBWritesIt builds the captured InPortCdr reference from
// its parts, as a Go servant would publish its own, and gets omniORB's
// string (its padding there happens to be zeros).
func TestIORAsOmniORBWritesIt(t *testing.T) {
	p := &IIOPProfile{
		Version:   GIOP12,
		Host:      "127.0.0.1",
		Port:      47315,
		ObjectKey: []byte("\xffshortcut\xfe\x4e\x0d\x09\x6b\x01\x00\x09\xc8\x00\x00\x00\x00\x00"),
		Components: []TaggedComponent{
			ORBTypeComponent(LittleEndian, ORBTypeOmniORB),
			(&CodeSetComponentInfo{
				Char:  CodeSetComponent{CodeSetISO8859_1, []uint32{CodeSetUTF8}},
				WChar: CodeSetComponent{CodeSetUTF16, []uint32{CodeSetUTF16}},
			}).Component(LittleEndian),
		},
	}
	ior := &IOR{TypeID: "IDL:OpenRTM/InPortCdr:1.0", Profiles: []TaggedProfile{p.Profile(LittleEndian)}}
	if got := ior.String(); got != inportIOR {
		t.Errorf("built\n%s\nwant\n%s", got, inportIOR)
	}
	parsed, err := ParseIOR(strings.ToUpper(inportIOR[:4]) + strings.ToUpper(inportIOR[4:]))
	if err != nil {
		t.Fatal(err)
	}
	got, err := parsed.IIOP()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("parsed (-built +parsed):\n%s", diff)
	}
}

// TestIIOPVersions: an IIOP 1.0 profile has no components; 1.1 and 1.2
// have them; both byte orders.
func TestIIOPVersions(t *testing.T) {
	for _, v := range []Version{GIOP10, GIOP11, GIOP12} {
		for _, order := range []ByteOrder{BigEndian, LittleEndian} {
			p := &IIOPProfile{Version: v, Host: "ロボット.local", Port: 2809, ObjectKey: []byte("NameService")}
			if v != GIOP10 {
				p.Components = []TaggedComponent{{Tag: 0x4f4d0000, Data: []byte{1, 2, 3}}, ORBTypeComponent(order, 7)}
			}
			got, err := ParseIIOPProfile(p.Profile(order).Data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(p, got); diff != "" {
				t.Errorf("IIOP %v %v (-written +read):\n%s", v, order, diff)
			}
		}
	}
	ior := &IOR{}
	if !ior.IsNil() || !(*IOR)(nil).IsNil() || (&IOR{Profiles: []TaggedProfile{{}}}).IsNil() {
		t.Error("IsNil")
	}
	if _, err := ior.IIOP(); err == nil {
		t.Error("a nil reference has an IIOP profile")
	}
}

func TestIORErrors(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"ior:", "ior: IOR at offset 0x0: empty encapsulation, without its byte-order octet"},
		{"IOX:00", `ior: "IOX:00" does not start with "IOR:"`},
		{"IOR:0", "ior: an odd number of hex digits (1)"},
		{"IOR:01zz", `ior: character 6 ('z') is not a hex digit`},
		{"IOR:02000000", "ior: IOR at offset 0x0: byte-order octet 0x02 is neither 0 nor 1"},
		{"IOR:01000000ffffffff", "ior: IOR at offset 0x4: IOR type id length 4294967295 exceeds the 0 bytes left"},
		{"IOR:0100000001000000000000000500000000000000", "ior: IOR at offset 0xc: IOR profile list length 5 needs at least 40 bytes, 4 left"},
	} {
		if _, err := ParseIOR(c.in); err == nil || err.Error() != c.err {
			t.Errorf("%s: error %v, want %q", c.in, err, c.err)
		}
	}
	for _, c := range []struct {
		data        []byte
		err         string
		unsupported bool
	}{
		{nil, "ior: IIOP profile at offset 0x0: empty encapsulation, without its byte-order octet", false},
		{[]byte{1, 2, 0}, "ior: IIOP profile at offset 0x1: IIOP version 2.0 is not supported", true},
		{[]byte{1, 1, 2, 0, 0}, "ior: IIOP profile at offset 0x4: host length needs 4 bytes, 1 left", false},
	} {
		_, err := ParseIIOPProfile(c.data)
		if err == nil || err.Error() != c.err || errors.Is(err, ErrUnsupported) != c.unsupported {
			t.Errorf("% x: error %v, want %q", c.data, err, c.err)
		}
	}
	if _, err := (TaggedComponent{Tag: TagCodeSets, Data: []byte{1, 0, 0, 0, 1}}).CodeSets(); err == nil ||
		err.Error() != "ior: TAG_CODE_SETS component at offset 0x4: unsigned long needs 4 bytes, 1 left" {
		t.Errorf("short code sets: %v", err)
	}
	if _, err := (TaggedComponent{Tag: TagCodeSets}).ORBType(); err == nil {
		t.Error("ORBType of a code sets component")
	}
}

func TestCorbaloc(t *testing.T) {
	for _, c := range []struct {
		in    string
		want  Corbaloc
		write string
	}{
		{"corbaloc::127.0.0.1:2809/NameService", Corbaloc{[]IIOPAddr{{GIOP10, "127.0.0.1", 2809}}, []byte("NameService")},
			"corbaloc:iiop:1.0@127.0.0.1:2809/NameService"},
		{"corbaloc:iiop:1.2@localhost/NameService", Corbaloc{[]IIOPAddr{{GIOP12, "localhost", 2809}}, []byte("NameService")},
			"corbaloc:iiop:1.2@localhost:2809/NameService"},
		{"CORBALOC:IIOP:1.2@[::1]:5000,:robot:/%ffshortcut%FE%2f", Corbaloc{[]IIOPAddr{{GIOP12, "::1", 5000}, {GIOP10, "robot", 2809}}, []byte("\xffshortcut\xfe/")},
			"corbaloc:iiop:1.2@[::1]:5000,iiop:1.0@robot:2809/%ffshortcut%fe%2f"},
		{"corbaloc::ロボット:1/鍵", Corbaloc{[]IIOPAddr{{GIOP10, "ロボット", 1}}, []byte("鍵")},
			"corbaloc:iiop:1.0@ロボット:1/%e9%8d%b5"},
		{"corbaloc::h/", Corbaloc{[]IIOPAddr{{GIOP10, "h", 2809}}, []byte{}}, "corbaloc:iiop:1.0@h:2809/"},
	} {
		got, err := ParseCorbaloc(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(&c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.in, diff)
		}
		if s := got.String(); s != c.write {
			t.Errorf("%s written as %s, want %s", c.in, s, c.write)
		}
	}
	for _, c := range []struct{ in, err string }{
		{"corbaname::host/NameService", `corbaloc: "corbaname::host/NameService" does not start with "corbaloc:"`},
		{"corbaloc::host", "corbaloc: at character 14: no '/' before the object key"},
		{"corbaloc:rir:/NameService", `corbaloc: at character 9: protocol "rir" is not supported, only iiop`},
		{"corbaloc:host/x", `corbaloc: at character 9: address "host" names no protocol ("iiop:" or ":")`},
		{"corbaloc::a,:b:99999/x", `corbaloc: at character 15: port "99999" is not a number from 0 to 65535`},
		{"corbaloc::x.y@h/x", `corbaloc: at character 10: version "x.y" is not major.minor`},
		{"corbaloc::[::1/x", "corbaloc: at character 10: IPv6 address without its closing ']'"},
		{"corbaloc::[zz]/x", `corbaloc: at character 10: "zz" is not an IPv6 address`},
		{"corbaloc::/x", "corbaloc: at character 11: no host"},
		{"corbaloc::h/a%4", "corbaloc: at character 13: '%' is not followed by two hex digits"},
	} {
		if _, err := ParseCorbaloc(c.in); err == nil || err.Error() != c.err {
			t.Errorf("%s: error %v, want %q", c.in, err, c.err)
		}
	}
}
