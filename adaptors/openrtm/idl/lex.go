package idl

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/seatml/seat/schema"
)

// tokKind is the kind of a token.
type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tFloat
	tString
	tChar
	tPunct   // one of the punctuators, "::" included
	tInclude // #include: text is the file name, angle says <...>
	tPragma  // #pragma: text is the rest of the line
)

type token struct {
	kind  tokKind
	text  string
	angle bool
	pos   schema.Pos
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tString:
		return fmt.Sprintf("string %q", t.text)
	case tInclude:
		return "#include"
	case tPragma:
		return "#pragma"
	}
	return fmt.Sprintf("%q", t.text)
}

// maxMacroExpansions bounds the tokens macros may produce in one file.
const maxMacroExpansions = 100000

// lexer turns one IDL file into tokens, doing the preprocessor's work
// on the way: comments, #include and #pragma (passed on as tokens),
// #define of object-like macros (expanded once, not recursively),
// #undef, and #ifdef/#ifndef/#if/#elif/#else/#endif.
type lexer struct {
	src      []rune
	off      int
	pos      schema.Pos
	macros   map[string][]token
	pending  []token
	cond     []condState
	bol      bool // only white space since the start of the line
	expanded int
	err      *Error
}

type condState struct {
	active    bool // this branch is taken
	parentOn  bool // the enclosing branch is taken
	taken     bool // some branch of this group has been taken
	seenElse  bool
	directive schema.Pos
}

func newLexer(file string, src []byte, macros map[string][]token) *lexer {
	return &lexer{src: []rune(string(src)), pos: schema.Pos{File: file, Line: 1, Col: 1}, macros: macros, bol: true}
}

func (lx *lexer) active() bool {
	return len(lx.cond) == 0 || lx.cond[len(lx.cond)-1].active
}

func (lx *lexer) failf(p schema.Pos, format string, args ...any) {
	if lx.err == nil {
		lx.err = &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
	}
}

func (lx *lexer) peekRune(k int) rune {
	if lx.off+k < len(lx.src) {
		return lx.src[lx.off+k]
	}
	return -1
}

func (lx *lexer) advance() rune {
	r := lx.src[lx.off]
	lx.off++
	if r == '\n' {
		lx.pos.Line++
		lx.pos.Col = 1
		lx.bol = true
	} else {
		lx.pos.Col++
	}
	return r
}

// skipSpace skips white space and comments; it stops at a newline only
// when stopAtNewline (inside a directive).
func (lx *lexer) skipSpace(stopAtNewline bool) {
	for lx.off < len(lx.src) && lx.err == nil {
		r := lx.src[lx.off]
		switch {
		case r == '\n' && stopAtNewline:
			return
		case r == '\\' && lx.peekRune(1) == '\n':
			lx.advance()
			lx.advance()
			lx.bol = false
		case r == '\\' && lx.peekRune(1) == '\r' && lx.peekRune(2) == '\n':
			lx.advance()
			lx.advance()
			lx.advance()
			lx.bol = false
		case unicode.IsSpace(r) || r == '\ufeff':
			lx.advance()
		case r == '/' && lx.peekRune(1) == '/':
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance()
			}
		case r == '/' && lx.peekRune(1) == '*':
			start := lx.pos
			lx.advance()
			lx.advance()
			for {
				if lx.off >= len(lx.src) {
					lx.failf(start, "comment not terminated")
					return
				}
				if lx.src[lx.off] == '*' && lx.peekRune(1) == '/' {
					lx.advance()
					lx.advance()
					break
				}
				lx.advance()
			}
		default:
			return
		}
	}
}

// next returns the next token of active code.
func (lx *lexer) next() token {
	if len(lx.pending) > 0 {
		t := lx.pending[0]
		lx.pending = lx.pending[1:]
		return t
	}
	for {
		if lx.err != nil {
			return token{kind: tEOF, pos: lx.pos}
		}
		lx.skipSpace(false)
		if lx.err != nil {
			return token{kind: tEOF, pos: lx.pos}
		}
		if lx.off >= len(lx.src) {
			if len(lx.cond) > 0 {
				lx.failf(lx.cond[len(lx.cond)-1].directive, "conditional directive not terminated by #endif")
			}
			return token{kind: tEOF, pos: lx.pos}
		}
		if lx.src[lx.off] == '#' && lx.bol {
			if t, ok := lx.directive(); ok {
				return t
			}
			continue
		}
		lx.bol = false
		if !lx.active() {
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance()
			}
			continue
		}
		t := lx.scan()
		if t.kind == tIdent {
			if body, ok := lx.macros[t.text]; ok {
				lx.expanded += len(body) + 1
				if lx.expanded > maxMacroExpansions {
					lx.failf(t.pos, "macros expand to more than %d tokens", maxMacroExpansions)
					continue
				}
				for _, b := range body {
					b.pos = t.pos
					lx.pending = append(lx.pending, b)
				}
				if len(lx.pending) == 0 {
					continue
				}
				t = lx.pending[0]
				lx.pending = lx.pending[1:]
			}
		}
		return t
	}
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// scan reads one token at the current offset (not a directive).
func (lx *lexer) scan() token {
	start := lx.pos
	r := lx.src[lx.off]
	switch {
	case isIdentStart(r):
		b := lx.off
		for lx.off < len(lx.src) && isIdentPart(lx.src[lx.off]) {
			lx.advance()
		}
		return token{kind: tIdent, text: string(lx.src[b:lx.off]), pos: start}
	case r >= '0' && r <= '9' || r == '.' && lx.peekRune(1) >= '0' && lx.peekRune(1) <= '9':
		b := lx.off
		kind := tInt
		for lx.off < len(lx.src) {
			c := lx.src[lx.off]
			if c == '.' || (c == 'e' || c == 'E') && !strings.HasPrefix(strings.ToLower(string(lx.src[b:lx.off])), "0x") {
				kind = tFloat
				lx.advance()
				if (c == 'e' || c == 'E') && (lx.peekRune(0) == '+' || lx.peekRune(0) == '-') {
					lx.advance()
				}
				continue
			}
			if !isIdentPart(c) {
				break
			}
			lx.advance()
		}
		return token{kind: kind, text: string(lx.src[b:lx.off]), pos: start}
	case r == '"' || r == '\'':
		lx.advance()
		var sb strings.Builder
		for {
			if lx.off >= len(lx.src) || lx.src[lx.off] == '\n' {
				lx.failf(start, "%s literal not terminated", map[rune]string{'"': "string", '\'': "character"}[r])
				return token{kind: tEOF, pos: start}
			}
			c := lx.advance()
			if c == r {
				break
			}
			if c == '\\' && lx.off < len(lx.src) {
				c = lx.advance()
				switch c {
				case 'n':
					c = '\n'
				case 't':
					c = '\t'
				case 'r':
					c = '\r'
				case '0':
					c = 0
				}
			}
			sb.WriteRune(c)
		}
		if r == '"' {
			return token{kind: tString, text: sb.String(), pos: start}
		}
		return token{kind: tChar, text: sb.String(), pos: start}
	}
	for _, p := range []string{"::", "<<", ">>"} {
		if lx.hasPrefix(p) {
			lx.advance()
			lx.advance()
			return token{kind: tPunct, text: p, pos: start}
		}
	}
	if strings.ContainsRune("{}()[]<>;:,=+-*/%&|^~!", r) {
		lx.advance()
		return token{kind: tPunct, text: string(r), pos: start}
	}
	lx.advance()
	lx.failf(start, "unexpected character %q", r)
	return token{kind: tEOF, pos: start}
}

func (lx *lexer) hasPrefix(s string) bool {
	for i, r := range []rune(s) {
		if lx.peekRune(i) != r {
			return false
		}
	}
	return true
}

// restOfLine reads the rest of a directive line (continuations joined,
// comments dropped) and the position where it starts.
func (lx *lexer) restOfLine() (string, schema.Pos) {
	lx.skipSpace(true)
	p := lx.pos
	var sb strings.Builder
	for lx.off < len(lx.src) && lx.src[lx.off] != '\n' && lx.err == nil {
		r := lx.src[lx.off]
		if r == '/' && (lx.peekRune(1) == '/' || lx.peekRune(1) == '*') || r == '\\' && (lx.peekRune(1) == '\n' || lx.peekRune(1) == '\r') {
			at := lx.off
			lx.skipSpace(true)
			sb.WriteByte(' ')
			if lx.off > at {
				continue
			}
		}
		sb.WriteRune(lx.advance())
	}
	return strings.TrimSpace(sb.String()), p
}

// directive handles a preprocessor line; it returns a token for
// #include and #pragma in active code.
func (lx *lexer) directive() (token, bool) {
	hash := lx.pos
	lx.advance()
	lx.skipSpace(true)
	namePos := lx.pos
	b := lx.off
	for lx.off < len(lx.src) && isIdentPart(lx.src[lx.off]) {
		lx.advance()
	}
	name := string(lx.src[b:lx.off])
	lx.bol = false
	switch name {
	case "ifdef", "ifndef", "if":
		rest, p := lx.restOfLine()
		on := lx.active()
		var v bool
		if on {
			v = lx.condition(name, rest, p)
		}
		lx.cond = append(lx.cond, condState{active: on && v, parentOn: on, taken: v, directive: hash})
		return token{}, false
	case "elif", "else":
		rest, p := lx.restOfLine()
		if len(lx.cond) == 0 {
			lx.failf(hash, "#%s without #if", name)
			return token{}, false
		}
		c := &lx.cond[len(lx.cond)-1]
		if c.seenElse {
			lx.failf(hash, "#%s after #else", name)
			return token{}, false
		}
		v := name == "else"
		if name == "elif" && c.parentOn && !c.taken {
			v = lx.condition("if", rest, p)
		}
		c.seenElse = name == "else"
		c.active = c.parentOn && !c.taken && v
		c.taken = c.taken || c.active
		return token{}, false
	case "endif":
		lx.restOfLine()
		if len(lx.cond) == 0 {
			lx.failf(hash, "#endif without #if")
			return token{}, false
		}
		lx.cond = lx.cond[:len(lx.cond)-1]
		return token{}, false
	}
	rest, p := lx.restOfLine()
	if !lx.active() {
		return token{}, false
	}
	switch name {
	case "define":
		sub := newLexer(p.File, []byte(rest), nil)
		sub.pos = p
		sub.bol = false
		if sub.off >= len(sub.src) || !isIdentStart(sub.src[0]) {
			lx.failf(p, "#define needs a macro name")
			return token{}, false
		}
		id := sub.scan()
		if sub.peekRune(0) == '(' {
			lx.failf(id.pos, "function-like macro %s is not supported", id.text)
			return token{}, false
		}
		var body []token
		for {
			t := sub.next()
			if sub.err != nil {
				lx.failf(sub.err.Pos, "%s", sub.err.Msg)
				return token{}, false
			}
			if t.kind == tEOF {
				break
			}
			body = append(body, t)
		}
		lx.macros[id.text] = body
	case "undef":
		delete(lx.macros, strings.TrimSpace(rest))
	case "include":
		switch {
		case len(rest) >= 2 && rest[0] == '"' && strings.IndexByte(rest[1:], '"') > 0:
			return token{kind: tInclude, text: rest[1 : 1+strings.IndexByte(rest[1:], '"')], pos: hash}, true
		case len(rest) >= 2 && rest[0] == '<' && strings.IndexByte(rest, '>') > 1:
			return token{kind: tInclude, text: rest[1:strings.IndexByte(rest, '>')], angle: true, pos: hash}, true
		}
		lx.failf(p, "#include expects \"file\" or <file>")
	case "pragma":
		return token{kind: tPragma, text: rest, pos: hash}, true
	case "error":
		lx.failf(hash, "#error %s", rest)
	case "warning", "line", "":
	default:
		lx.failf(namePos, "unknown preprocessor directive #%s", name)
	}
	return token{}, false
}

// condition evaluates #ifdef X, #ifndef X, and the #if forms "0", "1",
// "defined X", "defined(X)", "!defined X" and a macro's name.
func (lx *lexer) condition(kind, rest string, p schema.Pos) bool {
	f := strings.Fields(rest)
	if len(f) == 0 {
		lx.failf(p, "#%s needs an argument", kind)
		return false
	}
	switch kind {
	case "ifdef":
		_, ok := lx.macros[f[0]]
		return ok
	case "ifndef":
		_, ok := lx.macros[f[0]]
		return !ok
	}
	e := strings.ReplaceAll(rest, " ", "")
	neg := strings.HasPrefix(e, "!")
	e = strings.TrimPrefix(e, "!")
	var v bool
	switch {
	case e == "0":
	case e == "1":
		v = true
	case strings.HasPrefix(e, "defined"):
		n := strings.Trim(strings.TrimPrefix(e, "defined"), "()")
		_, v = lx.macros[n]
	case len(e) > 0 && isIdentStart([]rune(e)[0]):
		body, ok := lx.macros[e]
		v = ok && len(body) == 1 && body[0].text != "0"
	default:
		lx.failf(p, "#if expression %q is not supported (only 0, 1, defined X, !defined X)", rest)
	}
	return v != neg
}
