// Package rosmsg reads ROS 1 message, service and action definitions
// (.msg, .srv, .action files) at run time and builds Go types for them
// that goroslib serializes: SEATML files name their types as text
// (datatype="sensor_msgs/Joy"), so seat cannot rely on compiled structs.
//
// A Registry finds a type's file on ROS_PACKAGE_PATH, then under
// /usr/share (Debian's ROS packages), parses it and the types it uses,
// and builds one Go type per message: a struct whose embedded
// goroslib msg.Package, msg.Name and msg.Definitions fields carry the
// ROS name and constants, and whose fields carry their ROS names in
// rosname tags, so goroslib computes the same MD5 sum and definition
// text as rosmsg.
package rosmsg

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Field is one field of a message definition.
type Field struct {
	Name string // as written: snake_case
	// Type is a primitive ("int32", "string", "time", "byte"…) or a
	// message type "pkg/Type" (Header is std_msgs/Header; a bare name is
	// the message's own package's).
	Type  string
	Array bool // Type[] or Type[N]
	Len   int  // N for a fixed-size array; 0 otherwise
	Line  int
}

// Constant is a constant of a message definition (int32 X=1).
type Constant struct {
	Type, Name, Value string
	Line              int
}

// Spec is a parsed message definition.
type Spec struct {
	Package, Name string // "std_msgs", "String"
	File          string
	Fields        []Field
	Constants     []Constant
}

// FullName is "pkg/Type".
func (s *Spec) FullName() string { return s.Package + "/" + s.Name }

// SyntaxError is a problem in a definition file, with its place.
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse parses a message definition of package pkg named name. file is
// for error messages.
func Parse(pkg, name, file, text string) (*Spec, error) {
	s := &Spec{Package: pkg, Name: name, File: file}
	seen := map[string]int{}
	for i, raw := range strings.Split(text, "\n") {
		line := i + 1
		raw = strings.TrimRight(raw, "\r")
		code := raw
		if j := strings.IndexByte(code, '#'); j >= 0 {
			code = code[:j]
		}
		code = strings.TrimSpace(code)
		if code == "" {
			continue
		}
		bad := func(format string, args ...any) error {
			return &SyntaxError{file, line, fmt.Sprintf(format, args...)}
		}
		typ, rest, ok := strings.Cut(code, " ")
		if !ok {
			typ, rest, ok = strings.Cut(code, "\t")
		}
		if !ok {
			return nil, bad("%q: a field is a type and a name (string data)", code)
		}
		rest = strings.TrimSpace(rest)
		if name, _, isConst := strings.Cut(rest, "="); isConst {
			// A constant. A string constant's value is the whole rest of
			// the raw line: '#' in it is text, not a comment.
			if primitiveTypes[typ] == nil || typ == "time" || typ == "duration" {
				return nil, bad("constant %s: a constant's type is a number, bool or string type, not %s", strings.TrimSpace(name), typ)
			}
			name = strings.TrimSpace(name)
			var value string
			if typ == "string" {
				value = strings.TrimSpace(raw[strings.IndexByte(raw, '=')+1:])
			} else {
				value = strings.TrimSpace(code[strings.IndexByte(code, '=')+1:])
				if err := checkConstant(typ, value); err != nil {
					return nil, bad("constant %s: %v", name, err)
				}
			}
			if !validName(name) {
				return nil, bad("constant name %q: letters, digits and _ only, starting with a letter", name)
			}
			if prev, dup := seen[name]; dup {
				return nil, bad("%s is defined twice (line %d)", name, prev)
			}
			seen[name] = line
			s.Constants = append(s.Constants, Constant{Type: typ, Name: name, Value: value, Line: line})
			continue
		}
		if strings.ContainsAny(rest, " \t") {
			return nil, bad("%q: one type and one name per line", code)
		}
		f := Field{Name: rest, Line: line}
		base := typ
		if k := strings.IndexByte(typ, '['); k >= 0 {
			if !strings.HasSuffix(typ, "]") {
				return nil, bad("type %q: an array is written T[] or T[N]", typ)
			}
			base = typ[:k]
			f.Array = true
			if n := typ[k+1 : len(typ)-1]; n != "" {
				v, err := strconv.Atoi(n)
				if err != nil || v <= 0 {
					return nil, bad("type %q: an array's size is a positive number", typ)
				}
				f.Len = v
			}
		}
		switch {
		case primitiveTypes[base] != nil:
		case base == "Header":
			base = "std_msgs/Header"
		case strings.Count(base, "/") == 1:
		case strings.Contains(base, "/"):
			return nil, bad("type %q: a message type is pkg/Type", base)
		default:
			base = pkg + "/" + base
		}
		if !validType(base) {
			return nil, bad("type %q is not a type name", base)
		}
		f.Type = base
		if !validName(f.Name) {
			return nil, bad("field name %q: letters, digits and _ only, starting with a letter", f.Name)
		}
		if prev, dup := seen[f.Name]; dup {
			return nil, bad("%s is defined twice (line %d)", f.Name, prev)
		}
		seen[f.Name] = line
		s.Fields = append(s.Fields, f)
	}
	return s, nil
}

func validName(n string) bool {
	for i, r := range n {
		if !(r == '_' || r < unicode.MaxASCII && (unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return n != "" && n[0] != '_'
}

func validType(t string) bool {
	for _, part := range strings.Split(t, "/") {
		if !validName(part) {
			return false
		}
	}
	return true
}

// The sizes of the integer types.
var (
	intBits  = map[string]int{"int8": 8, "byte": 8, "int16": 16, "int32": 32, "int64": 64}
	uintBits = map[string]int{"uint8": 8, "char": 8, "uint16": 16, "uint32": 32, "uint64": 64}
)

// checkConstant checks that a constant's value fits its type.
func checkConstant(typ, v string) error {
	var err error
	switch typ {
	case "bool":
		if v != "True" && v != "False" && v != "true" && v != "false" && v != "1" && v != "0" {
			err = fmt.Errorf("%q is not a bool", v)
		}
	case "float32", "float64":
		_, err = strconv.ParseFloat(v, 64)
	default:
		if bits, ok := intBits[typ]; ok {
			_, err = strconv.ParseInt(v, 0, bits)
		} else if bits, ok := uintBits[typ]; ok {
			_, err = strconv.ParseUint(v, 0, bits)
		}
	}
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return fmt.Errorf("%q does not fit a %s", v, typ)
	}
	return err
}
