package rosmsg

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/seatml/seat/schema"
)

// Messages cross into scripts as plain values: map[string]any keyed by
// the ROS field names, []any for arrays, int64 for integers, float64 for
// floats, string, bool, and time and duration as seconds (float64). The
// runtime turns them into Lua tables (arrays as 1-based sequences).

var (
	timeType     = reflect.TypeOf(time.Time{})
	durationType = reflect.TypeOf(time.Duration(0))
)

// Value converts a message of a built type (the struct, or a pointer to
// it) to plain values.
func Value(m any) map[string]any {
	v := reflect.Indirect(reflect.ValueOf(m))
	return value(v).(map[string]any)
}

func value(v reflect.Value) any {
	switch v.Type() {
	case timeType:
		t := v.Interface().(time.Time)
		if t.IsZero() {
			return float64(0)
		}
		return float64(t.UnixNano()) / 1e9
	case durationType:
		return time.Duration(v.Int()).Seconds()
	}
	switch v.Kind() {
	case reflect.Struct:
		m := make(map[string]any, v.NumField())
		for i := range v.NumField() {
			if name := v.Type().Field(i).Tag.Get("rosname"); name != "" {
				m[name] = value(v.Field(i))
			}
		}
		return m
	case reflect.Slice, reflect.Array:
		l := make([]any, v.Len())
		for i := range l {
			l[i] = value(v.Index(i))
		}
		return l
	case reflect.Bool:
		return v.Bool()
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := v.Uint(); u > math.MaxInt64 {
			return float64(u) // beyond int64: a float, not a negative number
		}
		return int64(v.Uint())
	case reflect.Float32:
		// The float64 a float32 was written as: 0.1, not 0.10000000149…
		f, _ := strconv.ParseFloat(strconv.FormatFloat(v.Float(), 'g', -1, 32), 64)
		return f
	case reflect.Float64:
		return v.Float()
	case reflect.String:
		return v.String()
	}
	return nil
}

// FieldError is a value that does not fit its field; Path names the
// field (linear.x, points[2].positions).
type FieldError struct {
	Type string // the message type filled
	Path string
	Msg  string
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Type + ": " + e.Msg
	}
	return e.Type + " " + e.Path + ": " + e.Msg
}

// Fill sets a message of a built type (a pointer to it) from plain
// values, as rostopic pub does: a map fills fields by name, a list fills
// them in order (eSEAT's [[2.0,0,0],[0,0,1.8]] for a Twist). A field not
// given keeps its zero value. Time and duration take seconds, or
// {secs=…, nsecs=…}. A value that does not fit is an error naming the
// field, and the message is then left untouched: never half filled.
func Fill(m any, data any) error {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("rosmsg.Fill: %T is not a pointer to a message", m)
	}
	fresh := reflect.New(v.Elem().Type()).Elem()
	f := filler{typ: typeName(v.Elem().Type())}
	if err := f.fill(fresh, data, ""); err != nil {
		return err
	}
	v.Elem().Set(fresh)
	return nil
}

// typeName is a built type's "pkg/Type".
func typeName(t reflect.Type) string {
	p, _ := t.FieldByName("Package")
	n, _ := t.FieldByName("Name")
	return p.Tag.Get("ros") + "/" + n.Tag.Get("ros")
}

type filler struct{ typ string }

func (f *filler) errorf(path, format string, args ...any) error {
	return &FieldError{Type: f.typ, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// fields lists a message struct's fields with their ROS names.
func fields(t reflect.Type) (idx []int, names []string) {
	for i := range t.NumField() {
		if n := t.Field(i).Tag.Get("rosname"); n != "" {
			idx, names = append(idx, i), append(names, n)
		}
	}
	return idx, names
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (f *filler) fill(v reflect.Value, data any, path string) error {
	if data == nil {
		return nil // keeps its zero value
	}
	switch v.Type() {
	case timeType, durationType:
		secs, err := f.seconds(data, path)
		if err != nil {
			return err
		}
		if v.Type() == timeType {
			if secs != 0 {
				v.Set(reflect.ValueOf(time.Unix(0, 0).Add(secs)))
			}
		} else {
			v.SetInt(int64(secs))
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		idx, names := fields(v.Type())
		switch d := data.(type) {
		case map[string]any:
			for k, e := range d {
				i := indexOf(names, k)
				if i < 0 {
					hint := ""
					if s := schema.Suggest(k, names); s != "" {
						hint = fmt.Sprintf(" (did you mean %s?)", s)
					}
					return f.errorf(path, "no field %q%s; the fields are %s", k, hint, strings.Join(names, ", "))
				}
				if err := f.fill(v.Field(idx[i]), e, join(path, k)); err != nil {
					return err
				}
			}
			return nil
		case []any:
			if len(d) > len(names) {
				return f.errorf(path, "%d values for %d fields (%s)", len(d), len(names), strings.Join(names, ", "))
			}
			for i, e := range d {
				if err := f.fill(v.Field(idx[i]), e, join(path, names[i])); err != nil {
					return err
				}
			}
			return nil
		}
		return f.errorf(path, "%s is not a message: give a list of its fields' values, or a mapping by name", describe(data))
	case reflect.Slice, reflect.Array:
		d, ok := data.([]any)
		if !ok {
			return f.errorf(path, "%s is not a list", describe(data))
		}
		if v.Kind() == reflect.Array && len(d) != v.Len() {
			return f.errorf(path, "%d values for an array of %d", len(d), v.Len())
		}
		if v.Kind() == reflect.Slice {
			v.Set(reflect.MakeSlice(v.Type(), len(d), len(d)))
		}
		for i, e := range d {
			if err := f.fill(v.Index(i), e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Bool:
		b, ok := data.(bool)
		if !ok {
			return f.errorf(path, "%s is not true or false", describe(data))
		}
		v.SetBool(b)
		return nil
	case reflect.String:
		s, ok := data.(string)
		if !ok {
			return f.errorf(path, "%s is not a string", describe(data))
		}
		v.SetString(s)
		return nil
	case reflect.Float32, reflect.Float64:
		x, ok := number(data)
		if !ok {
			return f.errorf(path, "%s is not a number", describe(data))
		}
		if v.Kind() == reflect.Float32 && math.Abs(x) > math.MaxFloat32 && !math.IsInf(x, 0) {
			return f.errorf(path, "%v does not fit a float32", x)
		}
		v.SetFloat(x)
		return nil
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, ok := number(data)
		if !ok {
			return f.errorf(path, "%s is not a number", describe(data))
		}
		if x != math.Trunc(x) {
			return f.errorf(path, "%v is not a whole number", x)
		}
		bits := v.Type().Bits()
		if v.CanInt() {
			if x < -math.Ldexp(1, bits-1) || x >= math.Ldexp(1, bits-1) {
				return f.errorf(path, "%v does not fit %s", x, rosIntName(v.Kind()))
			}
			v.SetInt(int64(x))
		} else {
			if x < 0 || x >= math.Ldexp(1, bits) {
				return f.errorf(path, "%v does not fit %s", x, rosIntName(v.Kind()))
			}
			v.SetUint(uint64(x))
		}
		return nil
	}
	return f.errorf(path, "a field of Go type %s cannot be filled", v.Type())
}

func rosIntName(k reflect.Kind) string {
	return map[reflect.Kind]string{
		reflect.Int8: "an int8", reflect.Int16: "an int16", reflect.Int32: "an int32", reflect.Int64: "an int64",
		reflect.Uint8: "a uint8", reflect.Uint16: "a uint16", reflect.Uint32: "a uint32", reflect.Uint64: "a uint64",
	}[k]
}

// seconds reads a time or duration: seconds, or {secs, nsecs}.
func (f *filler) seconds(data any, path string) (time.Duration, error) {
	if x, ok := number(data); ok {
		return time.Duration(math.Round(x * 1e9)), nil
	}
	if m, ok := data.(map[string]any); ok {
		var d time.Duration
		for k, e := range m {
			x, ok := number(e)
			if !ok || x != math.Trunc(x) {
				return 0, f.errorf(join(path, k), "%s is not a whole number", describe(e))
			}
			switch k {
			case "secs":
				d += time.Duration(x) * time.Second
			case "nsecs":
				d += time.Duration(x)
			default:
				return 0, f.errorf(path, "a time is seconds or {secs, nsecs}, not %q", k)
			}
		}
		return d, nil
	}
	return 0, f.errorf(path, "%s is not a time: give seconds, or {secs, nsecs}", describe(data))
}

func number(data any) (float64, bool) {
	switch x := data.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

func describe(data any) string {
	switch x := data.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprint(data)
}

func indexOf(names []string, n string) int {
	for i, x := range names {
		if x == n {
			return i
		}
	}
	return -1
}
