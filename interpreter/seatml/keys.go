package seatml

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxWords bounds how many words one key may expand to.
const MaxWords = 4096

// KeyError is a key expansion error at a byte offset of the key text.
type KeyError struct {
	Offset int
	Msg    string
}

func (e *KeyError) Error() string { return e.Msg }

// ExpandKey expands a trimmed key text into its words (SEATML §4): "(a|b)"
// is one of the alternatives, "[x]" makes x optional, both nest, and a
// backslash escapes the next character (kept in the word, for the pattern).
func ExpandKey(key string) ([]string, error) {
	if key == "" {
		return nil, &KeyError{Offset: 0, Msg: "empty key"}
	}
	p := &keyParser{s: key}
	words, err := p.seq(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.s) {
		return nil, &KeyError{Offset: p.i, Msg: fmt.Sprintf("unexpected %q", p.s[p.i])} // ) ] or |: ASCII
	}
	for _, w := range words {
		if w == "" {
			return nil, &KeyError{Offset: 0, Msg: "expands to an empty word"}
		}
	}
	return words, nil
}

type keyParser struct {
	s string
	i int
}

// seq parses items until a closing or separating character; depth tells
// whether one is expected.
func (p *keyParser) seq(depth int) ([]string, error) {
	words := []string{""}
	for p.i < len(p.s) {
		c := p.s[p.i]
		var alts []string
		switch c {
		case ')', ']', '|':
			if depth == 0 {
				return nil, &KeyError{Offset: p.i, Msg: fmt.Sprintf("unexpected %q", c)}
			}
			return words, nil
		case '(':
			open := p.i
			p.i++
			for {
				alt, err := p.seq(depth + 1)
				if err != nil {
					return nil, err
				}
				alts = append(alts, alt...)
				if len(alts) > MaxWords {
					return nil, &KeyError{Offset: 0, Msg: fmt.Sprintf("expands to more than %d words", MaxWords)}
				}
				if p.i >= len(p.s) || p.s[p.i] == ']' {
					return nil, &KeyError{Offset: open, Msg: `unclosed "("`}
				}
				sep := p.s[p.i]
				p.i++
				if sep == ')' {
					break
				}
			}
			// A group whose every alternative is a pattern stays a group,
			// and captures (event.captures); one with a plain alternative
			// expands into words, so that the plain ones keep the exact
			// pass of §5.
			if !slices.ContainsFunc(alts, isPlain) {
				alts = []string{"(" + strings.Join(alts, "|") + ")"}
			}
		case '[':
			open := p.i
			p.i++
			inner, err := p.seq(depth + 1)
			if err != nil {
				return nil, err
			}
			if p.i >= len(p.s) || p.s[p.i] != ']' {
				return nil, &KeyError{Offset: open, Msg: `unclosed "["`}
			}
			p.i++
			alts = append([]string{""}, inner...)
		case '\\':
			// The backslash and the whole character after it, which may
			// take several bytes (\。 escapes nothing but must not split).
			_, n := utf8.DecodeRuneInString(p.s[p.i+1:])
			end := p.i + 1 + n
			alts = []string{p.s[p.i:end]}
			p.i = end
		default:
			// One character, not one byte: keys are UTF-8 text.
			_, n := utf8.DecodeRuneInString(p.s[p.i:])
			alts = []string{p.s[p.i : p.i+n]}
			p.i += n
		}
		if len(words)*len(alts) > MaxWords {
			return nil, &KeyError{Offset: 0, Msg: fmt.Sprintf("expands to more than %d words", MaxWords)}
		}
		next := make([]string, 0, len(words)*len(alts))
		for _, w := range words {
			for _, a := range alts {
				next = append(next, w+a)
			}
		}
		words = next
	}
	return words, nil
}

// isPlain reports whether a word has no pattern metacharacters, so it
// matches as a plain prefix.
func isPlain(w string) bool { return !strings.ContainsAny(w, `\.+*?{}^$`) }

// compileWord compiles a word as a start-anchored RE2 pattern. Plain words
// give a nil regexp.
func compileWord(w string) (*regexp.Regexp, error) {
	if isPlain(w) {
		return nil, nil
	}
	w = unescapeNonASCII(w)
	if _, err := syntax.Parse(w, syntax.Perl); err != nil {
		if se, ok := err.(*syntax.Error); ok {
			return nil, fmt.Errorf("%s: `%s`", se.Code, se.Expr)
		}
		return nil, err
	}
	if err := checkBraces(w); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + w + `)`)
}

// unescapeNonASCII drops a backslash before a non-ASCII character: such a
// character is never a metacharacter, Python's re (eSEAT's) reads "\。" as
// "。", and RE2 would refuse the escape.
func unescapeNonASCII(w string) string {
	if !strings.Contains(w, `\`) {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] == '\\' && i+1 < len(w) {
			if w[i+1] >= utf8.RuneSelf {
				continue // the character itself follows
			}
			b.WriteByte(w[i])
			i++
		}
		b.WriteByte(w[i])
	}
	return b.String()
}

// checkBraces refuses a "{" that does not start a repeat count: RE2 reads
// it as a literal, which hides typos such as "a{2".
func checkBraces(w string) error {
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '\\':
			i++
			if i < len(w) && (w[i] == 'p' || w[i] == 'P') && i+1 < len(w) && w[i+1] == '{' {
				if end := strings.IndexByte(w[i:], '}'); end > 0 {
					i += end // a Unicode class such as \p{Han}
				}
			}
		case '{':
			end, closed, digits := repeatCount(w, i)
			if !closed || digits == 0 {
				return fmt.Errorf("invalid repeat count: `%s`; write \\{ for a literal brace", w[i:min(end+1, len(w))])
			}
			i = end
		}
	}
	return nil
}

// repeatCount reads the repeat count ({n}, {n,} or {n,m}) that opens at
// w[i]: end is the index of its '}' when closed, else of the first byte
// that is no digit or comma; digits counts its digits.
func repeatCount(w string, i int) (end int, closed bool, digits int) {
	end = i + 1
	for end < len(w) && (w[end] >= '0' && w[end] <= '9' || w[end] == ',') {
		if w[end] != ',' {
			digits++
		}
		end++
	}
	return end, end < len(w) && w[end] == '}', digits
}

// hasLiteralComma reports whether a key word holds a comma that must match
// the text, not one inside a repeat count such as {1,3}.
func hasLiteralComma(w string) bool {
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '\\':
			if i+1 < len(w) && w[i+1] == ',' {
				return true
			}
			i++
		case '{':
			if end, closed, _ := repeatCount(w, i); closed {
				i = end
			}
		case ',':
			return true
		}
	}
	return false
}
