package luadm

import (
	lua "github.com/yuin/gopher-lua"
)

// Lua patterns, as Lua 5.1's lstrlib.c matches them (this file follows
// its matcher; lstrlib.c is Copyright (C) 1994-2012 Lua.org, PUC-Rio,
// under the MIT licence: "Permission is hereby granted, free of charge,
// to any person obtaining a copy of this software and associated
// documentation files (the "Software"), to deal in the Software without
// restriction, including without limitation the rights to use, copy,
// modify, merge, publish, distribute, sublicense, and/or sell copies of
// the Software, and to permit persons to whom the Software is furnished
// to do so, subject to the following conditions: The above copyright
// notice and this permission notice shall be included in all copies or
// substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS",
// WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED."): a backtracking
// matcher whose recursion follows the pattern's items, not the subject's
// characters (a*, .- and the rest expand in loops), so that its depth is
// bounded by maxMatchDepth whatever the subject's length. gopher-lua's own
// matcher recursed once per character repeated and rebuilt the result of
// string.gsub once per match (quadratic: a 65,000-character line through
// gsub took 8-19 s). Matching can still take long by nature (a.-b.-c on a
// long subject without a c), so every step is counted and the state's
// context is looked at as the VM does between instructions.

const (
	maxCaptures   = 32  // LUA_MAXCAPTURES
	maxMatchDepth = 200 // Lua 5.2's MAXCCALLS for patterns
	capUnfinished = -1
	capPosition   = -2
)

type capture struct{ init, len int }

type matchState struct {
	L       *lua.LState
	src     string
	pat     string
	level   int
	depth   int
	capture [maxCaptures]capture
	steps   steps
}

func newMatchState(L *lua.LState, src, pat string) *matchState {
	return &matchState{L: L, src: src, pat: pat, steps: newSteps(L)}
}

func (ms *matchState) checkCapture(l byte) int {
	i := int(l) - '1'
	if i < 0 || i >= ms.level || ms.capture[i].len == capUnfinished {
		ms.L.RaiseError("invalid capture index")
	}
	return i
}

func (ms *matchState) captureToClose() int {
	for level := ms.level - 1; level >= 0; level-- {
		if ms.capture[level].len == capUnfinished {
			return level
		}
	}
	ms.L.RaiseError("invalid pattern capture")
	return 0
}

// classEnd returns the index just after the single-character class at p.
func (ms *matchState) classEnd(p int) int {
	pat := ms.pat
	c := pat[p]
	p++
	switch c {
	case '%':
		if p >= len(pat) {
			ms.L.RaiseError("%s", "malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if p < len(pat) && pat[p] == '^' {
			p++
		}
		for { // look for a ']'
			if p >= len(pat) {
				ms.L.RaiseError("malformed pattern (missing ']')")
			}
			ms.setByte(p)
			c := pat[p]
			p++
			if c == '%' && p < len(pat) {
				p++ // skip escapes (e.g. '%]')
			}
			if p < len(pat) && pat[p] == ']' {
				return p + 1
			}
		}
	}
	return p
}

func isalpha(c int) bool  { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isdigit(c int) bool  { return '0' <= c && c <= '9' }
func islower(c int) bool  { return 'a' <= c && c <= 'z' }
func isupper(c int) bool  { return 'A' <= c && c <= 'Z' }
func isspace(c int) bool  { return c == ' ' || '\t' <= c && c <= '\r' }
func iscntrl(c int) bool  { return c < 0x20 || c == 0x7f }
func isxdigit(c int) bool { return isdigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }
func ispunct(c int) bool  { return 0x20 < c && c < 0x7f && !isalpha(c) && !isdigit(c) }

// matchClass is C's ctype in the C locale, as Lua's is by default.
func matchClass(c int, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isalpha(c)
	case 'c':
		res = iscntrl(c)
	case 'd':
		res = isdigit(c)
	case 'l':
		res = islower(c)
	case 'p':
		res = ispunct(c)
	case 's':
		res = isspace(c)
	case 'u':
		res = isupper(c)
	case 'w':
		res = isalpha(c) || isdigit(c)
	case 'x':
		res = isxdigit(c)
	case 'z':
		res = c == 0
	default:
		return int(cl) == c
	}
	if islower(int(cl)) {
		return res
	}
	return !res
}

// setByte counts the reading of a set's byte at p: a set is read whole
// each time the matcher comes to it, so a long one ([ followed by a
// million characters) is many steps, not one. A set of a few bytes costs
// nothing.
func (ms *matchState) setByte(p int) {
	if p&63 == 0 {
		ms.steps.add(16)
	}
}

// matchBracketClass matches c against the set [...] from p (at '[') to
// ec (at its ']').
func (ms *matchState) matchBracketClass(c, p, ec int) bool {
	pat := ms.pat
	sig := true
	if pat[p+1] == '^' {
		sig = false
		p++ // skip the '^'
	}
	for p++; p < ec; p++ {
		ms.setByte(p)
		switch {
		case pat[p] == '%':
			p++
			if matchClass(c, pat[p]) {
				return sig
			}
		case pat[p+1] == '-' && p+2 < ec:
			p += 2
			if int(pat[p-2]) <= c && c <= int(pat[p]) {
				return sig
			}
		case int(pat[p]) == c:
			return sig
		}
	}
	return !sig
}

func (ms *matchState) singleMatch(c, p, ep int) bool {
	switch ms.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, ms.pat[p+1])
	case '[':
		return ms.matchBracketClass(c, p, ep-1)
	}
	return int(ms.pat[p]) == c
}

func (ms *matchState) matchBalance(s, p int) int {
	if p+1 >= len(ms.pat) {
		ms.L.RaiseError("unbalanced pattern")
	}
	if s >= len(ms.src) || ms.src[s] != ms.pat[p] {
		return -1
	}
	b, e := ms.pat[p], ms.pat[p+1]
	cont := 1
	for s++; s < len(ms.src); s++ {
		ms.steps.add(1)
		switch ms.src[s] {
		case e:
			if cont--; cont == 0 {
				return s + 1
			}
		case b:
			cont++
		}
	}
	return -1 // the string ends out of balance
}

func (ms *matchState) maxExpand(s, p, ep int) int {
	i := 0 // counts the longest expansion of the item
	for s+i < len(ms.src) && ms.singleMatch(int(ms.src[s+i]), p, ep) {
		ms.steps.add(1)
		i++
	}
	// try the rest with the most repetitions first
	for ; i >= 0; i-- {
		if res := ms.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

func (ms *matchState) minExpand(s, p, ep int) int {
	for {
		if res := ms.match(s, ep+1); res >= 0 {
			return res
		}
		if s < len(ms.src) && ms.singleMatch(int(ms.src[s]), p, ep) {
			s++ // try with one more repetition
		} else {
			return -1
		}
	}
}

func (ms *matchState) startCapture(s, p, what int) int {
	level := ms.level
	if level >= maxCaptures {
		ms.L.RaiseError("too many captures")
	}
	ms.capture[level] = capture{s, what}
	ms.level = level + 1
	res := ms.match(s, p)
	if res < 0 {
		ms.level-- // undo the capture
	}
	return res
}

func (ms *matchState) endCapture(s, p int) int {
	l := ms.captureToClose()
	ms.capture[l].len = s - ms.capture[l].init // close the capture
	res := ms.match(s, p)
	if res < 0 {
		ms.capture[l].len = capUnfinished // undo it
	}
	return res
}

func (ms *matchState) matchCapture(s int, l byte) int {
	c := ms.capture[ms.checkCapture(l)]
	if c.len < 0 { // a position capture, (): Lua 5.1's size_t compare fails
		return -1
	}
	ms.steps.copied(c.len)
	if len(ms.src)-s >= c.len && ms.src[c.init:c.init+c.len] == ms.src[s:s+c.len] {
		return s + c.len
	}
	return -1
}

// match returns the end of the match of pat[p:] at src[s:], or -1.
func (ms *matchState) match(s, p int) int {
	if ms.depth++; ms.depth > maxMatchDepth {
		ms.L.RaiseError("pattern too complex")
	}
	res := ms.doMatch(s, p)
	ms.depth--
	return res
}

func (ms *matchState) doMatch(s, p int) int {
	pat := ms.pat
	for {
		ms.steps.add(1)
		if p >= len(pat) {
			return s // the end of the pattern: a match
		}
		switch pat[p] {
		case '(':
			if p+1 < len(pat) && pat[p+1] == ')' {
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case '$':
			if p+1 == len(pat) {
				if s == len(ms.src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 >= len(pat) {
				break // classEnd reports it
			}
			switch c := pat[p+1]; {
			case c == 'b':
				if s = ms.matchBalance(s, p+2); s < 0 {
					return -1
				}
				p += 4
				continue
			case c == 'f':
				p += 2
				if p >= len(pat) || pat[p] != '[' {
					ms.L.RaiseError("%s", "missing '[' after '%f' in pattern")
				}
				ep := ms.classEnd(p)
				prev, cur := 0, 0
				if s > 0 {
					prev = int(ms.src[s-1])
				}
				if s < len(ms.src) {
					cur = int(ms.src[s])
				}
				if ms.matchBracketClass(prev, p, ep-1) || !ms.matchBracketClass(cur, p, ep-1) {
					return -1
				}
				p = ep
				continue
			case isdigit(int(c)):
				if s = ms.matchCapture(s, c); s < 0 {
					return -1
				}
				p += 2
				continue
			}
		}
		// a single-character class, perhaps followed by ?, *, + or -
		ep := ms.classEnd(p)
		m := s < len(ms.src) && ms.singleMatch(int(ms.src[s]), p, ep)
		if ep < len(pat) {
			switch pat[ep] {
			case '?':
				if m {
					if res := ms.match(s+1, ep+1); res >= 0 {
						return res
					}
				}
				p = ep + 1
				continue
			case '*':
				return ms.maxExpand(s, p, ep)
			case '+':
				if !m {
					return -1
				}
				return ms.maxExpand(s+1, p, ep)
			case '-':
				return ms.minExpand(s, p, ep)
			}
		}
		if !m {
			return -1
		}
		s++
		p = ep
	}
}

// get returns capture i of the match src[s:e]: capture 0 is the whole
// match when the pattern has none.
func (ms *matchState) get(i, s, e int) lua.LValue {
	if i >= ms.level {
		if i != 0 {
			ms.L.RaiseError("invalid capture index")
		}
		return lua.LString(ms.src[s:e])
	}
	c := ms.capture[i]
	switch c.len {
	case capUnfinished:
		ms.L.RaiseError("unfinished capture")
	case capPosition:
		return lua.LNumber(c.init + 1)
	}
	return lua.LString(ms.src[c.init : c.init+c.len])
}

// captures is how many values push gives for the match.
func (ms *matchState) captures(whole bool) int {
	if ms.level == 0 && whole {
		return 1
	}
	return ms.level
}

// push pushes the match's captures (the whole match, src[s:e], if it has
// none and whole) and returns how many.
func (ms *matchState) push(s, e int, whole bool) int {
	n := ms.captures(whole)
	for i := 0; i < n; i++ {
		ms.L.Push(ms.get(i, s, e))
	}
	return n
}

// find returns where pat[p:] first matches src from init on (anchored: at
// init only) and where the match ends, or -1, -1.
func (ms *matchState) find(init, p int, anchor bool) (int, int) {
	for s := init; ; s++ {
		ms.level = 0
		if e := ms.match(s, p); e >= 0 {
			return s, e
		}
		if anchor || s >= len(ms.src) {
			return -1, -1
		}
	}
}
