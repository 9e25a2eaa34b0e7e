package corba

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// tcNode is a recursive struct: struct Node { string name; sequence<Node> children; }.
var tcNode = func() *TypeCode {
	n := &TypeCode{Kind: TkStruct, ID: "IDL:test/Node:1.0", Name: "Node"}
	n.Members = []Member{{"name", tcString}, {"children", &TypeCode{Kind: TkSequence, Content: n}}}
	return n
}()

// sampleAnys holds a value of every kind this package handles.
func sampleAnys() []*Any {
	ior, _ := ParseIOR("IOR:010000001a00000049444c3a4f70656e52544d2f496e506f72744364723a312e30000000010000000000000068000000010102000a0000003132372e302e302e3100d3b817000000ff73686f7274637574fe4e0d096b010009c80000000000000200000000000000080000000100000000545441010000001c00000001000000010001000100000001000105090101000100000009010100")
	tk := func(k Kind) *TypeCode { return NewTypeCode(k) }
	return []*Any{
		{tk(TkNull), nil},
		{tk(TkVoid), nil},
		{tk(TkShort), int16(-2)},
		{tk(TkLong), int32(-100000)},
		{tk(TkUShort), uint16(65535)},
		{tk(TkULong), uint32(4e9)},
		{tk(TkFloat), float32(1.5)},
		{tk(TkDouble), -2.25},
		{tk(TkBoolean), true},
		{tk(TkChar), byte('x')},
		{tk(TkOctet), byte(0xff)},
		{tk(TkLongLong), int64(-1 << 40)},
		{tk(TkULongLong), uint64(1 << 63)},
		{tcString, "こんにちは、ロボット"},
		{&TypeCode{Kind: TkString, Bound: 10}, "hi"},
		{tcReturnCode, Enum{2, "BAD_PARAMETER"}},
		{timed["TimedLong"], Struct{{"tm", Struct{{"sec", uint32(1)}, {"nsec", uint32(2)}}}, {"data", int32(-1)}}},
		{&TypeCode{Kind: TkSequence, Content: tk(TkLong)}, []any{int32(1), int32(2)}},
		{&TypeCode{Kind: TkSequence, Content: tk(TkOctet), Bound: 4}, []byte{1, 2, 3}},
		{&TypeCode{Kind: TkArray, Content: tk(TkDouble), Length: 3}, []any{1.0, 2.0, 3.0}},
		{&TypeCode{Kind: TkArray, Content: &TypeCode{Kind: TkArray, Content: tk(TkChar), Length: 2}, Length: 2}, []any{[]byte("ab"), []byte("cd")}},
		{tcNVList, []any{Struct{{"name", "dataport.interface_type"}, {"value", &Any{tcString, "corba_cdr"}}},
			Struct{{"name", "日本語"}, {"value", &Any{tk(TkLong), int32(7)}}}}},
		{tcPortService, ior},
		{tcPortService, &IOR{}},
		{tcAny, &Any{tcAny, &Any{tk(TkShort), int16(3)}}},
		{tk(TkTypeCode), tcConnectorProfile},
		{tk(TkTypeCode), tcNode},
		{tcNode, Struct{{"name", "root"}, {"children", []any{
			Struct{{"name", "leaf"}, {"children", []any{}}},
			Struct{{"name", "葉"}, {"children", []any{}}}}}}},
	}
}

// TestAnyRoundTrip writes each sample any in both byte orders, at every
// alignment, and reads it back.
func TestAnyRoundTrip(t *testing.T) {
	for _, a := range sampleAnys() {
		for _, order := range []ByteOrder{BigEndian, LittleEndian} {
			for shift := 0; shift < 8; shift++ {
				t.Run(fmt.Sprintf("%v/%s/%d", a.Type, order, shift), func(t *testing.T) {
					e := NewEncoder(order)
					for range shift {
						e.WriteOctet(0xaa)
					}
					if err := e.WriteAny(a); err != nil {
						t.Fatal(err)
					}
					d := NewDecoder(e.Bytes(), order)
					d.ReadBytes(shift, "shift")
					got := d.ReadAny()
					if err := d.Err(); err != nil {
						t.Fatalf("%v in % x", err, e.Bytes())
					}
					if d.Len() != 0 {
						t.Errorf("%d bytes left", d.Len())
					}
					if diff := cmp.Diff(a, got); diff != "" {
						t.Errorf("read back (-written +read):\n%s", diff)
					}
				})
			}
		}
	}
}

// TestRandomValuesRoundTrip writes random values of each kind (and of
// sequences, arrays and structs of them) and reads them back.
func TestRandomValuesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 1))
	kinds := []Kind{TkShort, TkLong, TkUShort, TkULong, TkFloat, TkDouble, TkBoolean, TkChar, TkOctet,
		TkLongLong, TkULongLong, TkString, TkEnum}
	for _, k := range kinds {
		base := NewTypeCode(k)
		if k == TkEnum {
			base = tcReturnCode
		}
		for _, tc := range []*TypeCode{base,
			{Kind: TkSequence, Content: base},
			{Kind: TkArray, Content: base, Length: 5},
			{Kind: TkAlias, ID: "IDL:test/A:1.0", Name: "A", Content: base},
			{Kind: TkStruct, ID: "IDL:test/S:1.0", Name: "S", Members: []Member{{"o", NewTypeCode(TkOctet)}, {"v", base}, {"s", &TypeCode{Kind: TkSequence, Content: base}}}},
		} {
			for i := 0; i < 50; i++ {
				v := randValue(r, tc)
				order := ByteOrder(r.IntN(2))
				e := NewEncoder(order)
				if err := e.WriteAny(&Any{tc, v}); err != nil {
					t.Fatalf("%v %v: %v", tc, v, err)
				}
				d := NewDecoder(e.Bytes(), order)
				got := d.ReadAny()
				if err := d.Err(); err != nil {
					t.Fatalf("%v %v: %v", tc, v, err)
				}
				if diff := cmp.Diff(&Any{tc, v}, got, cmpopts.EquateNaNs()); diff != "" {
					t.Fatalf("%v read back (-written +read):\n%s", tc, diff)
				}
			}
		}
	}
}

func randValue(r *rand.Rand, tc *TypeCode) any {
	switch tc.Kind {
	case TkShort:
		return int16(r.Uint32())
	case TkLong:
		return int32(r.Uint32())
	case TkUShort:
		return uint16(r.Uint32())
	case TkULong:
		return r.Uint32()
	case TkLongLong:
		return int64(r.Uint64())
	case TkULongLong:
		return r.Uint64()
	case TkFloat:
		return math.Float32frombits(r.Uint32())
	case TkDouble:
		return math.Float64frombits(r.Uint64())
	case TkBoolean:
		return r.IntN(2) == 1
	case TkChar, TkOctet:
		return byte(r.Uint32())
	case TkString:
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(r.IntN(255) + 1)
		}
		if r.IntN(2) == 0 {
			return "ロボット" + string(b)
		}
		return string(b)
	case TkEnum:
		n := r.IntN(len(tc.Enumerators))
		return Enum{uint32(n), tc.Enumerators[n]}
	case TkAlias:
		return randValue(r, tc.Content)
	case TkStruct:
		var s Struct
		for _, m := range tc.Members {
			s = append(s, Field{m.Name, randValue(r, m.Type)})
		}
		return s
	case TkSequence, TkArray:
		n := int(tc.Length)
		if tc.Kind == TkSequence {
			n = r.IntN(6)
		}
		if k := tc.Content.Kind; k == TkOctet || k == TkChar {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			return b
		}
		vs := make([]any, n)
		for i := range vs {
			vs[i] = randValue(r, tc.Content)
		}
		return vs
	}
	panic("no random values of " + tc.String())
}

// TestWriteValueConversions: the Go values WriteValue takes besides the
// ones ReadValue gives, and the ones it refuses, with the reason.
func TestWriteValueConversions(t *testing.T) {
	for _, c := range []struct {
		tc   *TypeCode
		v    any
		want any // read back; nil: same as v
		err  string
	}{
		{NewTypeCode(TkLong), 7, int32(7), ""},
		{NewTypeCode(TkUShort), uint8(7), uint16(7), ""},
		{NewTypeCode(TkDouble), float32(0.5), 0.5, ""},
		{&TypeCode{Kind: TkSequence, Content: NewTypeCode(TkDouble)}, []float64{1, 2}, []any{1.0, 2.0}, ""},
		{timed["TimedLong"], map[string]any{"tm": map[string]any{"sec": 1, "nsec": 2}, "data": -3},
			Struct{{"tm", Struct{{"sec", uint32(1)}, {"nsec", uint32(2)}}}, {"data", int32(-3)}}, ""},
		{tcReturnCode, "UNSUPPORTED", Enum{3, "UNSUPPORTED"}, ""},
		{tcReturnCode, uint32(1), Enum{1, "RTC_ERROR"}, ""},
		{NewTypeCode(TkShort), 40000, nil, "40000 is out of the range of a short"},
		{NewTypeCode(TkULong), -1, nil, "-1 is out of the range of a unsigned long"},
		{NewTypeCode(TkLong), "1", nil, "a long cannot hold string"},
		{&TypeCode{Kind: TkString, Bound: 2}, "abc", nil, "string of 3 bytes exceeds its bound 2"},
		{tcReturnCode, "OK", nil, `"OK" is not an enumerator of enum ReturnCode_t`},
		{tcReturnCode, uint32(6), nil, "value 6 is out of the range of enum ReturnCode_t"},
		{&TypeCode{Kind: TkArray, Content: NewTypeCode(TkLong), Length: 2}, []int32{1}, nil, "a long[2] cannot hold 1 elements"},
		{timed["TimedLong"], Struct{{"tm", Struct{{"sec", uint32(1)}, {"nsec", uint32(2)}}}, {"data", "x"}}, nil,
			"struct TimedLong member data: a long cannot hold string"},
		{timed["TimedLong"], map[string]any{"tm": Struct{{"sec", uint32(1)}, {"nsec", uint32(2)}}, "datum": 1}, nil, "struct TimedLong: no value for member data"},
		{&TypeCode{Kind: TkUnion}, nil, nil, "a value of TypeCode kind union: not supported"},
	} {
		e := NewEncoder(LittleEndian)
		err := e.WriteValue(c.tc, c.v)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%v %#v: error %v, want %q", c.tc, c.v, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v %#v: %v", c.tc, c.v, err)
			continue
		}
		d := NewDecoder(e.Bytes(), LittleEndian)
		if got := d.ReadValue(c.tc); !cmp.Equal(got, c.want) || d.Err() != nil {
			t.Errorf("%v %#v read back as %#v (%v), want %#v", c.tc, c.v, got, d.Err(), c.want)
		}
	}
}

// le writes ulongs and raw byte strings little endian, for hand-made input.
func le(parts ...any) []byte {
	e := NewEncoder(LittleEndian)
	for _, p := range parts {
		switch x := p.(type) {
		case int:
			e.WriteULong(uint32(x))
		case uint32:
			e.WriteULong(x)
		case string:
			e.WriteBytes([]byte(x))
		case []byte:
			e.WriteBytes(x)
		}
	}
	return e.Bytes()
}

// TestDecodeErrors pins what malformed CDR reports: what, and where.
func TestDecodeErrors(t *testing.T) {
	// An encapsulation: its length, the byte-order octet and 3 bytes of
	// padding, then parts, aligned from the octet.
	encaps := func(parts ...any) []any { b := le(parts...); return []any{len(b) + 4, "\x01\x00\x00\x00", b} }
	flat := func(parts ...any) []any {
		var out []any
		for _, p := range parts {
			if l, ok := p.([]any); ok {
				out = append(out, l...)
			} else {
				out = append(out, p)
			}
		}
		return out
	}
	for _, c := range []struct {
		name        string
		in          []byte
		err         string
		unsupported bool
	}{
		{"empty", nil, "at offset 0x0: unsigned long needs 4 bytes, 0 left", false},
		{"string without NUL", le(int(TkString), 0, 3, "abc"), "at offset 0xe: string of length 3 does not end in NUL (0x63)", false},
		{"string of length 0", le(int(TkString), 0, 0), "at offset 0x8: string length 0: a CDR string holds at least its terminating NUL", false},
		{"string too long", le(int(TkString), 0, 100, "ab\x00"), "at offset 0x8: string length 100 exceeds the 3 bytes left", false},
		{"boolean 2", le(int(TkBoolean), "\x02"), "at offset 0x4: boolean 0x02 is neither 0 nor 1", false},
		{"union", le(int(TkUnion)), "at offset 0x0: TypeCode kind union (16) is not supported", true},
		{"wstring", le(int(TkWString), 0), "at offset 0x0: TypeCode kind wstring (27) is not supported", true},
		{"unknown kind", le(99), "at offset 0x0: unknown TypeCode kind 99", false},
		{"indirection to nowhere", le(0xffffffff, -8), "at offset 0x4: TypeCode indirection to offset -0x4, where no TypeCode was read before", false},
		{"sequence too long", le(flat(int(TkSequence), encaps(int(TkDouble), 0), 1000, 0)...),
			"at offset 0x14: sequence<double> length 1000 needs at least 8000 bytes, 4 left", false},
		{"array too long", le(flat(int(TkArray), encaps(int(TkLong), 1<<30))...),
			"at offset 0x14: long[1073741824] needs at least 4294967296 bytes, 0 left", false},
		{"sequence of void", le(flat(int(TkSequence), encaps(int(TkVoid), 0))...),
			"at offset 0x10: sequence element is of type void", false},
		{"byte order 7", le(int(TkObjref), 1, "\x07"),
			"at offset 0x8: objref TypeCode parameters: byte-order octet 0x07 is neither 0 nor 1", false},
		{"empty struct", le(flat(int(TkStruct), encaps(2, "a\x00", 2, "S\x00", 0))...),
			"at offset 0x1c: struct S has no members", false},
		{"enum value out of range", le(flat(int(TkEnum), encaps(1, "\x00", 2, "E\x00", 1, 2, "A\x00"), 1)...),
			"at offset 0x28: value 1 of enum E is out of its range [0, 1)", false},
		{"any in any in any ...", []byte(strings.Repeat(string(le(int(TkAny))), 100)),
			"at offset 0x100: TypeCode nested deeper than 64 levels", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewDecoder(c.in, LittleEndian)
			a := d.ReadAny()
			err := d.Err()
			if err == nil || err.Error() != c.err {
				t.Fatalf("read %v, error %v; want %q", a, err, c.err)
			}
			if a != nil || d.Len() != 0 {
				t.Errorf("after the error: %v, %d bytes left", a, d.Len())
			}
			if errors.Is(err, ErrUnsupported) != c.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v", !c.unsupported)
			}
		})
	}
}

// TestIndirection: a recursive struct is written with an indirection to
// itself, and omniORB-style indirections to an earlier TypeCode read.
func TestIndirection(t *testing.T) {
	e := NewEncoder(BigEndian)
	if err := e.WriteTypeCode(tcNode); err != nil {
		t.Fatal(err)
	}
	b := e.Bytes()
	// The sequence's content is the indirection: 0xffffffff, then the
	// offset back to the struct's kind from the offset field itself.
	i := strings.Index(string(b), "\xff\xff\xff\xff")
	if i < 0 {
		t.Fatalf("no indirection in % x", b)
	}
	if off := int32(uint32(b[i+4])<<24 | uint32(b[i+5])<<16 | uint32(b[i+6])<<8 | uint32(b[i+7])); int(off) != -(i + 4) {
		t.Errorf("indirection offset %d at %#x, want %d", off, i+4, -(i + 4))
	}
	d := NewDecoder(b, BigEndian)
	tc := d.ReadTypeCode()
	if d.Err() != nil {
		t.Fatal(d.Err())
	}
	if tc.Members[1].Type.Content != tc {
		t.Errorf("the children's type is not the struct itself: %v", tc.Members[1].Type.Content)
	}
	if tc.String() != "struct Node" || tc.Members[1].Type.String() != "sequence<struct Node>" {
		t.Errorf("described as %v and %v", tc, tc.Members[1].Type)
	}
}

// TestDecodingIsBounded: lengths that the input cannot hold are refused
// before anything is allocated for them.
func TestDecodingIsBounded(t *testing.T) {
	tc := NewTypeCode(TkOctet)
	for range 3 {
		tc = &TypeCode{Kind: TkSequence, Content: tc}
	}
	e := NewEncoder(LittleEndian)
	if err := e.WriteTypeCode(tc); err != nil {
		t.Fatal(err)
	}
	e.WriteULong(3)
	e.WriteULong(0xfffffff0)
	in := e.Bytes()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 100 {
		d := NewDecoder(in, LittleEndian)
		d.ReadAny()
		if d.Err() == nil {
			t.Fatal("no error")
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("100 decodings of %d bytes allocated %d bytes", len(in), n)
	}
}
