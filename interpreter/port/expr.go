package port

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/seatml/seat/interpreter/seatml"
)

// Python expressions are parsed into a tree and written back as Lua that
// computes the same value. Where Lua's meaning differs (truth of 0 and "",
// strings counted in bytes, int() rounding down, "+" on two strings) the
// Lua goes through the py table (interpreter/luadm/py.go); what has no
// equivalent is an error that leaves the statement for hand work.

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
			for j < len(s) && (isWordByte(s[j]) || s[j] == '.' || (s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E') && !strings.HasPrefix(s[i:], "0x")) {
				j++
			}
			out = append(out, token{'n', s[i:j], i})
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') && j-i <= 2 && strings.Trim(strings.ToLower(s[i:j]), "urbf") == "" {
				// A prefixed string (u"…", r"…"): the prefix goes with it.
				k := j + 1
				for k < len(s) && s[k] != s[j] {
					if s[k] == '\\' {
						k++
					}
					k++
				}
				if k >= len(s) {
					return nil, hand("a string that does not end on its line")
				}
				out = append(out, token{'s', s[i : k+1], i})
				i = k + 1
				continue
			}
			out = append(out, token{'i', s[i:j], i})
			i = j
		default:
			op := string(c)
			for _, two := range []string{"==", "!=", "<=", ">=", "**", "//", "<>", "<<", ">>"} {
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

// node is a parsed Python expression.
type node struct {
	op   string  // "name", "num", "str", "list", "tuple", "attr", "call", "index", "slice", "bin", "unary", "not", "and", "or", "cmp"
	text string  // a name, a number, a string's value, an operator, an attribute
	kids []*node // operands, arguments (call: kids[0] is the function)
	ops  []string
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return token{}
}

func (p *parser) next() token { t := p.peek(); p.i++; return t }

func (p *parser) accept(text string) bool {
	if t := p.peek(); t.text == text && t.kind != 's' {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(text string) error {
	if !p.accept(text) {
		return hand("an expression seat port cannot read (want %q at %q)", text, p.peek().text)
	}
	return nil
}

// parse reads a whole expression (a tuple if there are top-level commas).
func parse(s string) (*node, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.testlist()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, hand("an expression seat port cannot read (at %q)", p.peek().text)
	}
	return n, nil
}

func (p *parser) testlist() (*node, error) {
	first, err := p.test()
	if err != nil {
		return nil, err
	}
	if p.peek().text != "," {
		return first, nil
	}
	t := &node{op: "tuple", kids: []*node{first}}
	for p.accept(",") {
		if p.i >= len(p.toks) || p.peek().text == ")" {
			break
		}
		n, err := p.test()
		if err != nil {
			return nil, err
		}
		t.kids = append(t.kids, n)
	}
	return t, nil
}

func (p *parser) test() (*node, error) {
	if p.peek().text == "lambda" {
		return nil, hand("lambda")
	}
	n, err := p.orTest()
	if err != nil {
		return nil, err
	}
	if p.peek().text == "if" {
		return nil, hand("a conditional expression (x if c else y)")
	}
	return n, nil
}

func (p *parser) orTest() (*node, error) {
	return p.boolChain("or", p.andTest)
}

func (p *parser) andTest() (*node, error) {
	return p.boolChain("and", p.notTest)
}

func (p *parser) boolChain(op string, sub func() (*node, error)) (*node, error) {
	n, err := sub()
	if err != nil {
		return nil, err
	}
	if p.peek().text != op {
		return n, nil
	}
	b := &node{op: op, kids: []*node{n}}
	for p.accept(op) {
		k, err := sub()
		if err != nil {
			return nil, err
		}
		b.kids = append(b.kids, k)
	}
	return b, nil
}

func (p *parser) notTest() (*node, error) {
	if p.accept("not") {
		n, err := p.notTest()
		if err != nil {
			return nil, err
		}
		return &node{op: "not", kids: []*node{n}}, nil
	}
	return p.comparison()
}

func (p *parser) comparison() (*node, error) {
	n, err := p.arith()
	if err != nil {
		return nil, err
	}
	c := &node{op: "cmp", kids: []*node{n}}
	for {
		t := p.peek()
		op := ""
		switch {
		case t.kind == 'o' && (t.text == "<" || t.text == ">" || t.text == "==" || t.text == ">=" || t.text == "<=" || t.text == "!=" || t.text == "<>"):
			p.i++
			op = t.text
		case t.text == "in" && t.kind == 'i':
			p.i++
			op = "in"
		case t.text == "not" && p.i+1 < len(p.toks) && p.toks[p.i+1].text == "in":
			p.i += 2
			op = "not in"
		case t.text == "is" && t.kind == 'i':
			p.i++
			op = "is"
			if p.accept("not") {
				op = "is not"
			}
		}
		if op == "" {
			break
		}
		k, err := p.arith()
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, op)
		c.kids = append(c.kids, k)
	}
	if len(c.ops) == 0 {
		return n, nil
	}
	return c, nil
}

func (p *parser) arith() (*node, error) {
	return p.binary([]string{"+", "-"}, p.term)
}

func (p *parser) term() (*node, error) {
	return p.binary([]string{"*", "/", "//", "%"}, p.factor)
}

func (p *parser) binary(ops []string, sub func() (*node, error)) (*node, error) {
	n, err := sub()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != 'o' {
			return n, nil
		}
		switch t.text {
		case "|", "&", "^", "<<", ">>", "~":
			return nil, hand("bitwise operators")
		}
		found := false
		for _, op := range ops {
			if t.text == op {
				found = true
			}
		}
		if !found {
			return n, nil
		}
		p.i++
		r, err := sub()
		if err != nil {
			return nil, err
		}
		n = &node{op: "bin", text: t.text, kids: []*node{n, r}}
	}
}

func (p *parser) factor() (*node, error) {
	if t := p.peek(); t.kind == 'o' && (t.text == "-" || t.text == "+") {
		p.i++
		n, err := p.factor()
		if err != nil {
			return nil, err
		}
		return &node{op: "unary", text: t.text, kids: []*node{n}}, nil
	}
	return p.power()
}

func (p *parser) power() (*node, error) {
	n, err := p.atomExpr()
	if err != nil {
		return nil, err
	}
	if p.accept("**") {
		r, err := p.factor()
		if err != nil {
			return nil, err
		}
		return &node{op: "bin", text: "**", kids: []*node{n, r}}, nil
	}
	return n, nil
}

func (p *parser) atomExpr() (*node, error) {
	n, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.accept("("):
			c := &node{op: "call", kids: []*node{n}}
			for !p.accept(")") {
				if p.i >= len(p.toks) {
					return nil, hand("unbalanced brackets")
				}
				if t := p.peek(); t.text == "*" || t.text == "**" || t.kind == 'i' && p.i+1 < len(p.toks) && p.toks[p.i+1].text == "=" {
					return nil, hand("keyword or starred arguments")
				}
				a, err := p.test()
				if err != nil {
					return nil, err
				}
				c.kids = append(c.kids, a)
				if !p.accept(",") {
					if err := p.expect(")"); err != nil {
						return nil, err
					}
					break
				}
			}
			n = c
		case p.accept("["):
			var lo, hi *node
			slice := false
			if !p.accept(":") {
				if lo, err = p.test(); err != nil {
					return nil, err
				}
				slice = p.accept(":")
			} else {
				slice = true
			}
			if slice && p.peek().text != "]" {
				if p.peek().text == ":" {
					return nil, hand("a slice with a step")
				}
				if hi, err = p.test(); err != nil {
					return nil, err
				}
			}
			if p.peek().text == ":" {
				return nil, hand("a slice with a step")
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			if slice {
				n = &node{op: "slice", kids: []*node{n, lo, hi}}
			} else {
				n = &node{op: "index", kids: []*node{n, lo}}
			}
		case p.accept("."):
			t := p.next()
			if t.kind != 'i' {
				return nil, hand("an attribute seat port cannot read")
			}
			n = &node{op: "attr", text: t.text, kids: []*node{n}}
		default:
			return n, nil
		}
	}
}

func (p *parser) atom() (*node, error) {
	t := p.next()
	switch t.kind {
	case 'n':
		return &node{op: "num", text: t.text}, nil
	case 's':
		v, err := pyStringValue(t.text)
		if err != nil {
			return nil, err
		}
		for p.peek().kind == 's' { // "a" "b" is one string
			w, err := pyStringValue(p.next().text)
			if err != nil {
				return nil, err
			}
			v += w
		}
		return &node{op: "str", text: v}, nil
	case 'i':
		switch t.text {
		case "lambda", "yield", "await", "if", "else", "for":
			return nil, hand("%q in an expression", t.text)
		}
		return &node{op: "name", text: t.text}, nil
	}
	switch t.text {
	case "(":
		if p.accept(")") {
			return nil, hand("an empty tuple")
		}
		n, err := p.testlist()
		if err != nil {
			return nil, err
		}
		if p.peek().text == "for" {
			return nil, hand("a generator expression")
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		if n.op != "tuple" {
			return &node{op: "paren", kids: []*node{n}}, nil
		}
		return n, nil
	case "[":
		l := &node{op: "list"}
		for !p.accept("]") {
			if p.i >= len(p.toks) {
				return nil, hand("unbalanced brackets")
			}
			a, err := p.test()
			if err != nil {
				return nil, err
			}
			if p.peek().text == "for" {
				return nil, hand("a list comprehension")
			}
			l.kids = append(l.kids, a)
			if !p.accept(",") {
				if err := p.expect("]"); err != nil {
					return nil, err
				}
				break
			}
		}
		return l, nil
	case "{":
		return nil, hand("Python dictionaries and sets")
	case "`", "@":
		return nil, hand("%q", t.text)
	case ";":
		return nil, hand("several statements on one line")
	}
	return nil, hand("an expression seat port cannot read (at %q)", t.text)
}

// kind is what seat port knows of a value's Python type.
type kind int

const (
	kAny   kind = iota
	kNum        // an int (or a float whose printing does not matter)
	kFloat      // a Python float: str() writes 3.0, not 3
	kMixed      // a number that is an int or a float by its value: max(1.0, 2) is the int 2
	kStr
	kText // the event text: rtc_in_data, which eSEAT's TimedLong made a number
	kBool
	kList
	kNil
)

func (k kind) numeric() bool { return k == kNum || k == kFloat || k == kMixed }

// errMixed is the hand work for printing a number that may be an int or a
// float: how Python prints it (2 or 2.0) depends on values the port cannot
// see, and Lua's numbers do not tell them apart.
var errMixed = hand("printing a min() or max() of ints and floats: Python returns the argument itself, so max(1.0, 2) prints 2 and max(1, 2.0) prints 2.0, and Lua's numbers do not tell ints from floats")

// Lua precedences, for parentheses.
const (
	precOr = iota + 1
	precAnd
	precCmp
	precConcat
	precAdd
	precMul
	precUnary
	precPow
	precAtom
)

// lua is translated Lua: its code, what is known of its value, and its
// precedence.
type lua struct {
	code string
	kind kind
	prec int
	// multi: a call of a function that may return other than one value
	// (a function of the script's own, most of seat's).
	multi bool
}

func atomic(code string, k kind) lua { return lua{code: code, kind: k, prec: precAtom} }

// wrap parenthesizes e when it binds less tightly than prec.
func (e lua) wrap(prec int) string {
	if e.prec < prec {
		return "(" + e.code + ")"
	}
	return e.code
}

// luaKeywords are names Lua reserves that Python does not.
var luaKeywords = map[string]bool{"end": true, "local": true, "then": true, "repeat": true, "until": true, "function": true, "nil": true, "elseif": true, "do": true, "goto": true, "true": true, "false": true}

// maxExact is 2^53: Lua's numbers are doubles, which hold every integer
// up to it and not every one past it; Python's integers have no limit.
var maxExact = new(big.Int).Lsh(big.NewInt(1), 53)

// errPast53 is the hand work for an integer past 2^53.
func errPast53(what string) error {
	return hand("an integer past 2^53 (%s): Lua's numbers are doubles, exact only up to 2^53, and print past 1e16 as 1e+16", what)
}

// constInt is the value of an integer expression made of literals (1 << 60
// as 2 ** 60, 2 ** 53 + 1), computed as Python does; ok is false for
// anything else (a name, a float, a true division).
func constInt(n *node) (v *big.Int, ok bool) {
	switch n.op {
	case "num":
		return intLiteral(n.text)
	case "paren":
		return constInt(n.kids[0])
	case "unary":
		x, ok := constInt(n.kids[0])
		if !ok {
			return nil, false
		}
		if n.text == "-" {
			x = new(big.Int).Neg(x)
		}
		return x, true
	case "bin":
		a, ok := constInt(n.kids[0])
		if !ok {
			return nil, false
		}
		b, ok := constInt(n.kids[1])
		if !ok {
			return nil, false
		}
		r := new(big.Int)
		switch n.text {
		case "+":
			return r.Add(a, b), true
		case "-":
			return r.Sub(a, b), true
		case "*":
			return r.Mul(a, b), true
		case "//", "%":
			if b.Sign() == 0 {
				return nil, false
			}
			q, m := new(big.Int).DivMod(a, b, new(big.Int)) // Euclidean: m >= 0
			if m.Sign() != 0 && b.Sign() < 0 {              // Python's floor division
				q.Sub(q, big.NewInt(1))
				m.Add(m, b)
			}
			if n.text == "%" {
				return m, true
			}
			return q, true
		case "**":
			switch {
			case b.Sign() < 0: // a float in Python
				return nil, false
			case b.Cmp(big.NewInt(64)) > 0 && a.CmpAbs(big.NewInt(1)) > 0:
				return new(big.Int).Lsh(maxExact, 1), true // past 2^53 without computing it
			}
			return r.Exp(a, b, nil), true
		}
	}
	return nil, false
}

// intLiteral reads a Python integer literal (decimal, 0x, 0o, 0b, Python
// 2's 017, with _ separators); ok is false for a float or a suffixed one.
func intLiteral(text string) (*big.Int, bool) {
	t := strings.ReplaceAll(strings.ToLower(text), "_", "")
	base := 10
	switch {
	case strings.HasPrefix(t, "0x"):
		base, t = 16, t[2:]
	case strings.HasPrefix(t, "0o"):
		base, t = 8, t[2:]
	case strings.HasPrefix(t, "0b"):
		base, t = 2, t[2:]
	case len(t) > 1 && t[0] == '0' && !strings.ContainsAny(t, ".e"):
		base, t = 8, t[1:]
	}
	v, ok := new(big.Int).SetString(t, base)
	return v, ok
}

// value translates an expression whose value is used.
func value(n *node) (lua, error) {
	switch n.op {
	case "bin", "unary":
		// Integers past 2^53 that the port can see: a Lua double would
		// round them (2 ** 53 + 1) or print them otherwise (2 ** 60).
		if v, ok := constInt(n); ok && v.CmpAbs(maxExact) > 0 {
			return lua{}, errPast53(v.String())
		}
	}
	switch n.op {
	case "num":
		if v, ok := intLiteral(n.text); ok && v.CmpAbs(maxExact) > 0 {
			return lua{}, errPast53(n.text)
		}
		t := strings.ToLower(n.text)
		switch {
		case strings.HasSuffix(t, "l") || strings.HasSuffix(t, "j"):
			return lua{}, hand("a Python numeric literal (%s)", n.text)
		case strings.HasPrefix(t, "0x"):
			v, err := strconv.ParseInt(t[2:], 16, 64)
			if err != nil {
				return lua{}, hand("a number seat port cannot read (%s)", n.text)
			}
			return atomic(strconv.FormatInt(v, 10), kNum), nil
		case strings.HasPrefix(t, "0o") || strings.HasPrefix(t, "0b") || len(t) > 1 && t[0] == '0' && !strings.ContainsAny(t, ".e"):
			base := map[byte]int{'o': 8, 'b': 2}[t[1]]
			digits := t[2:]
			if base == 0 {
				base, digits = 8, t[1:] // Python 2's 017
			}
			v, err := strconv.ParseInt(digits, base, 64)
			if err != nil {
				return lua{}, hand("a number seat port cannot read (%s)", n.text)
			}
			return atomic(strconv.FormatInt(v, 10), kNum), nil
		case strings.ContainsAny(t, ".e"):
			return atomic(n.text, kFloat), nil
		}
		return atomic(strings.ReplaceAll(n.text, "_", ""), kNum), nil
	case "str":
		return atomic(luaQuote(n.text), kStr), nil
	case "name":
		switch n.text {
		case "True":
			return atomic("true", kBool), nil
		case "False":
			return atomic("false", kBool), nil
		case "None":
			return atomic("nil", kNil), nil
		case "rtc_in_data", "web_in_data":
			return atomic(n.text, kText), nil
		case "seat_argv":
			// eSEAT's arguments of a ROS request or callback: the
			// request (or goal) is seat's event data.
			return atomic("{rtc_in_data}", kAny), nil
		case "__retval__":
			// eSEAT's result of a rule answering a ROS request.
			return atomic("rtc_result", kAny), nil
		case "self":
			return lua{}, hand("self (eSEAT's adaptor object)")
		}
		if luaKeywords[n.text] {
			return lua{}, hand("the name %q, which Lua reserves", n.text)
		}
		return atomic(n.text, kAny), nil
	case "paren":
		v, err := value(n.kids[0])
		v.prec = precAtom
		v.code = "(" + v.code + ")"
		v.multi = false // in parentheses, one value
		return v, err
	case "list":
		var parts []string
		for _, k := range n.kids {
			v, err := value(k)
			if err != nil {
				return lua{}, err
			}
			if v.kind == kNil {
				return lua{}, hand("a list holding None (a Lua table cannot hold nil)")
			}
			parts = append(parts, v.code)
		}
		return atomic("{"+strings.Join(parts, ", ")+"}", kList), nil
	case "tuple":
		return lua{}, hand("a tuple")
	case "attr":
		return attr(n)
	case "call":
		return call(n)
	case "index":
		x, err := value(n.kids[0])
		if err != nil {
			return lua{}, err
		}
		k, err := value(n.kids[1])
		if err != nil {
			return lua{}, err
		}
		out := kAny
		if x.kind == kStr || x.kind == kText {
			out = kStr
		}
		return atomic("py.index("+x.code+", "+k.code+")", out), nil
	case "slice":
		x, err := value(n.kids[0])
		if err != nil {
			return lua{}, err
		}
		bounds := []string{x.code}
		for _, b := range n.kids[1:] {
			if b == nil {
				bounds = append(bounds, "nil")
				continue
			}
			v, err := value(b)
			if err != nil {
				return lua{}, err
			}
			bounds = append(bounds, v.code)
		}
		out := kAny
		switch x.kind {
		case kStr, kText:
			out = kStr
		case kList:
			out = kList
		}
		return atomic("py.slice("+strings.Join(bounds, ", ")+")", out), nil
	case "unary":
		v, err := value(n.kids[0])
		if err != nil {
			return lua{}, err
		}
		if n.text == "+" {
			return v, nil
		}
		return lua{"-" + v.wrap(precUnary), v.kind, precUnary, false}, nil
	case "not":
		c, err := cond(n.kids[0])
		if err != nil {
			return lua{}, err
		}
		return lua{"not " + c.wrap(precUnary), kBool, precUnary, false}, nil
	case "and", "or":
		// As a value, Python's "x or y" is x itself when x is true: only
		// booleans mean the same in Lua.
		var parts []string
		for _, k := range n.kids {
			v, err := value(k)
			if err != nil {
				return lua{}, err
			}
			if v.kind != kBool {
				return lua{}, hand("%q on values that are not True or False (Python's 0 and \"\" are false, Lua's are true): write an if", n.op)
			}
			parts = append(parts, v.wrap(map[string]int{"and": precAnd, "or": precOr}[n.op]+1))
		}
		return lua{strings.Join(parts, " "+n.op+" "), kBool, map[string]int{"and": precAnd, "or": precOr}[n.op], false}, nil
	case "cmp":
		return compare(n)
	case "bin":
		return binary(n)
	}
	return lua{}, hand("an expression seat port cannot read")
}

// values translates a list of arguments.
func values(ns []*node) ([]string, error) {
	out := make([]string, len(ns))
	for i, k := range ns {
		v, err := value(k)
		if err != nil {
			return nil, err
		}
		out[i] = lastArg(v, i == len(ns)-1)
	}
	return out, nil
}

// lastArg writes an argument. A Python call is one value, None when the
// function returns nothing; a Lua call last in an argument list is all
// the values it returns, none at all when it returns nothing, so that
// print(f()) would print an empty line, not None. In parentheses a Lua
// call is exactly one value (nil for none). Calls the port knows return
// one value (py.str, math.floor, seat.now, ...) need none.
func lastArg(v lua, last bool) string {
	if last && v.multi {
		return "(" + v.code + ")"
	}
	return v.code
}

// cond translates an expression whose truth is tested (if, while, a cond,
// not): Python's falsy 0, "" and empty lists are tested with py.truthy.
func cond(n *node) (lua, error) {
	switch n.op {
	case "and", "or":
		prec := map[string]int{"and": precAnd, "or": precOr}[n.op]
		var parts []string
		for _, k := range n.kids {
			c, err := cond(k)
			if err != nil {
				return lua{}, err
			}
			parts = append(parts, c.wrap(prec+1))
		}
		return lua{strings.Join(parts, " "+n.op+" "), kBool, prec, false}, nil
	case "paren":
		c, err := cond(n.kids[0])
		return lua{"(" + c.code + ")", kBool, precAtom, false}, err
	}
	v, err := value(n)
	if err != nil {
		return lua{}, err
	}
	if v.kind == kBool {
		return v, nil
	}
	return atomic("py.truthy("+v.code+")", kBool), nil
}

func compare(n *node) (lua, error) {
	var parts []string
	for i, op := range n.ops {
		if i > 0 && !simple(n.kids[i]) {
			return lua{}, hand("a chained comparison around an expression (%s … %s …): write it with and", n.ops[i-1], op)
		}
		a, err := value(n.kids[i])
		if err != nil {
			return lua{}, err
		}
		b, err := value(n.kids[i+1])
		if err != nil {
			return lua{}, err
		}
		var part string
		switch op {
		case "in", "not in":
			part = "py.contains(" + b.code + ", " + a.code + ")"
			if op == "not in" {
				part = "not " + part
			}
		case "==", "!=", "<>":
			if (a.kind == kAny || a.kind == kList) && (b.kind == kAny || b.kind == kList) {
				// Lua compares tables by identity, Python lists by value.
				part = "py.eq(" + a.code + ", " + b.code + ")"
				if op != "==" {
					part = "not " + part
				}
				break
			}
			fallthrough
		default:
			lop := map[string]string{"!=": "~=", "<>": "~=", "is": "==", "is not": "~="}[op]
			if lop == "" {
				lop = op
			}
			part = a.wrap(precConcat) + " " + lop + " " + b.wrap(precConcat)
		}
		parts = append(parts, part)
	}
	if len(parts) == 1 {
		return lua{parts[0], kBool, precCmp, false}, nil
	}
	return lua{strings.Join(parts, " and "), kBool, precAnd, false}, nil
}

// simple reports whether evaluating n twice is harmless (a name or a
// literal), so that a < b < c may become a < b and b < c.
func simple(n *node) bool { return n.op == "name" || n.op == "num" || n.op == "str" }

func binary(n *node) (lua, error) {
	a, err := value(n.kids[0])
	if err != nil {
		return lua{}, err
	}
	if n.text == "%" && n.kids[1].op == "tuple" { // "fmt" % (a, b)
		if a.kind != kStr && a.kind != kText {
			return lua{}, hand("%% of a tuple on what may not be a format string")
		}
		vs, err := values(n.kids[1].kids)
		if err != nil {
			return lua{}, err
		}
		return atomic("py.format("+strings.Join(append([]string{a.code}, vs...), ", ")+")", kStr), nil
	}
	b, err := value(n.kids[1])
	if err != nil {
		return lua{}, err
	}
	num := func(op string, prec int, k kind) lua {
		right := prec + 1
		if op == "^" {
			right = prec // right-associative
		}
		left := prec
		if op == "^" {
			left = prec + 1
		}
		return lua{a.wrap(left) + " " + op + " " + b.wrap(right), k, prec, false}
	}
	numKind := func() kind {
		switch {
		case a.kind == kFloat || b.kind == kFloat:
			return kFloat
		case a.kind == kMixed || b.kind == kMixed:
			return kMixed
		}
		return kNum
	}
	pyCall := func(fn string, k kind) lua { return atomic(fn+"("+a.code+", "+b.code+")", k) }
	switch n.text {
	case "+":
		// Python adds numbers only to numbers and strings only to
		// strings: one operand known tells what the other is.
		switch {
		case a.kind.numeric() || b.kind.numeric():
			return num("+", precAdd, numKind()), nil
		case a.kind == kStr || b.kind == kStr || a.kind == kText || b.kind == kText:
			// Python adds strings only to strings: this is a join.
			// (Joining is associative: a .. b .. c needs no parentheses.)
			return lua{a.wrap(precConcat) + " .. " + b.wrap(precConcat), kStr, precConcat, false}, nil
		case a.kind == kList || b.kind == kList:
			return pyCall("py.add", kList), nil
		}
		return pyCall("py.add", kAny), nil
	case "-":
		return num("-", precAdd, numKind()), nil
	case "*":
		switch {
		case a.kind.numeric() && b.kind.numeric():
			return num("*", precMul, numKind()), nil
		case (a.kind == kStr || a.kind == kText) && b.kind.numeric():
			return atomic("string.rep("+a.code+", "+b.code+")", kStr), nil
		}
		return pyCall("py.mul", kAny), nil
	case "/":
		return num("/", precMul, kFloat), nil
	case "//":
		return atomic("math.floor("+a.wrap(precMul)+" / "+b.wrap(precMul+1)+")", numKind()), nil
	case "%":
		if a.kind == kStr || a.kind == kText {
			if b.kind == kList || b.kind == kAny {
				return atomic("py.mod("+a.code+", "+b.code+")", kStr), nil // a tuple in a variable, or one value
			}
			return atomic("py.format("+a.code+", "+b.code+")", kStr), nil
		}
		if a.kind.numeric() && b.kind.numeric() {
			return num("%", precMul, numKind()), nil
		}
		return pyCall("py.mod", kAny), nil
	case "**":
		return num("^", precPow, numKind()), nil
	}
	return lua{}, hand("the operator %s", n.text)
}

func attr(n *node) (lua, error) {
	obj := n.kids[0]
	if obj.op == "name" {
		switch obj.text {
		case "rtc_in_data", "web_in_data":
			if n.text == "data" {
				return atomic(obj.text, kText), nil // the event text itself
			}
		case "math":
			switch n.text {
			case "pi", "e":
				return atomic("math."+n.text, kFloat), nil
			}
		case "seat":
			if to, ok := seatml.ESEATRenames[n.text]; ok {
				return atomic("seat."+to, kAny), nil
			}
			if use, ok := seatml.ESEATInstead(n.text); ok {
				return lua{}, hand("seat.%s is eSEAT's; seat has no such function: write %s", n.text, use)
			}
			return atomic("seat."+n.text, kAny), nil
		case "self":
			// eSEAT's methods are the seat table's; any other field is
			// the behavior's own value, kept in seat's self table.
			if to, ok := seatml.ESEATMethod(n.text); ok {
				if to == "" {
					return lua{}, hand("self.%s, which seat has no function for", n.text)
				}
				return atomic("seat."+to, kAny), nil
			}
			return atomic("self."+n.text, kAny), nil
		}
	}
	o, err := value(obj)
	if err != nil {
		return lua{}, err
	}
	return atomic(o.wrap(precAtom)+"."+n.text, kAny), nil
}

func call(n *node) (lua, error) {
	fn, args := n.kids[0], n.kids[1:]
	one := func(name string, k kind) (lua, error) {
		vs, err := values(args)
		if err != nil {
			return lua{}, err
		}
		return atomic(name+"("+strings.Join(vs, ", ")+")", k), nil
	}
	if fn.op == "name" {
		switch fn.text {
		case "str", "unicode":
			if len(args) != 1 {
				return lua{}, hand("%s() with %d arguments", fn.text, len(args))
			}
			v, err := value(args[0])
			if err != nil {
				return lua{}, err
			}
			switch v.kind {
			case kStr, kText:
				return v, nil
			case kFloat:
				return atomic("py.strf("+v.code+")", kStr), nil
			case kMixed:
				return lua{}, errMixed
			}
			return atomic("py.str("+v.code+")", kStr), nil
		case "int", "long":
			return one("py.int", kNum)
		case "float":
			return one("py.float", kFloat)
		case "len":
			return one("py.len", kNum)
		case "round":
			k := kNum
			if len(args) > 1 {
				k = kFloat
			}
			return one("py.round", k)
		case "bool":
			if len(args) != 1 {
				return lua{}, hand("bool() with %d arguments", len(args))
			}
			return cond(args[0])
		case "abs":
			v, err := value(args[0])
			if err != nil {
				return lua{}, err
			}
			return atomic("math.abs("+v.code+")", v.kind), nil
		case "min", "max":
			vs := make([]lua, len(args))
			codes := make([]string, len(args))
			for i, a := range args {
				v, err := value(a)
				if err != nil {
					return lua{}, err
				}
				if !v.kind.numeric() || len(args) < 2 {
					return lua{}, hand("%s() of what may not be numbers", fn.text)
				}
				vs[i], codes[i] = v, v.code
			}
			// Python returns the argument itself: max(1.0, 2) is the int
			// 2, max(1, 2.0) the float 2.0. Of ints and floats, which it
			// is depends on the values: the same number, printed
			// differently, so printing it is left for hand work.
			k := vs[0].kind
			for _, v := range vs[1:] {
				if v.kind != k {
					k = kMixed
				}
			}
			return atomic("math."+fn.text+"("+strings.Join(codes, ", ")+")", k), nil
		case "print":
			return printCall(args)
		case "range", "type", "isinstance", "sorted", "sum", "map", "filter", "zip", "enumerate", "dict", "set", "list", "tuple", "input", "raw_input", "eval", "exec", "open", "ord", "chr", "repr", "hasattr", "getattr", "setattr":
			return lua{}, hand("the Python function %s()", fn.text)
		}
	}
	if fn.op == "attr" {
		obj := fn.kids[0]
		if obj.op == "name" && obj.text == "py" {
			// seat's py library, which the port writes: what each
			// returns, so that a ported body reads back the same
			// (py.truthy(x) is tested as it is, not as py.truthy(py.truthy(x))).
			if k, ok := pyKinds[fn.text]; ok {
				return one("py."+fn.text, k)
			}
		}
		if obj.op == "name" && obj.text == "math" {
			// Lua's math functions that Python's math module has not,
			// which the port writes for max(), min() and random.
			switch fn.text {
			case "max", "min":
				vs, err := values(args)
				if err != nil {
					return lua{}, err
				}
				return atomic("math."+fn.text+"("+strings.Join(vs, ", ")+")", kAny), nil
			case "random":
				k := kFloat
				if len(args) > 0 {
					k = kNum
				}
				return one("math.random", k)
			}
		}
		if obj.op == "name" && (obj.text == "seat" || obj.text == "rospy") {
			// eSEAT's seat.loginfo and rospy's log calls are seat.log.
			if level, ok := map[string]string{"loginfo": "info", "logwarn": "warn", "logerr": "error", "logdebug": "debug"}[fn.text]; ok {
				vs, err := values(args)
				if err != nil {
					return lua{}, err
				}
				if len(vs) != 1 {
					return lua{}, hand("%s.%s with %d arguments", obj.text, fn.text, len(args))
				}
				v := atomic(fmt.Sprintf("seat.log(%q, %s)", level, vs[0]), kAny)
				v.multi = true // none
				return v, nil
			}
			if obj.text == "rospy" && fn.text == "get_time" {
				return atomic("seat.now()", kFloat), nil
			}
		}
		if obj.op == "name" && obj.text == "random" {
			switch fn.text {
			case "randint":
				return one("math.random", kNum)
			case "random":
				return one("math.random", kFloat)
			case "uniform":
				vs, err := values(args)
				if err != nil || len(vs) != 2 {
					return lua{}, hand("random.uniform with %d arguments", len(args))
				}
				return atomic(fmt.Sprintf("(%s + math.random() * ((%s) - (%s)))", vs[0], vs[1], vs[0]), kFloat), nil
			}
			return lua{}, hand("random.%s", fn.text)
		}
		if obj.op == "name" && obj.text == "math" {
			switch fn.text {
			case "floor", "ceil":
				return one("math."+fn.text, kNum)
			case "sqrt", "sin", "cos", "tan", "exp", "log", "pow", "fabs", "atan", "asin", "acos":
				name := map[string]string{"fabs": "abs"}[fn.text]
				if name == "" {
					name = fn.text
				}
				return one("math."+name, kFloat)
			}
			return lua{}, hand("math.%s", fn.text)
		}
		if obj.op != "name" || obj.text != "seat" {
			switch fn.text {
			case "upper", "lower":
				if len(args) == 0 {
					o, err := value(obj)
					if err != nil {
						return lua{}, err
					}
					return atomic("string."+fn.text+"("+o.code+")", kStr), nil
				}
			case "strip", "lstrip", "rstrip":
				o, err := value(obj)
				if err != nil {
					return lua{}, err
				}
				vs, err := values(args)
				if err != nil || len(vs) > 1 {
					return lua{}, hand(".%s() with %d arguments", fn.text, len(args))
				}
				return atomic("py."+fn.text+"("+strings.Join(append([]string{o.code}, vs...), ", ")+")", kStr), nil
			case "split", "join", "append", "keys", "values", "items", "format", "startswith", "endswith", "replace", "find", "count", "get", "pop", "insert", "remove", "index", "encode", "decode", "sort", "reverse", "extend", "update", "isdigit", "isalpha", "splitlines", "title", "capitalize":
				return lua{}, hand("the Python method .%s()", fn.text)
			}
		}
	}
	f, err := value(fn)
	if err != nil {
		return lua{}, err
	}
	vs, err := values(args)
	if err != nil {
		return lua{}, err
	}
	v := atomic(f.wrap(precAtom)+"("+strings.Join(vs, ", ")+")", kAny)
	if fn.op == "attr" && fn.kids[0].op == "name" && fn.kids[0].text == "seat" {
		if k, ok := seatOne[strings.TrimPrefix(f.code, "seat.")]; ok {
			v.kind = k
			return v, nil
		}
	}
	v.multi = true
	return v, nil
}

// seatOne are the seat functions that return one value, and what it is
// (seat.now() is what seat port writes for rospy.get_time()).
var seatOne = map[string]kind{"now": kFloat, "state": kStr, "get_entry": kAny, "getEntry": kAny, "get_text": kAny, "get": kAny}

// pyKinds are the functions of seat's py library and what they return.
var pyKinds = map[string]kind{
	"truthy": kBool, "contains": kBool, "eq": kBool,
	"str": kStr, "strf": kStr, "format": kStr, "strip": kStr, "lstrip": kStr, "rstrip": kStr,
	"int": kNum, "len": kNum, "round": kNum, "float": kFloat,
	"index": kAny, "slice": kAny, "add": kAny, "mul": kAny, "mod": kAny, "iter": kAny, "print": kNil,
}

// printCall is print(a, b): py.print writes each as Python's str() does;
// a value known to be a Python float goes through py.strf (3.0, not 3).
func printCall(args []*node) (lua, error) {
	codes := make([]string, len(args))
	for i, a := range args {
		v, err := value(a)
		if err != nil {
			return lua{}, err
		}
		codes[i] = lastArg(v, i == len(args)-1)
		switch v.kind {
		case kFloat:
			codes[i] = "py.strf(" + v.code + ")"
		case kMixed:
			return lua{}, errMixed
		}
	}
	return atomic("py.print("+strings.Join(codes, ", ")+")", kNil), nil
}

// expr translates a one-line Python expression whose value is used.
func expr(s string) (string, error) {
	n, err := parse(s)
	if err != nil {
		return "", err
	}
	v, err := value(n)
	return v.code, err
}

// condExpr translates a one-line Python expression tested for truth.
func condExpr(s string) (string, error) {
	n, err := parse(s)
	if err != nil {
		return "", err
	}
	c, err := cond(n)
	return c.code, err
}

// pyStringValue is the value of a Python string literal, prefix included
// (u"…", r"…"): escapes decoded as Python 3 does.
func pyStringValue(lit string) (string, error) {
	prefix := strings.ToLower(lit[:strings.IndexAny(lit, `"'`)])
	body := lit[len(prefix)+1 : len(lit)-1]
	switch {
	case strings.Contains(prefix, "f"):
		return "", hand("an f-string")
	case strings.Contains(prefix, "b"):
		return "", hand("a bytes literal")
	case strings.Contains(prefix, "r"):
		return body, nil
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := body[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"':
			b.WriteByte(e)
		case '\n':
		case 'x', 'u', 'U':
			size := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+1+size > len(body) {
				return "", hand("a string escape seat port cannot read (\\%c)", e)
			}
			r, err := strconv.ParseUint(body[i+1:i+1+size], 16, 32)
			if err != nil {
				return "", hand("a string escape seat port cannot read (\\%c)", e)
			}
			b.WriteRune(rune(r))
			i += size
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(body) && j < i+3 && body[j] >= '0' && body[j] <= '7' {
				j++
			}
			r, _ := strconv.ParseUint(body[i:j], 8, 32)
			b.WriteRune(rune(r))
			i = j - 1
		case 'N':
			return "", hand(`a \N{…} escape`)
		default: // Python keeps an unknown escape as it is
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}

// luaQuote writes a string value as a Lua literal: printable text as it
// is (UTF-8 included), the escapes Lua and Python read alike (\n, \t, \r,
// \a, \b, \f, \v, \", \\), and any other control character or byte that
// is not UTF-8 as string.char(N), joined: a numeric escape would read
// differently in the two (Lua's \27 is decimal, Python's octal), and seat
// port reads a body it has written again when run on its own output.
func luaQuote(s string) string {
	var parts []string
	var b strings.Builder
	var raw []string
	flush := func() {
		if len(raw) > 0 {
			parts = append(parts, "string.char("+strings.Join(raw, ", ")+")")
			raw = nil
		}
	}
	text := func() {
		if b.Len() > 0 {
			parts = append(parts, `"`+b.String()+`"`)
			b.Reset()
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		esc, named := luaEscapes[r]
		switch {
		case named:
			flush()
			b.WriteString(esc)
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f:
			text()
			raw = append(raw, strconv.Itoa(int(s[i])))
		default:
			flush()
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	text()
	flush()
	switch len(parts) {
	case 0:
		return `""`
	case 1:
		return parts[0]
	}
	return "(" + strings.Join(parts, " .. ") + ")"
}

// luaEscapes are the escapes Lua 5.1 and Python read alike.
var luaEscapes = map[rune]string{'"': `\"`, '\\': `\\`, '\n': `\n`, '\t': `\t`, '\r': `\r`, '\a': `\a`, '\b': `\b`, '\f': `\f`, '\v': `\v`}

// indexTop is the index of the first sep in s outside strings and
// brackets, or -1; depth carries the brackets' depth from call to call.
func indexTop(s string, sep byte, depth *int) int {
	return indexCode(s, func(c byte) bool {
		switch c {
		case '(', '[', '{':
			*depth++
		case ')', ']', '}':
			*depth--
		}
		return c == sep && *depth == 0
	})
}

// splitArgs splits "a, b, c" at its top-level commas.
func splitArgs(s string) ([]string, error) {
	var out []string
	depth := 0
	for {
		i := indexTop(s, ',', &depth)
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
