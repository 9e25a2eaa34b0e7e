package luadm

import (
	"fmt"
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
		ms.L, ms.steps = L, newSteps(L)
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

// strFormat is gopher-lua's string.format (each directive formatted by
// Go's fmt from the Lua value) with Lua 5.1's bounds: a directive's width
// and precision have two digits at most, so that no directive writes more
// than 99 bytes beyond its argument. Go's fmt allowed widths up to a
// million, and one call could write gigabytes.
func strFormat(L *lua.LState) int {
	f := L.CheckString(1)
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
		start := i - 1
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		if i-start-1 > 5 {
			L.RaiseError("invalid format (repeated flags)")
		}
		i = skipDigits(L, f, i)
		if i < len(f) && f[i] == '.' {
			i = skipDigits(L, f, i+1)
		}
		if i >= len(f) {
			L.RaiseError("invalid option in format: the format ends with '%s'", f[start:])
		}
		arg++
		c := f[i]
		i++
		if strings.IndexByte("cdiouxXeEfgGqs", c) < 0 {
			L.RaiseError("invalid option '%%%c' to 'format'", c)
		}
		if arg > L.GetTop() {
			L.ArgError(arg, "no value")
		}
		t := fmt.Sprintf(f[start:i], L.Get(arg))
		b.WriteString(t)
		st.copied(len(t))
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// skipDigits skips a width or precision of two digits at most.
func skipDigits(L *lua.LState, f string, i int) int {
	for k := 0; i < len(f) && isdigit(int(f[i])); k++ {
		if k == 2 {
			L.RaiseError("invalid format (width or precision too long)")
		}
		i++
	}
	return i
}
