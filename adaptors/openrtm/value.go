package openrtm

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/openrtm/corba"
	"github.com/seatml/seat/schema"
)

// dataType is a port's data type, with how eSEAT's conventions read and
// write it as text.
type dataType struct {
	name string // as the file gives it, "TimedString"
	id   string // its repository id, "IDL:RTC/TimedString:1.0"
	tc   *corba.TypeCode
	// form says what a line of text is for this type: the string of a
	// TimedString-like type, the comma-separated elements of a sequence
	// (TimedFloatSeq: "1.0,2.5,3"), a number or boolean (TimedLong), or,
	// for any other type, the whole value as JSON or YAML.
	form textForm
	elem *corba.TypeCode // the data member's type (its elements' for a sequence)
	// timedString: the type is laid out as RTC::TimedString (see
	// timedStringLayout), so its text is written and read directly,
	// without building the value. Most eSEAT ports are TimedStrings.
	timedString bool
}

type textForm int

const (
	formValue  textForm = iota // JSON or YAML of the whole value
	formString                 // the data member is a string
	formSeq                    // the data member is a sequence of basic values or strings
	formScalar                 // the data member is a basic value
)

// resolve follows aliases.
func resolve(tc *corba.TypeCode) *corba.TypeCode {
	for tc != nil && tc.Kind == corba.TkAlias {
		tc = tc.Content
	}
	return tc
}

func basic(k corba.Kind) bool {
	switch k {
	case corba.TkShort, corba.TkLong, corba.TkUShort, corba.TkULong, corba.TkLongLong, corba.TkULongLong,
		corba.TkFloat, corba.TkDouble, corba.TkBoolean, corba.TkOctet, corba.TkChar:
		return true
	}
	return false
}

func newDataType(name string, tc *corba.TypeCode) (*dataType, error) {
	st := resolve(tc)
	if st == nil || st.Kind != corba.TkStruct {
		return nil, fmt.Errorf("%s is not a struct (OpenRTM data types are)", name)
	}
	dt := &dataType{name: name, id: st.ID, tc: st, timedString: timedStringLayout(st)}
	if unsupported := findUnsupported(st, map[*corba.TypeCode]bool{}); unsupported != "" {
		return nil, fmt.Errorf("%s holds a %s, which seat cannot read or write yet", name, unsupported)
	}
	var data *corba.TypeCode
	for _, m := range st.Members {
		if m.Name == "data" {
			data = resolve(m.Type)
		}
	}
	switch {
	case data == nil:
	case data.Kind == corba.TkString:
		dt.form = formString
	case data.Kind == corba.TkSequence && (basic(resolve(data.Content).Kind) || resolve(data.Content).Kind == corba.TkString):
		dt.form, dt.elem = formSeq, resolve(data.Content)
	case basic(data.Kind):
		dt.form, dt.elem = formScalar, data
	}
	return dt, nil
}

// timedStringLayout says whether st is laid out as RTC::TimedString: tm,
// an RTC::Time (unsigned long sec, nsec), then data, an unbounded string.
func timedStringLayout(st *corba.TypeCode) bool {
	if len(st.Members) != 2 || st.Members[0].Name != "tm" || st.Members[1].Name != "data" {
		return false
	}
	tm, data := resolve(st.Members[0].Type), resolve(st.Members[1].Type)
	if data == nil || data.Kind != corba.TkString || data.Bound != 0 || tm == nil || tm.Kind != corba.TkStruct || len(tm.Members) != 2 {
		return false
	}
	for i, name := range []string{"sec", "nsec"} {
		if m := tm.Members[i]; m.Name != name || resolve(m.Type) == nil || resolve(m.Type).Kind != corba.TkULong {
			return false
		}
	}
	return true
}

// findUnsupported names a kind in tc the codec does not handle.
func findUnsupported(tc *corba.TypeCode, seen map[*corba.TypeCode]bool) string {
	tc = resolve(tc)
	if tc == nil || seen[tc] {
		return ""
	}
	seen[tc] = true
	switch tc.Kind {
	case corba.TkWString, corba.TkWChar, corba.TkUnion, corba.TkLongDouble, corba.TkFixed, corba.TkValue:
		return tc.Kind.String()
	case corba.TkStruct:
		for _, m := range tc.Members {
			if s := findUnsupported(m.Type, seen); s != "" {
				return s
			}
		}
	case corba.TkSequence, corba.TkArray:
		return findUnsupported(tc.Content, seen)
	}
	return ""
}

// stamp is RTC::Time now, as eSEAT sets it on every value it writes.
func stamp(now time.Time) map[string]any {
	return map[string]any{"sec": now.Unix(), "nsec": int64(now.Nanosecond())}
}

// fromText makes a value of the type from a line of text, eSEAT's way:
// the string itself for a TimedString, comma-separated elements for a
// sequence ("1.0,2.5,3"), a number for a TimedLong or TimedDouble, and
// JSON or YAML of the whole value (or of its members by name) otherwise.
func (dt *dataType) fromText(text string) (map[string]any, error) {
	switch dt.form {
	case formString:
		return map[string]any{"data": text}, nil
	case formScalar:
		return map[string]any{"data": strings.TrimSpace(text)}, nil
	case formSeq:
		var elems []any
		if strings.TrimSpace(text) != "" {
			for _, s := range strings.Split(text, ",") {
				elems = append(elems, strings.TrimSpace(s))
			}
		}
		return map[string]any{"data": elems}, nil
	}
	v, err := adaptors.ParseText(text)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a %s is written as its members by name ({data: ...}), not %s", dt.name, adaptors.JSON(v))
	}
	return m, nil
}

// fromPlain makes a value the encoder takes from plain values (a Lua
// table, or what fromText made): a struct's members by name, missing
// ones zero, its tm the time now when not given; numbers converted to
// the member's kind when they fit; for a TimedString-like type a string
// alone is its data, for a sequence type a list alone its elements. An
// error names the member.
func (dt *dataType) fromPlain(v any, now time.Time) (any, error) {
	switch x := v.(type) {
	case string:
		if dt.form != formValue {
			m, _ := dt.fromText(x)
			v = m
		}
	case []any:
		if dt.form == formSeq {
			v = map[string]any{"data": x}
		}
	case int64, float64, bool:
		if dt.form == formScalar {
			v = map[string]any{"data": x}
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a %s is a table of its members, not %s", dt.name, describe(v))
	}
	if _, ok := m["tm"]; !ok && hasMember(dt.tc, "tm") {
		m = copyMap(m)
		m["tm"] = stamp(now)
	}
	return convert(dt.tc, m, "")
}

func hasMember(st *corba.TypeCode, name string) bool {
	for _, m := range st.Members {
		if m.Name == name {
			return true
		}
	}
	return false
}

func copyMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}

func describe(v any) string {
	switch x := v.(type) {
	case badNumber:
		return describe(x.v)
	case nil:
		return "nil"
	case string:
		return strconv.Quote(x)
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprint(v)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// convert makes v fit tc, or says which member does not.
func convert(tc *corba.TypeCode, v any, path string) (any, error) {
	tc = resolve(tc)
	fail := func(format string, args ...any) error {
		where := ""
		if path != "" {
			where = path + ": "
		}
		return fmt.Errorf("%s%s", where, fmt.Sprintf(format, args...))
	}
	switch tc.Kind {
	case corba.TkStruct:
		m, ok := v.(map[string]any)
		if v == nil {
			m, ok = map[string]any{}, true
		}
		if !ok {
			return nil, fail("a %s is a table of its members, not %s", tc.Name, describe(v))
		}
		var names []string
		out := make(map[string]any, len(tc.Members))
		for _, mem := range tc.Members {
			names = append(names, mem.Name)
			x, err := convert(mem.Type, m[mem.Name], join(path, mem.Name))
			if err != nil {
				return nil, err
			}
			out[mem.Name] = x
		}
		if len(m) > 0 {
			var unknown []string
			for k := range m {
				if _, ok := out[k]; !ok {
					unknown = append(unknown, k)
				}
			}
			if len(unknown) > 0 {
				sort.Strings(unknown)
				return nil, fail("a %s has no member %q%s", tc.Name, unknown[0], schema.DidYouMean(unknown[0], names, "%q"))
			}
		}
		return out, nil
	case corba.TkSequence, corba.TkArray:
		var list []any
		switch x := v.(type) {
		case nil:
		case []any:
			list = x
		case map[string]any:
			if len(x) > 0 {
				return nil, fail("a sequence is a list, not a table with keys")
			}
		default:
			return nil, fail("a sequence is a list, not %s", describe(v))
		}
		if tc.Kind == corba.TkArray {
			for uint32(len(list)) < tc.Length {
				list = append(list, nil)
			}
			if uint32(len(list)) > tc.Length {
				return nil, fail("an array of %d cannot hold %d elements", tc.Length, len(list))
			}
		} else if tc.Bound > 0 && uint32(len(list)) > tc.Bound {
			return nil, fail("a sequence of at most %d cannot hold %d elements", tc.Bound, len(list))
		}
		out := make([]any, len(list))
		for i, e := range list {
			x, err := convert(tc.Content, e, fmt.Sprintf("%s[%d]", path, i+1))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case corba.TkString:
		switch x := v.(type) {
		case nil:
			return "", nil
		case string:
			return x, nil
		case int64, float64, bool:
			return fmt.Sprint(x), nil
		}
		return nil, fail("a string cannot hold %s", describe(v))
	case corba.TkBoolean:
		switch x := v.(type) {
		case nil:
			return false, nil
		case bool:
			return x, nil
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return b, nil
			}
		case int64:
			return x != 0, nil
		}
		return nil, fail("a boolean cannot hold %s", describe(v))
	case corba.TkFloat, corba.TkDouble:
		f, ok := number(v)
		if !ok {
			return nil, fail("a %s cannot hold %s", tc.Kind, describe(v))
		}
		if tc.Kind == corba.TkFloat && !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
			return nil, fail("%s is out of the range of a float", describe(v))
		}
		return f, nil
	case corba.TkEnum:
		switch x := v.(type) {
		case nil:
			return uint32(0), nil
		case string:
			for _, e := range tc.Enumerators {
				if e == x {
					return x, nil
				}
			}
			return nil, fail("%q is not one of %s%s", x, strings.Join(tc.Enumerators, ", "), schema.DidYouMean(x, tc.Enumerators, "%q"))
		case int64:
			if x >= 0 && x < int64(len(tc.Enumerators)) {
				return uint32(x), nil
			}
		}
		return nil, fail("%s cannot hold %s", tc.Name, describe(v))
	case corba.TkChar:
		if s, ok := v.(string); ok && len(s) == 1 {
			return s[0], nil
		}
		fallthrough
	default:
		if !basic(tc.Kind) {
			return nil, fail("a %s cannot be written", tc.Kind)
		}
		n, err := integer(tc.Kind, v)
		if err != nil {
			return nil, fail("%s", err)
		}
		return n, nil
	}
}

// integer reads a whole number for an integer kind exactly: an int64 or
// uint64 as it is, a text by strconv (not through a float), a float
// only when it is whole and exact (at most 2^53). Out of the kind's range
// is an error.
func integer(k corba.Kind, v any) (any, error) {
	unsigned := k == corba.TkOctet || k == corba.TkChar || k == corba.TkUShort || k == corba.TkULong || k == corba.TkULongLong
	var i int64
	var u uint64
	neg := false
	switch x := v.(type) {
	case nil:
	case bool:
		if x {
			i, u = 1, 1
		}
	case int64:
		i, u, neg = x, uint64(x), x < 0
	case uint64:
		if x > math.MaxInt64 && !unsigned {
			return nil, fmt.Errorf("%d is out of the range of a %s", x, k)
		}
		i, u = int64(x), x
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return nil, fmt.Errorf("a %s cannot hold %s (a whole number is needed%s)", k, describe(v), map[bool]string{true: "; above 2^53 give it as text", false: ""}[math.Abs(x) > 1<<53 && x == math.Trunc(x)])
		}
		i, u, neg = int64(x), uint64(int64(x)), x < 0
	case string:
		t := strings.TrimSpace(x)
		if unsigned && !strings.HasPrefix(t, "-") {
			n, err := strconv.ParseUint(t, 0, 64)
			if err != nil {
				return integer(k, floatText(t, v))
			}
			i, u = int64(n), n
			if n > math.MaxInt64 {
				i = -1 // only a unsigned long long holds it; checked below
			}
		} else {
			n, err := strconv.ParseInt(t, 0, 64)
			if err != nil {
				return integer(k, floatText(t, v))
			}
			i, u, neg = n, uint64(n), n < 0
		}
	default:
		return nil, fmt.Errorf("a %s cannot hold %s", k, describe(v))
	}
	lo, hi := intRange(k)
	switch {
	case k == corba.TkULongLong:
		if neg {
			return nil, fmt.Errorf("%s is out of the range of a %s", describe(v), k)
		}
		return u, nil
	case unsigned && (neg || u > uint64(hi)):
		return nil, fmt.Errorf("%s is out of the range of a %s", describe(v), k)
	case !unsigned && (i < int64(lo) || (k != corba.TkLongLong && i > int64(hi)) || (k == corba.TkLongLong && !neg && u > math.MaxInt64)):
		return nil, fmt.Errorf("%s is out of the range of a %s", describe(v), k)
	}
	return i, nil
}

// floatText reads a text that is not an integer as a float ("1e3"), for
// integer to judge; what is not a number stays the text, refused there.
func floatText(t string, v any) any {
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return f
	}
	return badNumber{v}
}

// badNumber is a text that is no number.
type badNumber struct{ v any }

// number reads a number from a plain value: nil is 0, a string is
// parsed.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case nil:
		return 0, true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

func intRange(k corba.Kind) (float64, float64) {
	switch k {
	case corba.TkOctet, corba.TkChar:
		return 0, math.MaxUint8
	case corba.TkShort:
		return math.MinInt16, math.MaxInt16
	case corba.TkUShort:
		return 0, math.MaxUint16
	case corba.TkLong:
		return math.MinInt32, math.MaxInt32
	case corba.TkULong:
		return 0, math.MaxUint32
	case corba.TkLongLong:
		return math.MinInt64, math.MaxInt64
	}
	return 0, math.MaxUint64
}

// toPlainTC turns a decoded value of type tc into plain values
// (Event.Data): a struct is a map by member name, an enum its
// enumerator's name, integers int64 (an unsigned long long above
// int64's range float64), floats float64, a char a one-byte string, a
// char sequence a string (as omniORBpy gives it to eSEAT), an octet
// sequence a list of numbers.
func toPlainTC(tc *corba.TypeCode, v any) any {
	tc = resolve(tc)
	if tc == nil {
		return toPlain(v)
	}
	switch tc.Kind {
	case corba.TkChar:
		if b, ok := v.(byte); ok {
			return string([]byte{b})
		}
	case corba.TkStruct:
		if st, ok := v.(corba.Struct); ok && len(st) == len(tc.Members) {
			m := make(map[string]any, len(st))
			for i, f := range st {
				m[f.Name] = toPlainTC(tc.Members[i].Type, f.Value)
			}
			return m
		}
	case corba.TkSequence, corba.TkArray:
		el := resolve(tc.Content)
		if b, ok := v.([]byte); ok && el != nil && el.Kind == corba.TkChar {
			return string(b)
		}
		if l, ok := v.([]any); ok {
			out := make([]any, len(l))
			for i, e := range l {
				out[i] = toPlainTC(el, e)
			}
			return out
		}
	}
	return toPlain(v)
}

// toPlain turns a decoded value into plain values by its Go type alone
// (toPlainTC's fallback).
func toPlain(v any) any {
	switch x := v.(type) {
	case corba.Struct:
		m := make(map[string]any, len(x))
		for _, f := range x {
			m[f.Name] = toPlain(f.Value)
		}
		return m
	case corba.Enum:
		return x.Name
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toPlain(e)
		}
		return out
	case []byte:
		out := make([]any, len(x))
		for i, b := range x {
			out[i] = int64(b)
		}
		return out
	case int16:
		return int64(x)
	case uint16:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return float64(x)
		}
		return int64(x)
	case float32:
		// The shortest decimal that reads back as the float32, as
		// the ROS adaptor shows a float32.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return f
	case byte:
		return int64(x)
	case *corba.IOR:
		return x.String()
	case *corba.Any:
		if x == nil {
			return nil
		}
		return toPlain(x.Value)
	}
	return v
}

// text is how a received value reaches keyed rules: a TimedString's
// string; for other types nothing (data rules see the value).
func (dt *dataType) text(v any) (string, bool) {
	if dt.form != formString {
		return "", false
	}
	s, ok := v.(corba.Struct)
	if !ok {
		return "", false
	}
	d, _ := s.Get("data")
	str, ok := d.(string)
	return str, ok
}
