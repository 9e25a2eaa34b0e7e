package corba

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// IOR is an interoperable object reference: the object's repository id
// and its tagged profiles. A nil reference has no profiles.
type IOR struct {
	TypeID   string
	Profiles []TaggedProfile
}

// TaggedProfile is one profile of an IOR; Data is its encapsulation, kept
// as it came (see IIOPProfile for TagInternetIOP).
type TaggedProfile struct {
	Tag  uint32
	Data []byte
}

// Profile tags.
const (
	TagInternetIOP        = 0
	TagMultipleComponents = 1
)

// Component tags.
const (
	TagORBType  = 0 // the ORB's vendor: omniORB's is ORBTypeOmniORB
	TagCodeSets = 1 // CodeSetComponentInfo
)

// ORBTypeOmniORB is omniORB's TAG_ORB_TYPE value ("\0TTA").
const ORBTypeOmniORB = 0x41545400

// IsNil says whether ior is a nil object reference.
func (ior *IOR) IsNil() bool { return ior == nil || len(ior.Profiles) == 0 }

// ReadIOR reads an object reference (an IOR).
func (d *Decoder) ReadIOR() *IOR {
	ior := &IOR{TypeID: d.ReadString("IOR type id")}
	// A profile takes at least 8 bytes: its tag and an empty sequence.
	n := d.ReadLength("IOR profile list", 8)
	for i := 0; i < n && d.st.err == nil; i++ {
		p := TaggedProfile{Tag: d.ReadULong()}
		p.Data = d.ReadOctetSeq("IOR profile data")
		ior.Profiles = append(ior.Profiles, p)
	}
	if d.st.err != nil {
		return nil
	}
	return ior
}

// WriteIOR writes an object reference; a nil *IOR is a nil reference.
func (e *Encoder) WriteIOR(ior *IOR) {
	if ior == nil {
		ior = &IOR{}
	}
	e.WriteString(ior.TypeID)
	e.WriteULong(uint32(len(ior.Profiles)))
	for _, p := range ior.Profiles {
		e.WriteULong(p.Tag)
		e.WriteOctetSeq(p.Data)
	}
}

// ParseIOR parses a stringified IOR: "IOR:" and the hex digits of an
// encapsulated IOR. Offsets in errors count bytes of the encapsulation.
func ParseIOR(s string) (*IOR, error) {
	if len(s) < 4 || !strings.EqualFold(s[:4], "IOR:") {
		return nil, fmt.Errorf("ior: %q does not start with \"IOR:\"", truncate(s))
	}
	h := s[4:]
	if len(h)%2 != 0 {
		return nil, fmt.Errorf("ior: an odd number of hex digits (%d)", len(h))
	}
	if i := strings.IndexFunc(h, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) }); i >= 0 {
		return nil, fmt.Errorf("ior: character %d (%q) is not a hex digit", 4+i, []rune(h[i:])[0])
	}
	b, _ := hex.DecodeString(h)
	d, err := encapsulation(b, "IOR")
	if err != nil {
		return nil, fmt.Errorf("ior: %w", err)
	}
	ior := d.ReadIOR()
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("ior: %w", err)
	}
	return ior, nil
}

// String returns the stringified IOR ("IOR:" and lower-case hex), encoded
// little endian as omniORB does.
func (ior *IOR) String() string {
	e := NewEncapsulation(LittleEndian)
	e.WriteIOR(ior)
	return "IOR:" + hex.EncodeToString(e.Bytes())
}

// IIOP returns the first IIOP profile of ior, decoded.
func (ior *IOR) IIOP() (*IIOPProfile, error) {
	if ior != nil {
		for _, p := range ior.Profiles {
			if p.Tag == TagInternetIOP {
				return ParseIIOPProfile(p.Data)
			}
		}
	}
	return nil, fmt.Errorf("ior: no IIOP profile")
}

// IIOPProfile is the body of a TAG_INTERNET_IOP profile, IIOP 1.0 to 1.2.
type IIOPProfile struct {
	Version    Version
	Host       string
	Port       uint16
	ObjectKey  []byte
	Components []TaggedComponent // IIOP 1.1 and later
}

// TaggedComponent is a component of an IIOP 1.1+ profile; Data is kept as
// it came (see its ORBType and CodeSets methods for two known tags).
type TaggedComponent struct {
	Tag  uint32
	Data []byte
}

// ParseIIOPProfile decodes a TAG_INTERNET_IOP profile's data (an
// encapsulation).
func ParseIIOPProfile(data []byte) (*IIOPProfile, error) {
	d, err := encapsulation(data, "IIOP profile")
	if err != nil {
		return nil, fmt.Errorf("ior: %w", err)
	}
	p := &IIOPProfile{Version: Version{d.ReadOctet(), d.ReadOctet()}}
	if d.Err() == nil && p.Version.Major != 1 {
		d.failAt(1, true, "IIOP version %v is not supported", p.Version)
	}
	p.Host = d.ReadString("host")
	p.Port = d.ReadUShort()
	p.ObjectKey = d.ReadOctetSeq("object key")
	if p.Version.Minor >= 1 {
		p.Components = d.readComponents()
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("ior: %w", err)
	}
	return p, nil
}

func (d *Decoder) readComponents() []TaggedComponent {
	var cs []TaggedComponent
	n := d.ReadLength("component list", 8)
	for i := 0; i < n && d.st.err == nil; i++ {
		c := TaggedComponent{Tag: d.ReadULong()}
		c.Data = d.ReadOctetSeq("component data")
		cs = append(cs, c)
	}
	return cs
}

// encapsulation returns a Decoder for the contents of a bare encapsulation
// (after its byte-order octet), naming it part in errors; its error is an
// *Error, for the caller to prefix.
func encapsulation(data []byte, part string) (*Decoder, error) {
	if len(data) == 0 {
		return nil, &Error{Part: part, Msg: "empty encapsulation, without its byte-order octet"}
	}
	if data[0] > 1 {
		return nil, &Error{Part: part, Msg: fmt.Sprintf("byte-order octet %#02x is neither 0 nor 1", data[0])}
	}
	d := NewDecoder(data, ByteOrder(data[0]))
	d.pos = 1
	d.SetPart(part)
	return d, nil
}

// Profile encodes p as a TAG_INTERNET_IOP profile in the given byte order.
// An IIOP 1.0 profile has no components.
func (p *IIOPProfile) Profile(order ByteOrder) TaggedProfile {
	e := NewEncapsulation(order)
	e.WriteOctet(p.Version.Major)
	e.WriteOctet(p.Version.Minor)
	e.WriteString(p.Host)
	e.WriteUShort(p.Port)
	e.WriteOctetSeq(p.ObjectKey)
	if p.Version.Minor >= 1 {
		e.WriteULong(uint32(len(p.Components)))
		for _, c := range p.Components {
			e.WriteULong(c.Tag)
			e.WriteOctetSeq(c.Data)
		}
	}
	return TaggedProfile{Tag: TagInternetIOP, Data: e.Bytes()}
}

// ORBType decodes a TAG_ORB_TYPE component: the ORB vendor's id.
func (c TaggedComponent) ORBType() (uint32, error) {
	if c.Tag != TagORBType {
		return 0, fmt.Errorf("ior: component tag %d is not TAG_ORB_TYPE", c.Tag)
	}
	d, err := encapsulation(c.Data, "TAG_ORB_TYPE component")
	if err != nil {
		return 0, fmt.Errorf("ior: %w", err)
	}
	id := d.ReadULong()
	if err := d.Err(); err != nil {
		return 0, fmt.Errorf("ior: %w", err)
	}
	return id, nil
}

// ORBTypeComponent encodes a TAG_ORB_TYPE component.
func ORBTypeComponent(order ByteOrder, id uint32) TaggedComponent {
	e := NewEncapsulation(order)
	e.WriteULong(id)
	return TaggedComponent{Tag: TagORBType, Data: e.Bytes()}
}

// Code sets (OSF registry values) that omniORB offers and uses.
const (
	CodeSetISO8859_1 = 0x00010001
	CodeSetUTF16     = 0x00010109
	CodeSetUTF8      = 0x05010001
)

// CodeSetComponent is one half of a TAG_CODE_SETS component: the native
// code set and the ones the ORB converts to and from.
type CodeSetComponent struct {
	Native     uint32
	Conversion []uint32
}

// CodeSetComponentInfo is the TAG_CODE_SETS component: the code sets for
// char and for wchar data.
type CodeSetComponentInfo struct {
	Char, WChar CodeSetComponent
}

// CodeSets decodes a TAG_CODE_SETS component.
func (c TaggedComponent) CodeSets() (*CodeSetComponentInfo, error) {
	if c.Tag != TagCodeSets {
		return nil, fmt.Errorf("ior: component tag %d is not TAG_CODE_SETS", c.Tag)
	}
	d, err := encapsulation(c.Data, "TAG_CODE_SETS component")
	if err != nil {
		return nil, fmt.Errorf("ior: %w", err)
	}
	var info CodeSetComponentInfo
	for _, cs := range []*CodeSetComponent{&info.Char, &info.WChar} {
		cs.Native = d.ReadULong()
		n := d.ReadLength("conversion code sets", 4)
		for i := 0; i < n && d.st.err == nil; i++ {
			cs.Conversion = append(cs.Conversion, d.ReadULong())
		}
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("ior: %w", err)
	}
	return &info, nil
}

// Component encodes info as a TAG_CODE_SETS component.
func (info *CodeSetComponentInfo) Component(order ByteOrder) TaggedComponent {
	e := NewEncapsulation(order)
	for _, cs := range []CodeSetComponent{info.Char, info.WChar} {
		e.WriteULong(cs.Native)
		e.WriteULong(uint32(len(cs.Conversion)))
		for _, c := range cs.Conversion {
			e.WriteULong(c)
		}
	}
	return TaggedComponent{Tag: TagCodeSets, Data: e.Bytes()}
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
