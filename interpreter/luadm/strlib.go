package luadm

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The string functions that can run long in one Go call, as Lua 5.1 has
// them (lstrlib.c), each linear in what it reads and writes and stopped at
// the script limits (steps): find, match, gmatch and gsub on the pattern
// matcher of pattern.go, rep, byte and format.

// maxResults is the most values unpack and string.byte return. Lua 5.1
// allows about 8,000; gopher-lua allowed its registry (a million), growing
// it by 32 slots a value, which made unpack({}, 1, 200000) take 15 s.
const maxResults = 1 << 17

// specials are the characters that make a pattern more than plain text.
const specials = "^$*+?.([%-"

// posrelat is Lua's: a negative position counts from the end.
func posrelat(pos, n int) int {
	if pos < 0 {
		pos += n + 1
	}
	return max(pos, 0)
}

func strFind(L *lua.LState) int  { return findAux(L, true) }
func strMatch(L *lua.LState) int { return findAux(L, false) }

func findAux(L *lua.LState, find bool) int {
	s, p := L.CheckString(1), L.CheckString(2)
	init := min(posrelat(L.OptInt(3, 1), len(s))-1, len(s))
	init = max(init, 0)
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(p, specials)) {
		if i := strings.Index(s[init:], p); i >= 0 {
			L.Push(lua.LNumber(init + i + 1))
			L.Push(lua.LNumber(init + i + len(p)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	anchor := strings.HasPrefix(p, "^")
	ms := newMatchState(L, s, p)
	start := 0
	if anchor {
		start = 1
	}
	if b, e := ms.find(init, start, anchor); b >= 0 {
		if find {
			L.Push(lua.LNumber(b + 1))
			L.Push(lua.LNumber(e))
			return ms.push(0, 0, false) + 2
		}
		return ms.push(b, e, true)
	}
	L.Push(lua.LNil)
	return 1
}

// strGmatch iterates over the matches, each found when asked for: a '^'
// is an ordinary character here, as in Lua (an anchor would stop the
// iteration).
func strGmatch(L *lua.LState) int {
	s, p := L.CheckString(1), L.CheckString(2)
	pos := 0
	ms := newMatchState(L, s, p)
	L.Push(L.NewFunction(func(L *lua.LState) int {
		// A call that raised an error (a malformed pattern, the time
		// limit) left the depth counting: each call starts anew.
		ms.L, ms.steps, ms.depth = L, newSteps(L), 0
		for ; pos <= len(s); pos++ {
			ms.level = 0
			if e := ms.match(pos, 0); e >= 0 {
				b := pos
				pos = e
				if e == b {
					pos++ // an empty match: go on at least one position
				}
				return ms.push(b, e, true)
			}
		}
		return 0
	}))
	return 1
}

func strGsub(L *lua.LState) int {
	src, p := L.CheckString(1), L.CheckString(2)
	repl := L.Get(3)
	switch repl.Type() {
	case lua.LTNumber, lua.LTString, lua.LTTable, lua.LTFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptInt(4, len(src)+1)
	anchor := strings.HasPrefix(p, "^")
	start := 0
	if anchor {
		start = 1
	}
	ms := newMatchState(L, src, p)
	var b strings.Builder
	s, n := 0, 0
	for n < maxN {
		ms.level = 0
		e := ms.match(s, start)
		if e >= 0 {
			n++
			ms.addValue(&b, s, e, repl)
		}
		if e > s { // a non-empty match: go on after it
			s = e
		} else if s < len(src) {
			b.WriteByte(src[s])
			s++
		} else {
			break
		}
		if anchor {
			break
		}
	}
	b.WriteString(src[s:])
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// addValue adds the replacement of the match src[s:e] to b.
func (ms *matchState) addValue(b *strings.Builder, s, e int, repl lua.LValue) {
	L := ms.L
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		ms.addString(b, s, e, r.String())
		return
	case *lua.LFunction:
		L.Push(r)
		n := ms.push(s, e, true)
		L.Call(n, 1)
		v = L.Get(-1)
		L.Pop(1)
	case *lua.LTable:
		v = L.GetTable(r, ms.get(0, s, e))
	}
	switch v.(type) {
	case *lua.LNilType, lua.LBool:
		if !lua.LVAsBool(v) { // nil or false: keep the original text
			b.WriteString(ms.src[s:e])
			ms.steps.copied(e - s)
			return
		}
	case lua.LString, lua.LNumber:
		t := v.String()
		b.WriteString(t)
		ms.steps.copied(len(t))
		return
	}
	L.RaiseError("invalid replacement value (a %s)", v.Type().String())
}

// addString adds a replacement string: %0-%9 are the captures, %% is %,
// and a % before anything else stays, as in gopher-lua (Lua 5.1 dropped
// it).
func (ms *matchState) addString(b *strings.Builder, s, e int, news string) {
	ms.steps.copied(len(news))
	for i := 0; i < len(news); i++ {
		c := news[i]
		if c != '%' || i+1 == len(news) {
			b.WriteByte(c)
			continue
		}
		i++ // skip the %
		switch c := news[i]; {
		case c == '%':
			b.WriteByte('%')
		case !isdigit(int(c)):
			b.WriteByte('%')
			b.WriteByte(c)
		case c == '0':
			b.WriteString(ms.src[s:e])
			ms.steps.copied(e - s)
		default:
			t := ms.get(int(c-'1'), s, e).String()
			b.WriteString(t)
			ms.steps.copied(len(t))
		}
	}
}

// strCopy is string.upper, lower or reverse: f copies its argument in one
// step, linear and short, but a string over the memory limit (grown over
// several calls) would pass the limit again before the watchdog's next
// look, so it is refused.
func strCopy(name string, f func(string) string, memory uint64) lua.LGFunction {
	return func(L *lua.LState) int {
		s := L.CheckString(1)
		if uint64(len(s)) > memory {
			L.RaiseError("%s: the result (%d bytes) is over the script memory limit of %s", name, len(s), BytesText(memory))
		}
		L.Push(lua.LString(f(s)))
		return 1
	}
}

// upper and lower change the case of ASCII letters only, byte by byte, as
// Lua 5.1's toupper and tolower in the C locale: every other byte stays
// (Go's strings.ToUpper changed é, ａ and the like, and wrote each byte
// of invalid UTF-8 as U+FFFD, three bytes).
func upper(s string) string { return flipCase(s, 'a', 'z') }
func lower(s string) string { return flipCase(s, 'A', 'Z') }

func flipCase(s string, from, to byte) string {
	i := 0
	for i < len(s) && (s[i] < from || s[i] > to) {
		i++
	}
	if i == len(s) {
		return s // nothing to change: no copy
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if from <= b[i] && b[i] <= to {
			b[i] ^= 0x20
		}
	}
	return string(b)
}

// reverse reverses s byte by byte, as Lua does.
func reverse(s string) string {
	b := make([]byte, len(s))
	for i := range len(s) {
		b[len(s)-1-i] = s[i]
	}
	return string(b)
}

// strRep builds its result in pieces, refusing one over the memory limit
// outright (the heap would pass it before the watchdog's next look).
func strRep(memory uint64) lua.LGFunction {
	return func(L *lua.LState) int {
		str, n := L.CheckString(1), L.CheckInt(2)
		if n <= 0 || len(str) == 0 {
			L.Push(lua.LString(""))
			return 1
		}
		if uint64(n) > memory/uint64(len(str)) {
			L.RaiseError("string.rep: the result (%d x %d bytes) is over the script memory limit of %s", n, len(str), BytesText(memory))
		}
		st := newSteps(L)
		var b strings.Builder
		total := n * len(str)
		b.Grow(total)
		b.WriteString(str)
		for b.Len() < total { // double what is there, a piece at a time
			k := min(b.Len(), total-b.Len(), 1<<16)
			b.WriteString(b.String()[:k])
			st.copied(k)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}
}

// strByte returns the bytes' codes, in one step of the registry.
func strByte(L *lua.LState) int {
	s := L.CheckString(1)
	posi := posrelat(L.OptInt(2, 1), len(s))
	pose := posrelat(L.OptInt(3, posi), len(s))
	posi = max(posi, 1)
	pose = min(pose, len(s))
	if posi > pose {
		return 0
	}
	n := pose - posi + 1
	if n > maxResults {
		L.RaiseError("string slice too long (%d bytes; at most %d)", n, maxResults)
	}
	reserve(L, n)
	for i := posi - 1; i < pose; i++ {
		L.Push(lua.LNumber(s[i]))
	}
	return n
}

// reserve makes room for n more values on L's registry at once.
// gopher-lua grows it by a fixed step per push beyond its size, copying it
// each time: quadratic for a function that pushes many values.
func reserve(L *lua.LState, n int) {
	top := L.GetTop()
	L.SetTop(top + n)
	L.SetTop(top)
}

// strFormat is Lua 5.1's string.format (lstrlib.c's str_format, which
// hands each directive to C's sprintf), written out so that it gives C's
// output, not Go's fmt's: widths and precisions count bytes, not runes
// (%5s of 日本 is not padded); %c writes one byte; %o, %u, %x and %X
// write the number converted to an unsigned 64-bit integer (%x of -1 is
// ffffffffffffffff); %g has a precision of 6; inf and nan are written as
// C does; %q quotes as Lua reads back; %d, %s and the others take numbers
// or strings as Lua 5.1 converts them, and any other value is an error.
// A directive's width and precision have two digits at most, so that no
// directive writes more than 99 bytes beyond its argument (Go's fmt
// allowed widths up to a million, and one call could write gigabytes).
// Two differences are kept on purpose (docs/seatml.md §9.3): numbers
// become strings as tostring makes them, and a NUL byte in an argument
// is kept (sprintf ended a directive's output at it).
func strFormat(L *lua.LState) int {
	f := L.CheckString(1)
	top := L.GetTop()
	st := newSteps(L)
	var b strings.Builder
	arg := 1
	for i := 0; i < len(f); {
		j := strings.IndexByte(f[i:], '%')
		if j < 0 {
			b.WriteString(f[i:])
			break
		}
		b.WriteString(f[i : i+j])
		st.copied(j)
		i += j + 1
		if i < len(f) && f[i] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if arg++; arg > top {
			L.ArgError(arg, "no value")
		}
		var d directive
		i = d.scan(L, f, i)
		var c byte // the conversion; C reads the NUL after a format that ends
		if i < len(f) {
			c = f[i]
			i++
		}
		var t string
		switch c {
		case 'c':
			t = d.pad("", string([]byte{byte(cInt32(numberArg(L, arg)))}), false)
		case 'd', 'i':
			n := cInt64(numberArg(L, arg))
			sign := ""
			switch {
			case n < 0:
				sign = "-"
			case d.plus:
				sign = "+"
			case d.space:
				sign = " "
			}
			mag := uint64(n)
			if n < 0 {
				mag = -mag
			}
			t = d.integer(sign, mag, 10, c)
		case 'o':
			t = d.integer("", cUint64(numberArg(L, arg)), 8, c)
		case 'u':
			t = d.integer("", cUint64(numberArg(L, arg)), 10, c)
		case 'x', 'X':
			t = d.integer("", cUint64(numberArg(L, arg)), 16, c)
		case 'e', 'E', 'f', 'g', 'G':
			t = d.float(numberArg(L, arg), c)
		case 'q':
			t = quoted(formatString(L, arg))
		case 's':
			s := formatString(L, arg)
			if d.prec < 0 && len(s) >= 100 {
				t = s // C's buffer is too short for it: Lua keeps it whole
				break
			}
			if d.prec >= 0 && d.prec < len(s) {
				s = s[:d.prec]
			}
			t = d.pad("", s, false)
		case 0: // Lua's message has the NUL it read
			L.RaiseError("%s", "invalid option '%' to 'format'")
		default:
			L.RaiseError("invalid option '%%%s' to 'format'", string(c))
		}
		b.WriteString(t)
		st.copied(len(t))
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// directive is a format directive's flags, width and precision (-1:
// none).
type directive struct {
	minus, plus, space, hash, zero bool
	width, prec                    int
}

// scan reads the flags, width and precision from f[i:], as Lua 5.1's
// scanformat, and returns where the conversion is.
func (d *directive) scan(L *lua.LState, f string, i int) int {
	start := i
	for ; i < len(f); i++ {
		switch f[i] {
		case '-':
			d.minus = true
		case '+':
			d.plus = true
		case ' ':
			d.space = true
		case '#':
			d.hash = true
		case '0':
			d.zero = true
		default:
			goto flagsDone
		}
	}
flagsDone:
	if i-start >= len("-+ #0")+1 {
		L.RaiseError("invalid format (repeated flags)")
	}
	d.width, i = digits(f, i)
	d.prec = -1
	if i < len(f) && f[i] == '.' {
		d.prec, i = digits(f, i+1)
	}
	if i < len(f) && isdigit(int(f[i])) {
		L.RaiseError("invalid format (width or precision too long)")
	}
	return i
}

// digits reads up to two digits at f[i:] (none is 0).
func digits(f string, i int) (int, int) {
	n := 0
	for k := 0; k < 2 && i < len(f) && isdigit(int(f[i])); k++ {
		n = n*10 + int(f[i]-'0')
		i++
	}
	return n, i
}

// pad pads prefix and body to the width: with spaces on the left, or on
// the right for '-', or with zeros between them for '0' where zeros may
// go (numbers without a precision).
func (d *directive) pad(prefix, body string, zeros bool) string {
	n := d.width - len(prefix) - len(body)
	switch {
	case n <= 0:
		return prefix + body
	case d.minus:
		return prefix + body + strings.Repeat(" ", n)
	case d.zero && zeros:
		return prefix + strings.Repeat("0", n) + body
	}
	return strings.Repeat(" ", n) + prefix + body
}

// integer writes mag in base as C's %d, %o, %u, %x or %X (conv) does.
func (d *directive) integer(sign string, mag uint64, base int, conv byte) string {
	body := strconv.FormatUint(mag, base)
	if conv == 'X' {
		body = strings.ToUpper(body)
	}
	if d.prec == 0 && mag == 0 {
		body = ""
	}
	if len(body) < d.prec {
		body = strings.Repeat("0", d.prec-len(body)) + body
	}
	prefix := sign
	switch {
	case !d.hash:
	case conv == 'o' && !strings.HasPrefix(body, "0"):
		body = "0" + body
	case (conv == 'x' || conv == 'X') && mag != 0:
		prefix = "0" + string(conv)
	}
	return d.pad(prefix, body, d.prec < 0)
}

// float writes v as C's %e, %E, %f, %g or %G (conv) does: Go's fmt
// agrees for finite numbers once the precision is given (its %g is
// otherwise the shortest); C writes inf and nan with their sign, never
// padded with zeros.
func (d *directive) float(v float64, conv byte) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		body := "inf"
		if math.IsNaN(v) {
			body = "nan"
		}
		if conv == 'E' || conv == 'G' {
			body = strings.ToUpper(body)
		}
		sign := ""
		switch {
		case math.Signbit(v):
			sign = "-"
		case d.plus:
			sign = "+"
		case d.space:
			sign = " "
		}
		return d.pad(sign, body, false)
	}
	prec := d.prec
	if prec < 0 {
		prec = 6
	}
	spec := []byte{'%'}
	for _, fl := range []struct {
		on bool
		c  byte
	}{{d.minus, '-'}, {d.plus, '+'}, {d.space, ' '}, {d.hash, '#'}, {d.zero, '0'}} {
		if fl.on {
			spec = append(spec, fl.c)
		}
	}
	spec = fmt.Appendf(spec, "%d.%d%c", d.width, prec, conv)
	return fmt.Sprintf(string(spec), v)
}

// numberArg is the argument of a numeric directive: a number, or a string
// that Lua 5.1 reads as one (str2number).
func numberArg(L *lua.LState, arg int) float64 {
	switch v := L.Get(arg).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if n, ok := str2number(string(v)); ok {
			return n
		}
	}
	L.TypeError(arg, lua.LTNumber)
	return 0
}

// str2number reads s as Lua 5.1's lua_tonumber does (luaO_str2d: C's
// strtod, then strtoul for 0x, with spaces around): "010" is 10, not
// gopher-lua's octal 8, and "1e2", " 0x10 ", "inf" and "nan" are numbers.
func str2number(s string) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r < 0x80 && isspace(int(r)) })
	t := strings.TrimLeft(s, "+-")
	if len(s)-len(t) > 1 || t == "" {
		return 0, false
	}
	lower := strings.ToLower(t)
	switch {
	case lower == "inf" || lower == "infinity" || lower == "nan":
		v := math.Inf(1)
		if lower == "nan" {
			v = math.NaN()
		}
		if s[0] == '-' {
			v = math.Copysign(v, -1)
		}
		return v, true
	case strings.Contains(lower, "_"): // Go reads 1_000; C does not
		return 0, false
	case strings.HasPrefix(lower, "0x"):
		if !strings.Contains(lower, "p") {
			s += "p0" // strtod reads a hexadecimal number without exponent
		}
	case strings.ContainsAny(lower, "xpin"):
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, true
}

// formatString is the argument of %s or %q: a string, or a number as
// tostring writes it.
func formatString(L *lua.LState, arg int) string {
	switch v := L.Get(arg).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return v.String()
	}
	L.TypeError(arg, lua.LTString)
	return ""
}

// quoted is s as Lua 5.1's %q writes it, for Lua to read back: in
// quotes, with \, \" and the newline escaped by a backslash, \r as \r
// and NUL as \000; every other byte as it is.
func quoted(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString("\\r")
		case 0:
			b.WriteString("\\000")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// cInt64 is C's conversion of a double to a 64-bit integer on amd64, as
// Lua 5.1 makes it for %d: toward zero, and 0x8000000000000000 for NaN
// and for what is out of range.
func cInt64(v float64) int64 {
	if math.IsNaN(v) || v >= 1<<63 || v < -(1<<63) {
		return math.MinInt64
	}
	return int64(v)
}

// cInt32 is the same for a 32-bit int (%c).
func cInt32(v float64) int32 {
	if math.IsNaN(v) || v >= 1<<31 || v < -(1<<31) {
		return math.MinInt32
	}
	return int32(v)
}

// cUint64 is C's conversion of a double to an unsigned 64-bit integer as
// gcc does it on amd64 (%o, %u, %x, %X): a negative number through the
// signed conversion (-1 is 0xffffffffffffffff), one from 2^63 on by
// subtracting 2^63 first (so 2^64 and beyond are 0).
func cUint64(v float64) uint64 {
	if v >= 1<<63 {
		return uint64(cInt64(v-(1<<63))) ^ 1<<63
	}
	return uint64(cInt64(v))
}
