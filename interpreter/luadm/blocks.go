package luadm

import (
	"fmt"
	"strings"
)

// token is a Lua token the block scan looks at: a name or keyword, or a
// bracket, with its place in the placed source (1-based line, byte
// column) and the indentation of its line, in bytes.
type token struct {
	text      string
	line, col int
	indent    int
	first     bool   // it starts its line
	elseIf    bool   // an if holding an "else if", which opened another if
	needsDo   bool   // a for or while whose do has not come
	closeWith string // what closes it: end, until or a bracket
}

// scanTokens returns the names, keywords and brackets of Lua source,
// skipping strings, comments and numbers. It never fails: what it does not
// know it skips.
func scanTokens(src string) []token {
	var out []token
	line, lineStart := 1, 0
	startsLine := true
	indent := 0
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line, lineStart, startsLine = line+1, i+1, true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			if n := longBracket(src[i+2:]); n > 0 {
				i = skipLong(src, i+2, n, &line, &lineStart)
			} else {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			}
			continue
		}
		first := startsLine
		if startsLine {
			indent = i - lineStart
		}
		startsLine = false
		switch {
		case c == '"' || c == '\'':
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' {
					i++
					if i < len(src) && src[i] == '\n' {
						line, lineStart = line+1, i+1
					}
				}
				i++
			}
			i++
		case c == '[' && longBracket(src[i:]) > 0:
			i = skipLong(src, i, longBracket(src[i:]), &line, &lineStart)
		case isNameStart(c):
			j := i
			for j < len(src) && (isNameStart(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, token{text: src[i:j], line: line, col: i - lineStart + 1, indent: indent, first: first})
			i = j
		case c >= '0' && c <= '9':
			for i < len(src) && (isNameStart(src[i]) || src[i] >= '0' && src[i] <= '9' || src[i] == '.') {
				i++
			}
		case strings.IndexByte("({[)}]", c) >= 0:
			out = append(out, token{text: string(c), line: line, col: i - lineStart + 1, indent: indent, first: first})
			i++
		default:
			i++
		}
	}
	return out
}

// longBracket returns the length of the long bracket "[[" or "[==[" that
// s starts with, or 0.
func longBracket(s string) int {
	if !strings.HasPrefix(s, "[") {
		return 0
	}
	n := 1
	for n < len(s) && s[n] == '=' {
		n++
	}
	if n < len(s) && s[n] == '[' {
		return n + 1
	}
	return 0
}

// skipLong skips a long string or comment whose opening bracket of n
// bytes starts at i, counting its lines; it returns the index after it.
func skipLong(src string, i, n int, line, lineStart *int) int {
	closing := "]" + strings.Repeat("=", n-2) + "]"
	for j := i + n; j < len(src); j++ {
		if src[j] == '\n' {
			*line, *lineStart = *line+1, j+1
		}
		if strings.HasPrefix(src[j:], closing) {
			return j + len(closing)
		}
	}
	return len(src)
}

// openBlock is what a block scan finds open at the end of a script: the
// innermost construct with no end (or until, or closing bracket), and
// what helps to say why.
type openBlock struct {
	open token
	// around are the constructs around it left open too, innermost first.
	around []token
	// endAt, when set, is an end that, by its indentation, was meant for
	// the construct lines up with (endFor), not for the one it closed.
	endAt, endFor *token
}

// findUnclosed scans Lua source that ends inside a construct and
// returns the one that most likely lacks its end: the innermost left
// open, unless an end earlier was indented as a construct around the one
// it closed, which then is the one without an end. ok is false when the
// scan finds everything closed.
func findUnclosed(src string) (b openBlock, ok bool) {
	var stack []token
	var prev string
	var suspect *openBlock
	for _, t := range scanTokens(src) {
		word := t.text
		switch word {
		case "function", "if", "repeat", "(", "{", "[":
			if n := len(stack); word == "if" && prev == "else" && n > 0 && stack[n-1].text == "if" {
				stack[n-1].elseIf = true
			}
			t.closeWith = map[string]string{"function": "end", "if": "end", "repeat": "until", "(": ")", "{": "}", "[": "]"}[word]
			stack = append(stack, t)
		case "for", "while":
			t.needsDo, t.closeWith = true, "end"
			stack = append(stack, t)
		case "do":
			if n := len(stack); n > 0 && stack[n-1].needsDo {
				stack[n-1].needsDo = false
			} else {
				t.closeWith = "end"
				stack = append(stack, t)
			}
		case "end", "until", ")", "}", "]":
			// Pop to the innermost construct this closes.
			k := len(stack) - 1
			for k >= 0 && stack[k].closeWith != word {
				k--
			}
			if k < 0 {
				break // an error the parser reports itself
			}
			if word == "end" && suspect == nil && t.first {
				// An end indented as a construct further out than the
				// one it closes was meant for that one: the constructs
				// in between lack their end.
				if top := stack[k]; top.indent > t.indent {
					for m := k - 1; m >= 0; m-- {
						if stack[m].indent == t.indent && stack[m].closeWith == "end" {
							at, meant := t, stack[m]
							suspect = &openBlock{open: top, endAt: &at, endFor: &meant}
							for q := k - 1; q > m; q-- {
								suspect.around = append(suspect.around, stack[q])
							}
							stack = stack[:m] // both closed, as meant
							k = -1
							break
						}
					}
				}
			}
			if k >= 0 {
				stack = stack[:k]
			}
		}
		prev = word
	}
	if suspect != nil {
		return *suspect, true
	}
	if len(stack) == 0 {
		return openBlock{}, false
	}
	b.open = stack[len(stack)-1]
	for q := len(stack) - 2; q >= 0; q-- {
		b.around = append(b.around, stack[q])
	}
	return b, true
}

// unclosedMessage says which construct a script that ends too soon left
// open, at its line and column (at converts a token's place in the placed
// source to a position in the file).
func unclosedMessage(src string, at func(t token) string) string {
	b, ok := findUnclosed(src)
	if !ok {
		return ""
	}
	what := func(t token) string {
		if t.closeWith == "end" || t.closeWith == "until" {
			return fmt.Sprintf("%q at %s", t.text, at(t))
		}
		return fmt.Sprintf("the %q at %s", t.text, at(t))
	}
	var msg string
	switch {
	case b.endAt != nil:
		msg = fmt.Sprintf("%s has no end (the end at %s is indented for %s)", what(b.open), at(*b.endAt), what(*b.endFor))
	case b.open.closeWith == "end" || b.open.closeWith == "until":
		msg = fmt.Sprintf("%s has no %s", what(b.open), b.open.closeWith)
	default:
		msg = fmt.Sprintf("%s is not closed with %q", what(b.open), b.open.closeWith)
	}
	if len(b.around) > 0 && b.endAt == nil {
		var outer []string
		for _, t := range b.around {
			if t.closeWith == "end" || t.closeWith == "until" {
				outer = append(outer, what(t))
			}
		}
		if len(outer) > 0 {
			msg += " (nor has " + strings.Join(outer, ", ") + ")"
		}
	}
	if b.open.elseIf {
		msg += `; "else if" opens a new if, which needs an end of its own: write elseif`
	}
	return msg
}

// elifAt returns the first token "elif" of Lua source, which Python
// writes for Lua's elseif.
func elifAt(src string) (token, bool) {
	for _, t := range scanTokens(src) {
		if t.text == "elif" {
			return t, true
		}
	}
	return token{}, false
}
