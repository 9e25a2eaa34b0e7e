package luadm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The py table: Python's meaning of what seat port translates, where Lua's
// differs (docs/porting.md, "The py library"). Truth: 0, "" and empty
// tables are false. Strings count, index and slice characters, not bytes.
// A scripts' global "py" is built on first use.

// pyFuncs are the functions of the py table.
var pyFuncs = map[string]lua.LGFunction{
	"truthy":   func(L *lua.LState) int { L.Push(lua.LBool(pyTruthy(L.Get(1)))); return 1 },
	"int":      pyInt,
	"float":    pyFloat,
	"len":      pyLen,
	"str":      func(L *lua.LState) int { L.Push(lua.LString(pyStr(L.Get(1), false))); return 1 },
	"strf":     func(L *lua.LState) int { L.Push(lua.LString(pyStr(L.Get(1), true))); return 1 },
	"round":    pyRound,
	"strip":    func(L *lua.LState) int { return pyStrip(L, true, true) },
	"lstrip":   func(L *lua.LState) int { return pyStrip(L, true, false) },
	"rstrip":   func(L *lua.LState) int { return pyStrip(L, false, true) },
	"index":    pyIndex,
	"slice":    pySlice,
	"add":      pyAdd,
	"mul":      pyMul,
	"mod":      pyMod,
	"format":   pyFormat,
	"contains": pyContains,
	"eq":       func(L *lua.LState) int { L.Push(lua.LBool(pyEq(L.Get(1), L.Get(2)))); return 1 },
	"print":    pyPrint,
	"iter":     pyIter,
}

// PyLib builds the py table.
func PyLib(L *lua.LState) *lua.LTable {
	t := L.CreateTable(0, len(pyFuncs))
	for name, fn := range pyFuncs {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

func pyTruthy(v lua.LValue) bool {
	switch v := v.(type) {
	case *lua.LNilType:
		return false
	case lua.LBool:
		return bool(v)
	case lua.LNumber:
		return v != 0
	case lua.LString:
		return v != ""
	case *lua.LTable:
		k, _ := v.Next(lua.LNil)
		return k != lua.LNil
	}
	return true
}

// pyIsSpace is Python's str.isspace for one character.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

func pyInt(L *lua.LState) int {
	switch v := L.Get(1).(type) {
	case lua.LNumber:
		L.Push(lua.LNumber(math.Trunc(float64(v))))
	case lua.LBool:
		L.Push(lua.LNumber(map[bool]float64{true: 1}[bool(v)]))
	case lua.LString:
		base := L.OptInt(2, 10)
		s := strings.ReplaceAll(strings.TrimFunc(string(v), pyIsSpace), "_", "")
		n, err := strconv.ParseInt(s, base, 64)
		if err != nil {
			L.RaiseError("int(): invalid literal for int() with base %d: %q", base, string(v))
		}
		L.Push(lua.LNumber(n))
	default:
		L.RaiseError("int() argument must be a string or a number, not %s", L.Get(1).Type())
	}
	return 1
}

func pyFloat(L *lua.LState) int {
	switch v := L.Get(1).(type) {
	case lua.LNumber:
		L.Push(v)
	case lua.LBool:
		L.Push(lua.LNumber(map[bool]float64{true: 1}[bool(v)]))
	case lua.LString:
		f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimFunc(string(v), pyIsSpace), "_", ""), 64)
		if err != nil {
			L.RaiseError("float(): could not convert string to float: %q", string(v))
		}
		L.Push(lua.LNumber(f))
	default:
		L.RaiseError("float() argument must be a string or a number, not %s", L.Get(1).Type())
	}
	return 1
}

// pyCount is len of a table: a list's length, else its entries.
func pyCount(t *lua.LTable) int {
	if n := t.Len(); n > 0 {
		return n
	}
	n := 0
	t.ForEach(func(lua.LValue, lua.LValue) { n++ })
	return n
}

func pyLen(L *lua.LState) int {
	switch v := L.Get(1).(type) {
	case lua.LString:
		L.Push(lua.LNumber(utf8.RuneCountInString(string(v))))
	case *lua.LTable:
		L.Push(lua.LNumber(pyCount(v)))
	default:
		L.RaiseError("object of type %s has no len()", L.Get(1).Type())
	}
	return 1
}

// pyStr is Python's str(); float says the value is a Python float (3.0,
// not 3).
func pyStr(v lua.LValue, float bool) string { return pyRepr(v, float, false) }

func pyRepr(v lua.LValue, float, quote bool) string {
	switch v := v.(type) {
	case *lua.LNilType:
		return "None"
	case lua.LBool:
		if v {
			return "True"
		}
		return "False"
	case lua.LNumber:
		f := float64(v)
		switch {
		case math.IsInf(f, 1):
			return "inf"
		case math.IsInf(f, -1):
			return "-inf"
		case math.IsNaN(f):
			return "nan"
		case f == math.Trunc(f) && math.Abs(f) < 1e16:
			if float {
				return strconv.FormatFloat(f, 'f', 1, 64)
			}
			return strconv.FormatFloat(f, 'f', 0, 64)
		}
		// Python's repr: the shortest digits, positional unless the
		// exponent is below -4 or 16 and over (1e-05, 1e+16).
		if exp := math.Floor(math.Log10(math.Abs(f))); exp < -4 || exp >= 16 {
			return strconv.FormatFloat(f, 'e', -1, 64)
		}
		return strconv.FormatFloat(f, 'f', -1, 64)
	case lua.LString:
		if quote {
			return pyStrRepr(string(v))
		}
		return string(v)
	case *lua.LTable:
		var parts []string
		n := v.Len()
		for i := 1; i <= n; i++ {
			parts = append(parts, pyRepr(v.RawGetInt(i), false, true))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return v.String()
}

// pyStrRepr is Python 3's repr of a string: single quotes unless it holds
// one and no double quote; backslash escapes for control characters.
func pyStrRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r) && r > 0x7f:
			if r <= 0xff {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else if r <= 0xffff {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func pyRound(L *lua.LState) int {
	x := float64(L.CheckNumber(1))
	if L.GetTop() < 2 || L.Get(2) == lua.LNil {
		L.Push(lua.LNumber(math.RoundToEven(x))) // Python 3: halves to even
		return 1
	}
	// The decimal digits of the float's exact value, as Python does:
	// round(2.675, 2) is 2.67 (2.675 is 2.67499999… in binary).
	n := L.CheckInt(2)
	if n < 0 {
		p := math.Pow(10, float64(-n))
		L.Push(lua.LNumber(math.RoundToEven(x/p) * p))
		return 1
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
	L.Push(lua.LNumber(r))
	return 1
}

func pyStrip(L *lua.LState, left, right bool) int {
	s := L.CheckString(1)
	cut := pyIsSpace
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		chars := L.CheckString(2)
		cut = func(r rune) bool { return strings.ContainsRune(chars, r) }
	}
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	L.Push(lua.LString(s))
	return 1
}

// pyAt turns a Python index (negative from the end) into a 0-based one.
func pyAt(L *lua.LState, k lua.LValue, n int) int {
	f, ok := k.(lua.LNumber)
	if !ok || float64(f) != math.Trunc(float64(f)) {
		L.RaiseError("indices must be integers, not %s", k.Type())
	}
	i := int(f)
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		L.RaiseError("index out of range: %d of %d", int(f), n)
	}
	return i
}

func pyIndex(L *lua.LState) int {
	x, k := L.Get(1), L.Get(2)
	switch x := x.(type) {
	case lua.LString:
		r := []rune(string(x))
		L.Push(lua.LString(string(r[pyAt(L, k, len(r))])))
	case *lua.LTable:
		if _, ok := k.(lua.LNumber); ok && x.Len() > 0 {
			L.Push(x.RawGetInt(pyAt(L, k, x.Len()) + 1))
		} else {
			L.Push(x.RawGet(k))
		}
	default:
		L.RaiseError("%s is not subscriptable", L.Get(1).Type())
	}
	return 1
}

// pyBounds is Python's slice bounds [i:j] (arguments 2 and 3, nil for
// none) of a length n.
func pyBounds(L *lua.LState, n int) (int, int) {
	at := func(idx, def int) int {
		if L.Get(idx) == lua.LNil {
			return def
		}
		i := int(L.CheckNumber(idx))
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	i, j := at(2, 0), at(3, n)
	return i, max(i, j)
}

func pySlice(L *lua.LState) int {
	switch x := L.Get(1).(type) {
	case lua.LString:
		r := []rune(string(x))
		i, j := pyBounds(L, len(r))
		L.Push(lua.LString(string(r[i:j])))
	case *lua.LTable:
		i, j := pyBounds(L, x.Len())
		t := L.CreateTable(j-i, 0)
		pyExtend(t, x, i+1, j)
		L.Push(t)
	default:
		L.RaiseError("%s is not subscriptable", L.Get(1).Type())
	}
	return 1
}

func pyAdd(L *lua.LState) int {
	a, b := L.Get(1), L.Get(2)
	switch {
	case a.Type() == lua.LTString && b.Type() == lua.LTString:
		L.Push(lua.LString(string(a.(lua.LString)) + string(b.(lua.LString))))
	case a.Type() == lua.LTNumber && b.Type() == lua.LTNumber:
		L.Push(a.(lua.LNumber) + b.(lua.LNumber))
	case a.Type() == lua.LTTable && b.Type() == lua.LTTable:
		ta, tb := a.(*lua.LTable), b.(*lua.LTable)
		t := L.CreateTable(ta.Len()+tb.Len(), 0)
		pyExtend(t, ta, 1, ta.Len())
		pyExtend(t, tb, 1, tb.Len())
		L.Push(t)
	default:
		L.RaiseError("unsupported operand types for +: %s and %s", a.Type(), b.Type())
	}
	return 1
}

// pyExtend appends src's items from..to (1-based, inclusive) to dst.
func pyExtend(dst, src *lua.LTable, from, to int) {
	for i := from; i <= to; i++ {
		dst.Append(src.RawGetInt(i))
	}
}

func pyMul(L *lua.LState) int {
	a, b := L.Get(1), L.Get(2)
	if a.Type() == lua.LTNumber && b.Type() != lua.LTNumber {
		a, b = b, a
	}
	switch {
	case a.Type() == lua.LTNumber && b.Type() == lua.LTNumber:
		L.Push(a.(lua.LNumber) * b.(lua.LNumber))
	case a.Type() == lua.LTString && b.Type() == lua.LTNumber:
		L.Push(lua.LString(strings.Repeat(string(a.(lua.LString)), max(int(b.(lua.LNumber)), 0))))
	case a.Type() == lua.LTTable && b.Type() == lua.LTNumber:
		src := a.(*lua.LTable)
		t := L.CreateTable(0, 0)
		for range max(int(b.(lua.LNumber)), 0) {
			pyExtend(t, src, 1, src.Len())
		}
		L.Push(t)
	default:
		L.RaiseError("unsupported operand types for *: %s and %s", a.Type(), b.Type())
	}
	return 1
}

func pyMod(L *lua.LState) int {
	a, b := L.Get(1), L.Get(2)
	if s, ok := a.(lua.LString); ok {
		// One value: ported code makes no tuples (a tuple literal is
		// translated as the arguments of py.format), so a table is a list.
		L.Push(lua.LString(pyPercent(L, string(s), []lua.LValue{b})))
		return 1
	}
	x, y := float64(L.CheckNumber(1)), float64(L.CheckNumber(2))
	if y == 0 {
		L.RaiseError("modulo by zero")
	}
	L.Push(lua.LNumber(x - math.Floor(x/y)*y))
	return 1
}

func pyFormat(L *lua.LState) int {
	var args []lua.LValue
	for i := 2; i <= L.GetTop(); i++ {
		args = append(args, L.Get(i))
	}
	L.Push(lua.LString(pyPercent(L, L.CheckString(1), args)))
	return 1
}

// pyPercent is Python's "format" % args.
func pyPercent(L *lua.LState, f string, args []lua.LValue) string {
	var b strings.Builder
	next := 0
	arg := func() lua.LValue {
		if next >= len(args) {
			L.RaiseError("not enough arguments for format string")
		}
		next++
		return args[next-1]
	}
	number := func(verb byte) float64 {
		n, ok := arg().(lua.LNumber)
		if !ok {
			L.RaiseError("%%%c format: a number is required", verb)
		}
		return float64(n)
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0123456789.", f[j]) >= 0 {
			j++
		}
		spec0 := f[i+1 : j]
		for j < len(f) && strings.IndexByte("hlL", f[j]) >= 0 { // length modifiers, ignored as Python does
			j++
		}
		if j >= len(f) {
			L.RaiseError("incomplete format")
		}
		spec, verb := spec0, f[j]
		i = j
		flags := spec[:len(spec)-len(strings.TrimLeft(spec, "-+ #0"))]
		switch verb {
		case '%':
			b.WriteByte('%')
		case 's', 'r':
			s := pyRepr(arg(), false, verb == 'r')
			// Python pads strings with spaces even with the 0 flag.
			b.WriteString(fmt.Sprintf("%"+strings.ReplaceAll(flags, "0", "")+spec[len(flags):]+"s", s))
		case 'd', 'i', 'u':
			b.WriteString(fmt.Sprintf("%"+spec+"d", int64(math.Trunc(number(verb)))))
		case 'f', 'F', 'e', 'E', 'g', 'G':
			b.WriteString(fmt.Sprintf("%"+spec+string(verb), number(verb)))
		case 'x', 'X', 'o':
			n := math.Trunc(number(verb))
			if verb == 'o' && strings.Contains(flags, "#") {
				// Python's alternate octal is 0o10, Go's 010.
				digits := strconv.FormatInt(int64(n), 8)
				sign := ""
				if strings.HasPrefix(digits, "-") {
					sign, digits = "-", digits[1:]
				}
				b.WriteString(fmt.Sprintf("%"+strings.ReplaceAll(flags, "#", "")+spec[len(flags):]+"s", sign+"0o"+digits))
				break
			}
			b.WriteString(fmt.Sprintf("%"+spec+string(verb), int64(n)))
		case 'c':
			switch v := arg().(type) {
			case lua.LNumber:
				b.WriteRune(rune(int(v)))
			default:
				b.WriteString(v.String())
			}
		default:
			L.RaiseError("unsupported format character %q", verb)
		}
	}
	if next < len(args) {
		L.RaiseError("not all arguments converted during string formatting")
	}
	return b.String()
}

func pyContains(L *lua.LState) int {
	item := L.Get(2)
	switch c := L.Get(1).(type) {
	case lua.LString:
		s, ok := item.(lua.LString)
		if !ok {
			L.RaiseError("'in <string>' requires a string as left operand, not %s", item.Type())
		}
		L.Push(lua.LBool(strings.Contains(string(c), string(s))))
	case *lua.LTable:
		found := false
		if c.Len() > 0 {
			for i := 1; i <= c.Len() && !found; i++ {
				found = pyEq(c.RawGetInt(i), item)
			}
		} else {
			found = c.RawGet(item) != lua.LNil
		}
		L.Push(lua.LBool(found))
	default:
		L.RaiseError("argument of type %s is not iterable", L.Get(1).Type())
	}
	return 1
}

// pyEq is Python's ==: lists by their items.
func pyEq(a, b lua.LValue) bool {
	ta, ok1 := a.(*lua.LTable)
	tb, ok2 := b.(*lua.LTable)
	if !ok1 || !ok2 {
		return a == b
	}
	if ta == tb {
		return true
	}
	if ta.Len() != tb.Len() || pyCount(ta) != pyCount(tb) {
		return false
	}
	equal := true
	ta.ForEach(func(k, v lua.LValue) {
		if equal && !pyEq(v, tb.RawGet(k)) {
			equal = false
		}
	})
	return equal
}

// pyIter is "for x in v": a list's items, or a string's characters.
func pyIter(L *lua.LState) int {
	switch v := L.Get(1).(type) {
	case lua.LString:
		runes := []rune(string(v))
		i := 0
		L.Push(L.NewFunction(func(L *lua.LState) int {
			if i >= len(runes) {
				L.Push(lua.LNil)
				return 1
			}
			i++
			L.Push(lua.LNumber(i))
			L.Push(lua.LString(string(runes[i-1])))
			return 2
		}))
		return 1
	case *lua.LTable:
		L.Push(L.GetGlobal("ipairs"))
		L.Push(v)
		L.Call(1, 3)
		return 3
	}
	L.RaiseError("%s object is not iterable", L.Get(1).Type())
	return 0
}

func pyPrint(L *lua.LState) int {
	parts := make([]string, L.GetTop())
	for i := range parts {
		parts[i] = pyStr(L.Get(i+1), false)
	}
	L.Push(L.GetGlobal("print"))
	L.Push(lua.LString(strings.Join(parts, " ")))
	L.Call(1, 0)
	return 0
}

// LuaSpelling is the Lua for functions of Python and JavaScript that
// scripts ported by hand reach for.
var LuaSpelling = map[string]string{
	"round":      "write math.floor(x + 0.5)",
	"math.round": "write math.floor(x + 0.5)",
	"len":        "write #x (a table's length, or a string's in bytes)",
	"str":        "write tostring(x)",
	"int":        "write math.floor(tonumber(x))",
	"float":      "write tonumber(x)",
	// Lua 5.2's, which 5.1 (gopher-lua's) has as a global.
	"table.unpack": "write unpack(t) (Lua 5.1)",
}
