package corba

import (
	"fmt"
	"math"
	"reflect"
)

// Any is a value with its TypeCode, as CORBA's any carries it.
//
// Values are plain Go values, by kind: null and void nil; boolean bool;
// octet and char byte; short int16; unsigned short uint16; long int32;
// unsigned long uint32; long long int64; unsigned long long uint64; float
// float32; double float64; string string (its bytes as they came); enum
// Enum; struct Struct; sequence and array []any, or []byte when the
// elements are octets or chars; alias the aliased type's value; objref
// *IOR; any *Any; TypeCode *TypeCode.
//
// Writing takes these and also, for the integer kinds, any Go integer
// within range; for float and double, float32 or float64; for a struct, a
// map[string]any by member name; for an enum, its name (string) or value
// (uint32); for a sequence or array, any Go slice or array.
type Any struct {
	Type  *TypeCode
	Value any
}

// Struct is the value of a struct: its members in order.
type Struct []Field

// Field is one member of a Struct value.
type Field struct {
	Name  string
	Value any
}

// Get returns the value of the member named name, and whether there is one.
func (s Struct) Get(name string) (any, bool) {
	for _, f := range s {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}

// Enum is the value of an enum: its value and its enumerator's name.
type Enum struct {
	Value uint32
	Name  string
}

// ReadAny reads an any: a TypeCode, then a value of that type.
func (d *Decoder) ReadAny() *Any {
	tc := d.ReadTypeCode()
	if tc == nil {
		return nil
	}
	v := d.ReadValue(tc)
	if d.st.err != nil {
		return nil
	}
	return &Any{Type: tc, Value: v}
}

// ReadValue reads a value of type tc (see Any for the Go values).
func (d *Decoder) ReadValue(tc *TypeCode) any {
	if tc == nil {
		d.Failf("value of a nil TypeCode")
		return nil
	}
	if !d.enter("value") {
		return nil
	}
	defer d.leave()
	switch tc.Kind {
	case TkNull, TkVoid:
		return nil
	case TkBoolean:
		return d.ReadBoolean()
	case TkOctet:
		return d.ReadOctet()
	case TkChar:
		return d.ReadChar()
	case TkShort:
		return d.ReadShort()
	case TkUShort:
		return d.ReadUShort()
	case TkLong:
		return d.ReadLong()
	case TkULong:
		return d.ReadULong()
	case TkLongLong:
		return d.ReadLongLong()
	case TkULongLong:
		return d.ReadULongLong()
	case TkFloat:
		return d.ReadFloat()
	case TkDouble:
		return d.ReadDouble()
	case TkString:
		d.Align(4)
		at := d.pos
		s := d.ReadString("string")
		if tc.Bound > 0 && uint32(len(s)) > tc.Bound {
			d.failAt(at, false, "string of %d bytes exceeds its bound %d", len(s), tc.Bound)
		}
		return s
	case TkAny:
		return d.ReadAny()
	case TkTypeCode:
		return d.ReadTypeCode()
	case TkObjref:
		return d.ReadIOR()
	case TkEnum:
		d.Align(4)
		at := d.pos
		n := d.ReadULong()
		if d.st.err == nil && n >= uint32(len(tc.Enumerators)) {
			d.failAt(at, false, "value %d of enum %s is out of its range [0, %d)", n, tc.Name, len(tc.Enumerators))
		}
		if d.st.err != nil {
			return nil
		}
		return Enum{Value: n, Name: tc.Enumerators[n]}
	case TkAlias:
		return d.ReadValue(tc.Content)
	case TkStruct:
		s := make(Struct, 0, len(tc.Members))
		for _, m := range tc.Members {
			if d.st.err != nil {
				return nil
			}
			s = append(s, Field{Name: m.Name, Value: d.ReadValue(m.Type)})
		}
		return s
	case TkSequence:
		d.Align(4)
		at := d.pos
		n := d.ReadLength(tc.String(), int(minSize(tc.Content, nil)))
		if tc.Bound > 0 && uint32(n) > tc.Bound {
			d.failAt(at, false, "%v of length %d exceeds its bound", tc, n)
		}
		return d.readElements(tc.Content, n)
	case TkArray:
		if m := minSize(tc.Content, nil); int64(tc.Length)*m > int64(d.Len()) {
			d.Failf("%v needs at least %d bytes, %d left", tc, int64(tc.Length)*m, d.Len())
		}
		return d.readElements(tc.Content, int(tc.Length))
	}
	d.unsupportedf("a value of TypeCode kind %v is not supported", tc.Kind)
	return nil
}

// readElements reads n elements of a sequence or array, whose length was
// checked against the bytes left.
func (d *Decoder) readElements(tc *TypeCode, n int) any {
	if d.st.err != nil {
		return nil
	}
	if k := resolve(tc).Kind; k == TkOctet || k == TkChar {
		return d.ReadBytes(n, tc.String()+" elements")
	}
	vs := make([]any, 0, n)
	for i := 0; i < n && d.st.err == nil; i++ {
		vs = append(vs, d.ReadValue(tc))
	}
	if d.st.err != nil {
		return nil
	}
	return vs
}

// resolve returns the type an alias stands for (through aliases of aliases).
func resolve(tc *TypeCode) *TypeCode {
	for i := 0; tc != nil && tc.Kind == TkAlias && i < maxDepth; i++ {
		tc = tc.Content
	}
	return tc
}

// WriteAny writes an any: a's TypeCode, then its value.
func (e *Encoder) WriteAny(a *Any) error {
	if a == nil {
		return fmt.Errorf("nil any")
	}
	if err := e.WriteTypeCode(a.Type); err != nil {
		return err
	}
	return e.WriteValue(a.Type, a.Value)
}

// WriteValue writes v as a value of type tc (see Any for the Go values it
// takes). The error says which member or element does not fit, and why.
func (e *Encoder) WriteValue(tc *TypeCode, v any) error {
	return e.writeValue(tc, v, 0)
}

func (e *Encoder) writeValue(tc *TypeCode, v any, depth int) error {
	if tc == nil {
		return fmt.Errorf("nil TypeCode")
	}
	if depth > maxDepth {
		return fmt.Errorf("value nested deeper than %d levels", maxDepth)
	}
	mismatch := func() error { return fmt.Errorf("a %v cannot hold %T", tc, v) }
	switch tc.Kind {
	case TkNull, TkVoid:
		if v != nil {
			return mismatch()
		}
	case TkBoolean:
		b, ok := v.(bool)
		if !ok {
			return mismatch()
		}
		e.WriteBoolean(b)
	case TkOctet, TkChar, TkShort, TkUShort, TkLong, TkULong, TkLongLong, TkULongLong:
		return e.writeInteger(tc, v)
	case TkFloat:
		f, ok := float(v)
		if !ok {
			return mismatch()
		}
		e.WriteFloat(float32(f))
	case TkDouble:
		f, ok := float(v)
		if !ok {
			return mismatch()
		}
		e.WriteDouble(f)
	case TkString:
		s, ok := v.(string)
		if !ok {
			return mismatch()
		}
		if tc.Bound > 0 && uint32(len(s)) > tc.Bound {
			return fmt.Errorf("string of %d bytes exceeds its bound %d", len(s), tc.Bound)
		}
		e.WriteString(s)
	case TkAny:
		a, ok := v.(*Any)
		if !ok || a == nil {
			return mismatch()
		}
		if err := e.WriteTypeCode(a.Type); err != nil {
			return err
		}
		return e.writeValue(a.Type, a.Value, depth+1)
	case TkTypeCode:
		t, ok := v.(*TypeCode)
		if !ok || t == nil {
			return mismatch()
		}
		return e.WriteTypeCode(t)
	case TkObjref:
		ior, ok := v.(*IOR)
		if !ok {
			return mismatch()
		}
		e.WriteIOR(ior)
	case TkEnum:
		return e.writeEnum(tc, v)
	case TkAlias:
		return e.writeValue(tc.Content, v, depth+1)
	case TkStruct:
		return e.writeStruct(tc, v, depth)
	case TkSequence, TkArray:
		return e.writeElements(tc, v, depth)
	default:
		return fmt.Errorf("a value of TypeCode kind %v: %w", tc.Kind, ErrUnsupported)
	}
	return nil
}

func (e *Encoder) writeInteger(tc *TypeCode, v any) error {
	var lo, hi int64
	var uhi uint64
	switch tc.Kind {
	case TkOctet, TkChar:
		uhi = math.MaxUint8
	case TkShort:
		lo, hi = math.MinInt16, math.MaxInt16
	case TkUShort:
		uhi = math.MaxUint16
	case TkLong:
		lo, hi = math.MinInt32, math.MaxInt32
	case TkULong:
		uhi = math.MaxUint32
	case TkLongLong:
		lo, hi = math.MinInt64, math.MaxInt64
	case TkULongLong:
		uhi = math.MaxUint64
	}
	rv := reflect.ValueOf(v)
	var u uint64
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := rv.Int()
		if uhi > 0 && i < 0 || uhi == 0 && (i < lo || i > hi) || uhi > 0 && uint64(i) > uhi {
			return fmt.Errorf("%d is out of the range of a %v", i, tc)
		}
		u = uint64(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u = rv.Uint()
		if uhi > 0 && u > uhi || uhi == 0 && u > uint64(hi) {
			return fmt.Errorf("%d is out of the range of a %v", u, tc)
		}
	default:
		return fmt.Errorf("a %v cannot hold %T", tc, v)
	}
	switch tc.Kind {
	case TkOctet, TkChar:
		e.WriteOctet(byte(u))
	case TkShort, TkUShort:
		e.WriteUShort(uint16(u))
	case TkLong, TkULong:
		e.WriteULong(uint32(u))
	default:
		e.WriteULongLong(u)
	}
	return nil
}

func float(v any) (float64, bool) {
	switch f := v.(type) {
	case float32:
		return float64(f), true
	case float64:
		return f, true
	}
	return 0, false
}

func (e *Encoder) writeEnum(tc *TypeCode, v any) error {
	var n uint32
	switch x := v.(type) {
	case Enum:
		n = x.Value
	case uint32:
		n = x
	case string:
		n = uint32(len(tc.Enumerators))
		for i, s := range tc.Enumerators {
			if s == x {
				n = uint32(i)
			}
		}
		if n == uint32(len(tc.Enumerators)) {
			return fmt.Errorf("%q is not an enumerator of %v", x, tc)
		}
	default:
		return fmt.Errorf("a %v cannot hold %T", tc, v)
	}
	if n >= uint32(len(tc.Enumerators)) {
		return fmt.Errorf("value %d is out of the range of %v", n, tc)
	}
	e.WriteULong(n)
	return nil
}

func (e *Encoder) writeStruct(tc *TypeCode, v any, depth int) error {
	switch s := v.(type) {
	case Struct:
		if len(s) != len(tc.Members) {
			return fmt.Errorf("%v has %d members, the value %d", tc, len(tc.Members), len(s))
		}
		for i, m := range tc.Members {
			if s[i].Name != m.Name {
				return fmt.Errorf("%v: member %d is %s, not %s", tc, i, m.Name, s[i].Name)
			}
			if err := e.writeValue(m.Type, s[i].Value, depth+1); err != nil {
				return fmt.Errorf("%v member %s: %w", tc, m.Name, err)
			}
		}
	case map[string]any:
		if len(s) != len(tc.Members) {
			return fmt.Errorf("%v has %d members, the value %d", tc, len(tc.Members), len(s))
		}
		for _, m := range tc.Members {
			x, ok := s[m.Name]
			if !ok {
				return fmt.Errorf("%v: no value for member %s", tc, m.Name)
			}
			if err := e.writeValue(m.Type, x, depth+1); err != nil {
				return fmt.Errorf("%v member %s: %w", tc, m.Name, err)
			}
		}
	default:
		return fmt.Errorf("a %v cannot hold %T", tc, v)
	}
	return nil
}

func (e *Encoder) writeElements(tc *TypeCode, v any, depth int) error {
	rv := reflect.ValueOf(v)
	if k := rv.Kind(); k != reflect.Slice && k != reflect.Array {
		return fmt.Errorf("a %v cannot hold %T", tc, v)
	}
	n := rv.Len()
	switch {
	case tc.Kind == TkArray && uint32(n) != tc.Length:
		return fmt.Errorf("a %v cannot hold %d elements", tc, n)
	case tc.Kind == TkSequence && tc.Bound > 0 && uint32(n) > tc.Bound:
		return fmt.Errorf("a %v cannot hold %d elements", tc, n)
	case uint64(n) > math.MaxUint32:
		return fmt.Errorf("a %v cannot hold %d elements", tc, n)
	}
	if tc.Kind == TkSequence {
		e.WriteULong(uint32(n))
	}
	if b, ok := v.([]byte); ok {
		if k := resolve(tc.Content).Kind; k == TkOctet || k == TkChar {
			e.WriteBytes(b)
			return nil
		}
	}
	for i := 0; i < n; i++ {
		if err := e.writeValue(tc.Content, rv.Index(i).Interface(), depth+1); err != nil {
			return fmt.Errorf("%v element %d: %w", tc, i, err)
		}
	}
	return nil
}
