package corba

import (
	"fmt"
	"strconv"
)

// Kind is a TypeCode's kind (CORBA::TCKind), with its wire value.
type Kind uint32

// The TypeCode kinds. This package encodes and decodes the kinds OpenRTM
// uses (see the package documentation); the others are named in errors.
const (
	TkNull Kind = iota
	TkVoid
	TkShort
	TkLong
	TkUShort
	TkULong
	TkFloat
	TkDouble
	TkBoolean
	TkChar
	TkOctet
	TkAny
	TkTypeCode
	TkPrincipal
	TkObjref
	TkStruct
	TkUnion
	TkEnum
	TkString
	TkSequence
	TkArray
	TkAlias
	TkExcept
	TkLongLong
	TkULongLong
	TkLongDouble
	TkWChar
	TkWString
	TkFixed
	TkValue
	TkValueBox
	TkNative
	TkAbstractInterface
	TkLocalInterface
)

var kindNames = [...]string{"null", "void", "short", "long", "unsigned short", "unsigned long",
	"float", "double", "boolean", "char", "octet", "any", "TypeCode", "Principal", "objref",
	"struct", "union", "enum", "string", "sequence", "array", "alias", "exception",
	"long long", "unsigned long long", "long double", "wchar", "wstring", "fixed", "valuetype",
	"valuebox", "native", "abstract interface", "local interface"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind " + strconv.FormatUint(uint64(k), 10)
}

// indirection is the kind value that introduces a TypeCode indirection.
const indirection = 0xffffffff

// TypeCode describes the type of a value, as an Any carries it.
type TypeCode struct {
	Kind Kind
	// ID and Name: the repository id and simple name of an objref,
	// struct, enum or alias.
	ID, Name string
	// Members: a struct's members, in order.
	Members []Member
	// Enumerators: an enum's names, in order of their values.
	Enumerators []string
	// Bound: the maximum length of a string or sequence, 0 for none.
	Bound uint32
	// Length: an array's length.
	Length uint32
	// Content: the element type of a sequence or array, the aliased type.
	Content *TypeCode
}

// Member is a struct member.
type Member struct {
	Name string
	Type *TypeCode
}

// NewTypeCode returns the TypeCode of a kind without parameters (the
// basic kinds, any, TypeCode, an unbounded string, null and void).
func NewTypeCode(k Kind) *TypeCode { return &TypeCode{Kind: k} }

// String describes tc in IDL's terms: "long", "string<8>",
// "sequence<double>", "struct TimedLong", "objref InPortCdr".
func (tc *TypeCode) String() string {
	if tc == nil {
		return "<nil TypeCode>"
	}
	switch tc.Kind {
	case TkString:
		if tc.Bound > 0 {
			return fmt.Sprintf("string<%d>", tc.Bound)
		}
	case TkSequence:
		if tc.Bound > 0 {
			return fmt.Sprintf("sequence<%v, %d>", tc.Content, tc.Bound)
		}
		return fmt.Sprintf("sequence<%v>", tc.Content)
	case TkArray:
		return fmt.Sprintf("%v[%d]", tc.Content, tc.Length)
	case TkObjref, TkStruct, TkEnum, TkAlias:
		name := tc.Name
		if name == "" {
			name = tc.ID
		}
		return tc.Kind.String() + " " + name
	}
	return tc.Kind.String()
}

// complexKind says whether a kind's parameters are in an encapsulation
// (and an indirection may point at it).
func complexKind(k Kind) bool {
	switch k {
	case TkObjref, TkStruct, TkEnum, TkSequence, TkArray, TkAlias:
		return true
	}
	return false
}

// ReadTypeCode reads a TypeCode, following indirections to TypeCodes read
// before by this Decoder (or the one whose encapsulation it reads).
func (d *Decoder) ReadTypeCode() *TypeCode {
	if !d.enter("TypeCode") {
		return nil
	}
	defer d.leave()
	d.Align(4)
	at := d.pos
	k := Kind(d.ReadULong())
	if d.st.err != nil {
		return nil
	}
	switch k {
	case indirection:
		rel := d.pos
		target := d.off + rel + int(d.ReadLong())
		if d.st.err != nil {
			return nil
		}
		tc, ok := d.st.tcs[target]
		if !ok {
			d.failAt(rel, false, "TypeCode indirection to offset %#x, where no TypeCode was read before", target)
			return nil
		}
		return tc
	case TkNull, TkVoid, TkShort, TkLong, TkUShort, TkULong, TkFloat, TkDouble, TkBoolean,
		TkChar, TkOctet, TkAny, TkTypeCode, TkLongLong, TkULongLong:
		return &TypeCode{Kind: k}
	case TkString:
		return &TypeCode{Kind: k, Bound: d.ReadULong()}
	}
	if k > TkLocalInterface {
		d.failAt(at, false, "unknown TypeCode kind %d", uint32(k))
		return nil
	}
	if !complexKind(k) {
		d.failAt(at, true, "TypeCode kind %v (%d) is not supported", k, uint32(k))
		return nil
	}
	tc := &TypeCode{Kind: k}
	if d.st.tcs == nil {
		d.st.tcs = make(map[int]*TypeCode)
	}
	d.st.tcs[d.off+at] = tc
	p := d.ReadEncapsulation(k.String() + " TypeCode parameters")
	switch k {
	case TkObjref:
		tc.ID, tc.Name = p.ReadString("repository id"), p.ReadString("name")
	case TkStruct:
		tc.ID, tc.Name = p.ReadString("repository id"), p.ReadString("name")
		// A member takes at least 9 bytes: a name of length 1 and a kind.
		p.Align(4)
		at := p.pos
		n := p.ReadLength("struct "+tc.Name+" member list", 9)
		if n == 0 {
			p.failAt(at, false, "struct %s has no members", tc.Name)
		}
		for i := 0; i < n && p.st.err == nil; i++ {
			m := Member{Name: p.ReadString("member name")}
			m.Type = p.ReadTypeCode()
			p.checkContent(m.Type, "member "+m.Name+" of struct "+tc.Name)
			tc.Members = append(tc.Members, m)
		}
	case TkEnum:
		tc.ID, tc.Name = p.ReadString("repository id"), p.ReadString("name")
		p.Align(4)
		at := p.pos
		n := p.ReadLength("enum "+tc.Name+" enumerator list", 5)
		if n == 0 {
			p.failAt(at, false, "enum %s has no enumerators", tc.Name)
		}
		for i := 0; i < n && p.st.err == nil; i++ {
			tc.Enumerators = append(tc.Enumerators, p.ReadString("enumerator"))
		}
	case TkSequence, TkArray:
		tc.Content = p.ReadTypeCode()
		p.checkContent(tc.Content, k.String()+" element")
		if n := p.ReadULong(); k == TkSequence {
			tc.Bound = n
		} else if tc.Length = n; n == 0 && p.st.err == nil {
			p.Failf("array of length 0")
		}
	case TkAlias:
		tc.ID, tc.Name = p.ReadString("repository id"), p.ReadString("name")
		tc.Content = p.ReadTypeCode()
		p.checkContent(tc.Content, "alias "+tc.Name)
	}
	if d.st.err != nil {
		return nil
	}
	return tc
}

// checkContent refuses null and void where a type holds a value: a struct
// member, an element, an aliased type. (IDL has no such types, and they
// would let a short input describe unboundedly many values.)
func (d *Decoder) checkContent(tc *TypeCode, what string) {
	if tc != nil && (tc.Kind == TkNull || tc.Kind == TkVoid) {
		d.Failf("%s is of type %v", what, tc.Kind)
	}
}

// WriteTypeCode writes tc. A TypeCode that contains itself (a recursive
// struct) is written with an indirection to its enclosing occurrence.
func (e *Encoder) WriteTypeCode(tc *TypeCode) error {
	if tc == nil {
		return fmt.Errorf("nil TypeCode")
	}
	e.Align(4)
	if at, ok := e.tcOpen[tc]; ok {
		e.WriteULong(indirection)
		e.WriteLong(int32(at - len(e.buf)))
		return nil
	}
	switch tc.Kind {
	case TkNull, TkVoid, TkShort, TkLong, TkUShort, TkULong, TkFloat, TkDouble, TkBoolean,
		TkChar, TkOctet, TkAny, TkTypeCode, TkLongLong, TkULongLong:
		e.WriteULong(uint32(tc.Kind))
		return nil
	case TkString:
		e.WriteULong(uint32(tc.Kind))
		e.WriteULong(tc.Bound)
		return nil
	}
	if !complexKind(tc.Kind) {
		return fmt.Errorf("TypeCode kind %v: %w", tc.Kind, ErrUnsupported)
	}
	if e.tcOpen == nil {
		e.tcOpen = make(map[*TypeCode]int)
	}
	e.tcOpen[tc] = len(e.buf)
	defer delete(e.tcOpen, tc)
	e.WriteULong(uint32(tc.Kind))
	return e.WriteEncapsulation(func(e *Encoder) error {
		switch tc.Kind {
		case TkObjref:
			e.WriteString(tc.ID)
			e.WriteString(tc.Name)
		case TkStruct:
			e.WriteString(tc.ID)
			e.WriteString(tc.Name)
			e.WriteULong(uint32(len(tc.Members)))
			for _, m := range tc.Members {
				e.WriteString(m.Name)
				if err := e.WriteTypeCode(m.Type); err != nil {
					return fmt.Errorf("struct %s member %s: %w", tc.Name, m.Name, err)
				}
			}
		case TkEnum:
			e.WriteString(tc.ID)
			e.WriteString(tc.Name)
			e.WriteULong(uint32(len(tc.Enumerators)))
			for _, s := range tc.Enumerators {
				e.WriteString(s)
			}
		case TkSequence, TkArray:
			if err := e.WriteTypeCode(tc.Content); err != nil {
				return fmt.Errorf("%v element: %w", tc.Kind, err)
			}
			if tc.Kind == TkSequence {
				e.WriteULong(tc.Bound)
			} else {
				e.WriteULong(tc.Length)
			}
		case TkAlias:
			e.WriteString(tc.ID)
			e.WriteString(tc.Name)
			if err := e.WriteTypeCode(tc.Content); err != nil {
				return fmt.Errorf("alias %s: %w", tc.Name, err)
			}
		}
		return nil
	})
}

// minSize is a lower bound of the bytes a value of tc takes (alignment
// aside), to check a sequence's or array's length before allocating for
// it. It saturates at maxInt32; a type that contains itself other than
// through a sequence can hold no finite value and gets maxInt32.
func minSize(tc *TypeCode, open map[*TypeCode]bool) int64 {
	const max = 1<<31 - 1
	if tc == nil {
		return max
	}
	switch tc.Kind {
	case TkNull, TkVoid:
		return 0
	case TkOctet, TkBoolean, TkChar:
		return 1
	case TkShort, TkUShort:
		return 2
	case TkLong, TkULong, TkFloat, TkEnum, TkSequence, TkAny, TkTypeCode:
		return 4
	case TkString:
		return 5
	case TkLongLong, TkULongLong, TkDouble:
		return 8
	case TkObjref:
		return 9 // an empty repository id and no profiles: a nil reference
	}
	if open[tc] {
		return max
	}
	if open == nil {
		open = make(map[*TypeCode]bool)
	}
	open[tc] = true
	defer delete(open, tc)
	var n int64
	switch tc.Kind {
	case TkStruct:
		for _, m := range tc.Members {
			n += minSize(m.Type, open)
			if n > max {
				return max
			}
		}
	case TkAlias:
		n = minSize(tc.Content, open)
	case TkArray:
		m := minSize(tc.Content, open)
		if m > 0 && int64(tc.Length) > max/m {
			return max
		}
		n = int64(tc.Length) * m
	default:
		return max
	}
	return n
}
