package port

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seatml/seat/interpreter"
)

// token is one lexical unit of a Python expression.
type token struct {
	kind byte // 's' string, 'n' number, 'i' identifier, 'o' operator or punctuation
	text string
	pos  int
}

// tokenize splits a one-line Python expression.
func tokenize(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '"' || c == '\'':
			if strings.HasPrefix(s[i:], `"""`) || strings.HasPrefix(s[i:], "'''") {
				return nil, hand("a triple-quoted string")
			}
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, hand("a string that does not end on its line")
			}
			out = append(out, token{'s', s[i : j+1], i})
			i = j + 1
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] == '.') {
				j++
			}
			out = append(out, token{'n', s[i:j], i})
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			if (c == 'u' || c == 'r' || c == 'b') && j == i+1 && j < len(s) && (s[j] == '"' || s[j] == '\'') {
				i = j // u"..." and the like: the string follows
				continue
			}
			out = append(out, token{'i', s[i:j], i})
			i = j
		default:
			op := string(c)
			for _, two := range []string{"==", "!=", "<=", ">=", "**", "//", "<>"} {
				if strings.HasPrefix(s[i:], two) {
					op = two
				}
			}
			out = append(out, token{'o', op, i})
			i += len(op)
		}
	}
	return out, nil
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// expr translates a one-line Python expression into Lua.
func expr(s string) (string, error) {
	toks, err := tokenize(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		prev := func() token {
			if i > 0 {
				return toks[i-1]
			}
			return token{}
		}
		next := func(k int) token {
			if i+k < len(toks) {
				return toks[i+k]
			}
			return token{}
		}
		write := func(s string) {
			if b.Len() > 0 && needsSpace(b.String(), s) {
				b.WriteByte(' ')
			}
			b.WriteString(s)
		}
		switch t.kind {
		case 's':
			if next(1).text == "%" { // "fmt" % args
				args, n, err := formatArgs(toks[i+2:])
				if err != nil {
					return "", err
				}
				write("string.format(" + luaString(t.text) + ", " + args + ")")
				i += n // "%" and the arguments
				continue
			}
			write(luaString(t.text))
		case 'n':
			if strings.HasSuffix(t.text, "L") || strings.HasSuffix(t.text, "l") || strings.HasSuffix(t.text, "j") {
				return "", hand("a Python numeric literal (%s)", t.text)
			}
			write(t.text)
		case 'i':
			switch t.text {
			case "True":
				write("true")
			case "False":
				write("false")
			case "None":
				write("nil")
			case "and", "or", "not":
				write(t.text)
			case "is":
				if next(1).text == "not" {
					write("~=")
					i++
				} else {
					write("==")
				}
			case "in", "lambda", "if", "else", "for", "yield", "self":
				return "", hand("%q in an expression", t.text)
			case "str", "unicode", "int", "float", "len", "long":
				if next(1).text != "(" || prev().text == "." {
					write(t.text)
					continue
				}
				inner, n, err := callArgs(toks[i+1:])
				if err != nil {
					return "", err
				}
				switch t.text {
				case "str", "unicode":
					write("tostring(" + inner + ")")
				case "int", "long":
					write("math.floor(tonumber(" + inner + "))")
				case "float":
					write("tonumber(" + inner + ")")
				case "len":
					write("#(" + inner + ")")
				}
				i += n
			case "rtc_in_data", "web_in_data":
				write(t.text)
				if next(1).text == "." && next(2).text == "data" {
					i += 2 // the event text itself
				}
			case "random":
				if next(1).text == "." {
					switch next(2).text {
					case "randint":
						write("math.random")
						i += 2
						continue
					case "random":
						write("math.random")
						i += 2
						continue
					case "uniform":
						inner, n, err := callArgs(toks[i+3:])
						if err != nil {
							return "", err
						}
						args, err := splitArgs(inner)
						if err != nil || len(args) != 2 {
							return "", hand("random.uniform with %d arguments", len(args))
						}
						write(fmt.Sprintf("(%s + math.random() * ((%s) - (%s)))", args[0], args[1], args[0]))
						i += 2 + n
						continue
					}
					return "", hand("random.%s", next(2).text)
				}
				write(t.text)
			case "seat":
				write("seat")
				if next(1).text == "." {
					if to, ok := interpreter.ESEATRenames[next(2).text]; ok {
						write("." + to)
						i += 2
					}
				}
			default:
				if prev().text == "." && next(1).text == "(" {
					switch t.text {
					case "upper", "lower":
						if next(2).text == ")" { // s.upper() is string.upper(s): s:upper() in Lua
							trimDot(&b)
							b.WriteString(":" + t.text + "()")
							i += 2
							continue
						}
					case "strip":
						if next(2).text == ")" {
							trimDot(&b)
							b.WriteString(`:match("^%s*(.-)%s*$")`)
							i += 2
							continue
						}
					}
					switch t.text {
					case "upper", "lower", "strip", "split", "join", "append", "keys", "values", "items", "format", "startswith", "endswith", "replace", "find", "count", "get":
						return "", hand("the Python method .%s()", t.text)
					}
				}
				write(t.text)
			}
		case 'o':
			switch t.text {
			case "!=", "<>":
				write("~=")
			case "**":
				write("^")
			case "//":
				return "", hand("integer division //")
			case "[":
				inner, n, err := bracket(toks[i:], "[", "]")
				if err != nil {
					return "", err
				}
				if p := prev(); p.kind == 'i' && !isKeyword(p.text) || p.text == ")" || p.text == "]" {
					// Indexing: a literal index moves from 0-based to 1-based.
					if strings.Contains(inner, ":") {
						return "", hand("a slice (Lua has string.sub and table.move)")
					}
					k, isInt := strconv.Atoi(strings.TrimSpace(inner))
					if isInt != nil || k < 0 {
						return "", hand("indexing with %q (Python counts from 0, Lua from 1)", strings.TrimSpace(inner))
					}
					b.WriteString("[" + strconv.Itoa(k+1) + "]")
				} else {
					if strings.Contains(inner, ":") {
						return "", hand("a slice or a dictionary")
					}
					write("{" + inner + "}") // a list literal is a table
				}
				i += n - 1
			case "{":
				return "", hand("Python dictionaries")
			case "+":
				// Join when an operand is a string, unless the other is a
				// number: rtc_in_data.data + 1 was arithmetic on TimedLong,
				// and Lua's + turns the event text into a number.
				if (stringOperand(toks, i-1, true) || stringOperand(toks, i+1, false)) && next(1).kind != 'n' && prev().kind != 'n' {
					write("..")
				} else {
					write("+")
				}
			case ".":
				b.WriteString(".")
			case ",", ")":
				b.WriteString(t.text)
			case "(":
				if prev().kind == 'i' || prev().text == ")" {
					b.WriteString("(")
				} else {
					write("(")
				}
			case ";":
				return "", hand("several statements on one line")
			case "`", "@":
				return "", hand("%q", t.text)
			default:
				write(t.text)
			}
		}
	}
	return b.String(), nil
}

// needsSpace decides whether a space goes between the output so far and
// the next piece.
func needsSpace(sofar, next string) bool {
	last := sofar[len(sofar)-1]
	if next == ".." || strings.HasSuffix(sofar, "..") {
		return true
	}
	if last == '(' || last == '.' || last == ' ' || last == '#' || strings.HasPrefix(next, ".") {
		return false
	}
	if next == "," || next == ")" {
		return false
	}
	return true
}

// stringOperand reports whether the operand of "+" at toks[i] (the one
// before when back) is a string: a literal, str(...), or the event text.
func stringOperand(toks []token, i int, back bool) bool {
	if i < 0 || i >= len(toks) {
		return false
	}
	t := toks[i]
	switch {
	case t.kind == 's':
		return true
	case t.kind == 'i' && (t.text == "rtc_in_data" || t.text == "web_in_data"):
		// The event text, or rtc_in_data.data; another field (.tm) is not.
		return back || i+2 >= len(toks) || toks[i+1].text != "." || toks[i+2].text == "data"
	case back && t.text == "data" && i >= 2 && toks[i-1].text == "." && (toks[i-2].text == "rtc_in_data" || toks[i-2].text == "web_in_data"):
		return true // the event text: rtc_in_data.data
	case !back && t.kind == 'i' && (t.text == "str" || t.text == "unicode") && i+1 < len(toks) && toks[i+1].text == "(":
		return true
	case back && t.text == ")":
		// the call that ends here: str(...)?
		depth := 0
		for k := i; k >= 0; k-- {
			switch toks[k].text {
			case ")":
				depth++
			case "(":
				depth--
				if depth == 0 {
					return k > 0 && (toks[k-1].text == "str" || toks[k-1].text == "unicode")
				}
			}
		}
	}
	return false
}

// callArgs translates the parenthesised arguments starting at toks[0] ("(")
// and returns them and how many tokens they took (parentheses included).
func callArgs(toks []token) (string, int, error) { return bracket(toks, "(", ")") }

// formatArgs translates what follows "%": a parenthesised tuple or one
// operand. It returns the arguments and the tokens taken, "%" included.
func formatArgs(toks []token) (string, int, error) {
	if len(toks) == 0 {
		return "", 0, hand("%% without arguments")
	}
	if toks[0].text == "(" {
		inner, n, err := callArgs(toks)
		return inner, n + 1, err
	}
	if toks[0].kind == 'o' {
		return "", 0, hand("%% formatting of %q", toks[0].text)
	}
	// One operand: a name with attributes, or a literal.
	n := 1
	for n+1 < len(toks) && toks[n].text == "." && toks[n+1].kind == 'i' {
		n += 2
	}
	inner, err := exprTokens(toks[:n])
	return inner, n + 1, err
}

// exprTokens translates a token run by rebuilding its text.
func exprTokens(toks []token) (string, error) {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.text)
		b.WriteByte(' ')
	}
	return expr(b.String())
}

// luaString turns a Python string literal into a Lua one; the escapes the
// two share are the same.
func luaString(s string) string {
	if strings.Contains(s, `\x`) || strings.Contains(s, `\u`) {
		return fmt.Sprintf("%s --[[ seat port: check the escapes ]]", s)
	}
	return s
}

// splitArgs splits "a, b, c" at its top-level commas.
func splitArgs(s string) ([]string, error) {
	var out []string
	depth := 0
	for {
		i := indexCode(s, func(c byte) bool {
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
			}
			return c == ',' && depth == 0
		})
		if i < 0 {
			break
		}
		out, s = append(out, strings.TrimSpace(s[:i])), s[i+1:]
	}
	if depth != 0 {
		return nil, hand("unbalanced brackets")
	}
	return append(out, strings.TrimSpace(s)), nil
}

// indexCode returns the index of the first byte outside string literals
// for which stop holds, or -1.
func indexCode(s string, stop func(c byte) bool) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case stop(c):
			return i
		}
	}
	return -1
}

// bracket returns the translated inside of the bracket that opens at
// toks[0] and how many tokens it spans, brackets included.
func bracket(toks []token, open, close string) (string, int, error) {
	depth := 0
	for k, t := range toks {
		switch t.text {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				inner, err := exprTokens(toks[1:k])
				return inner, k + 1, err
			}
		}
	}
	return "", 0, hand("unbalanced brackets")
}

// trimDot removes the "." just written before a method name.
func trimDot(b *strings.Builder) {
	s := strings.TrimSuffix(b.String(), ".")
	b.Reset()
	b.WriteString(s)
}

func isKeyword(s string) bool {
	switch s {
	case "and", "or", "not", "in", "return", "if", "elif", "while", "is":
		return true
	}
	return false
}
