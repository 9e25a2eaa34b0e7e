package port

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Problem is a part of a body the translator left for hand work: its line
// within the body (1-based) and why.
type Problem struct {
	Line   int
	Reason string
}

// errHand marks a construct with no mechanical translation.
type errHand struct{ reason string }

func (e *errHand) Error() string { return e.reason }

func hand(format string, args ...any) error { return &errHand{fmt.Sprintf(format, args...)} }

// errInHand marks a statement inside a block left for hand work.
var errInHand = &errHand{"inside a block left for hand work"}

// block is an open Python block: its header's indentation and kind.
type block struct {
	indent int
	kind   string // "if", "for", "while", "def"
}

var (
	defRE      = regexp.MustCompile(`^def\s+([A-Za-z_]\w*)\s*\(([^)]*)\)\s*:$`)
	ifRE       = regexp.MustCompile(`^(if|elif|while)\s+(.+):$`)
	forRangeRE = regexp.MustCompile(`^for\s+([A-Za-z_]\w*)\s+in\s+range\s*\((.*)\)\s*:$`)
	forItemsRE = regexp.MustCompile(`^for\s+([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s+in\s+(.+)\.items\(\)\s*:$`)
	forInRE    = regexp.MustCompile(`^for\s+([A-Za-z_]\w*)\s+in\s+(.+):$`)
	augRE      = regexp.MustCompile(`^([A-Za-z_][\w.]*)\s*(\+|-|\*|/)=\s*(.+)$`)
	print2RE   = regexp.MustCompile(`^print\s+([^(].*)$`)
	importRE   = regexp.MustCompile(`^(import\s+([\w.]+)(\s+as\s+\w+)?|from\s+[\w.]+\s+import\s+.+)$`)
	setResRE   = regexp.MustCompile(`^seat\.set_result\s*\((.*)\)$`)
	appendRE   = regexp.MustCompile(`^([A-Za-z_][\w.]*)\.append\s*\((.*)\)$`)
)

// TranslateScript translates a Python script body into Lua, statement by
// statement. A statement with no mechanical translation becomes a Lua
// comment that begins "-- seat port:" with the reason and the original
// Python, and is returned as a Problem. The body's indentation is kept.
func TranslateScript(body string) (string, []Problem) {
	lines := strings.Split(body, "\n")
	if mixedIndent(lines) > 0 {
		// Python 2 reads a tab as up to 8 spaces, Python 3 refuses the
		// mix: what nests in what is not certain.
		const why = "indentation mixes tabs and spaces (Python 2 and 3 nest it differently)"
		for i, l := range lines {
			if t := strings.TrimSpace(l); t != "" {
				lines[i] = l[:len(l)-len(strings.TrimLeft(l, " \t"))] + "-- seat port: " + why + ": " + t
			}
		}
		return strings.Join(lines, "\n"), []Problem{{Line: 1, Reason: why}} // the whole body
	}
	prefix := commonIndent(lines)
	var out []string
	var problems []Problem
	var stack []block
	closeTo := func(indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			b := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if b.kind != "hand" { // a header left for hand work is a comment: no end
				out = append(out, prefix+strings.Repeat(" ", b.indent)+"end")
			}
		}
	}
	for i, raw := range lines {
		if strings.TrimSpace(raw) == "" {
			out = append(out, raw)
			continue
		}
		line := strings.TrimPrefix(raw, prefix)
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		stmt, comment := splitComment(strings.TrimSpace(line))
		pad := prefix + strings.Repeat(" ", indent)
		if stmt == "" { // a comment line
			out = append(out, pad+"--"+comment)
			continue
		}
		continued := strings.HasPrefix(stmt, "elif ") || stmt == "else:" || strings.HasPrefix(stmt, "else :")
		if continued {
			closeTo(indent + 1) // blocks nested deeper end; the if stays open
		} else {
			closeTo(indent)
		}
		lua, opens, err := statement(stmt, stack, indent)
		if err != nil {
			if err != errInHand { // listed once, at the block's header
				problems = append(problems, Problem{Line: i + 1, Reason: err.Error()})
			}
			out = append(out, pad+"-- seat port: "+err.Error()+": "+stmt)
			if strings.HasSuffix(stmt, ":") && !continued { // its block is left in comments too
				stack = append(stack, block{indent: indent, kind: "hand"})
			}
			continue
		}
		if comment != "" {
			lua += " --" + comment
		}
		out = append(out, pad+lua)
		if opens != "" {
			stack = append(stack, block{indent: indent, kind: opens})
		}
		if opens == "def" {
			// Python's names assigned in a function are its own: declared
			// local at its top, so that every block of it sees them.
			if names, inner := funcLocals(stmt, lines[i+1:], prefix, indent); len(names) > 0 {
				out = append(out, inner+"local "+strings.Join(names, ", "))
			}
		}
	}
	// The last blocks end before the body's trailing blank lines.
	n := len(out)
	for n > 0 && strings.TrimSpace(out[n-1]) == "" {
		n--
	}
	tail := append([]string{}, out[n:]...)
	out = out[:n]
	closeTo(0)
	return strings.Join(append(out, tail...), "\n"), problems
}

// noLuaForm are the statements with no mechanical Lua translation.
var noLuaForm = map[string]bool{
	"try": true, "except": true, "finally": true, "class": true, "with": true, "lambda": true,
	"yield": true, "assert": true, "del": true, "raise": true, "exec": true,
}

// firstWord returns the identifier s starts with ("try" of "try:", not of
// "trying = 1").
func firstWord(s string) string {
	i := 0
	for i < len(s) && isWordByte(s[i]) {
		i++
	}
	return s[:i]
}

// statement translates one Python statement. opens is the kind of block it
// opens, if any.
func statement(s string, stack []block, indent int) (lua, opens string, err error) {
	inHand := false
	for _, b := range stack {
		if b.kind == "hand" && b.indent < indent {
			inHand = true
		}
	}
	if inHand {
		return "", "", errInHand
	}
	if (strings.HasPrefix(s, "elif ") || s == "else:" || s == "else :") && len(stack) > 0 && stack[len(stack)-1].kind == "hand" {
		return "", "", errInHand // the rest of an if left for hand work
	}
	parts := splitStatements(s)
	switch len(parts) {
	case 0:
		return "", "", hand("an empty statement")
	case 1:
		s = parts[0] // a trailing semicolon
	}
	if len(parts) > 1 {
		// a; b: simple statements on one line, as Lua writes them too.
		out := make([]string, len(parts))
		for i, p := range parts {
			l, opens, err := statement(p, stack, indent)
			if err != nil {
				return "", "", err
			}
			if opens != "" || strings.HasSuffix(p, ":") {
				return "", "", hand("a block header among statements on one line")
			}
			out[i] = l
		}
		return strings.Join(out, "; "), "", nil
	}
	switch {
	case s == "pass":
		return "-- pass", "", nil
	case strings.HasPrefix(s, "global "):
		return "-- " + s + " (Lua variables are global unless local)", "", nil
	case s == "break" || s == "return":
		return s, "", nil
	case s == "continue":
		return "", "", hand("Lua has no continue")
	case importRE.MatchString(s):
		m := importRE.FindStringSubmatch(s)
		if m[2] == "random" || m[2] == "math" {
			return "-- " + s + " (Lua has math.random and math.*)", "", nil
		}
		return "", "", hand("Python module %q has no Lua equivalent", strings.Fields(s)[1])
	case noLuaForm[firstWord(s)] || strings.HasPrefix(s, "@"):
		return "", "", hand("%s has no mechanical Lua translation", firstWord(s))
	}
	if m := defRE.FindStringSubmatch(s); m != nil {
		if strings.ContainsAny(m[2], "=*") {
			return "", "", hand("default and keyword arguments")
		}
		return "function " + m[1] + "(" + m[2] + ")", "def", nil
	}
	if m := forRangeRE.FindStringSubmatch(s); m != nil {
		args, err := splitArgs(m[2])
		if err != nil {
			return "", "", err
		}
		for i := range args {
			if args[i], err = expr(args[i]); err != nil {
				return "", "", err
			}
		}
		// Lua's loop variable is the loop's own; Python's stays after
		// the loop with its last value: the loop sets it.
		switch len(args) {
		case 1:
			return fmt.Sprintf("for %s_ = 0, (%s) - 1 do %s = %s_", m[1], args[0], m[1], m[1]), "for", nil
		case 2:
			return fmt.Sprintf("for %s_ = %s, (%s) - 1 do %s = %s_", m[1], args[0], args[1], m[1], m[1]), "for", nil
		}
		return "", "", hand("range with a step")
	}
	if m := forItemsRE.FindStringSubmatch(s); m != nil {
		e, err := expr(m[3])
		if err != nil {
			return "", "", err
		}
		return fmt.Sprintf("for %s, %s in pairs(%s) do", m[1], m[2], e), "for", nil
	}
	if m := forInRE.FindStringSubmatch(s); m != nil {
		e, err := expr(m[2])
		if err != nil {
			return "", "", err
		}
		return fmt.Sprintf("for _, %s_ in py.iter(%s) do %s = %s_", m[1], e, m[1], m[1]), "for", nil
	}
	if m := ifRE.FindStringSubmatch(s); m != nil {
		e, err := condExpr(m[2])
		if err != nil {
			return "", "", err
		}
		switch m[1] {
		case "if":
			return "if " + e + " then", "if", nil
		case "elif":
			if len(stack) == 0 || stack[len(stack)-1].kind != "if" {
				return "", "", hand("elif without its if")
			}
			return "elseif " + e + " then", "", nil
		default:
			return "while " + e + " do", "while", nil
		}
	}
	if s == "else:" || s == "else :" {
		if len(stack) == 0 || stack[len(stack)-1].kind != "if" {
			return "", "", hand("else of a for, while or try")
		}
		return "else", "", nil
	}
	if strings.HasSuffix(s, ":") {
		return "", "", hand("a block Lua has no form for")
	}
	if m := appendRE.FindStringSubmatch(s); m != nil {
		e, err := expr(m[2])
		if err != nil {
			return "", "", err
		}
		return "table.insert(" + m[1] + ", " + e + ")", "", nil
	}
	if m := setResRE.FindStringSubmatch(s); m != nil {
		e, err := expr(m[1])
		if err != nil {
			return "", "", err
		}
		return "rtc_result = " + e, "", nil
	}
	if m := print2RE.FindStringSubmatch(s); m != nil {
		if strings.HasPrefix(m[1], ">>") || strings.HasSuffix(m[1], ",") {
			return "", "", hand("print >> or a trailing comma")
		}
		n, err := parse(m[1])
		if err != nil {
			return "", "", err
		}
		args := []*node{n}
		if n.op == "tuple" {
			args = n.kids
		}
		v, err := printCall(args)
		if err != nil {
			return "", "", err
		}
		return v.code, "", nil
	}
	if m := augRE.FindStringSubmatch(s); m != nil {
		target, err := parse(m[1])
		if err != nil {
			return "", "", err
		}
		operand, err := parse(m[3])
		if err != nil {
			return "", "", err
		}
		lhs, err := assignTarget(target)
		if err != nil {
			return "", "", err
		}
		v, err := value(&node{op: "bin", text: m[2], kids: []*node{target, operand}})
		if err != nil {
			return "", "", err
		}
		return lhs + " = " + v.code + indexNote(target, m[1]), "", nil
	}
	if strings.HasPrefix(s, "return ") {
		e, err := expr(strings.TrimPrefix(s, "return "))
		if err != nil {
			return "", "", err
		}
		return "return " + e, "", nil
	}
	// An assignment or a call.
	if lhs, rhs, ok := assignment(s); ok {
		e, err := expr(rhs)
		if err != nil {
			return "", "", err
		}
		if strings.Contains(lhs, ",") {
			return "", "", hand("unpacking assignment")
		}
		target, err := parse(lhs)
		if err != nil {
			return "", "", err
		}
		l, err := assignTarget(target)
		if err != nil {
			return "", "", err
		}
		return l + " = " + e + indexNote(target, lhs), "", nil
	}
	e, err := expr(s)
	if err != nil {
		return "", "", err
	}
	if !strings.HasSuffix(e, ")") {
		return "", "", hand("an expression statement that is not a call")
	}
	return e, "", nil
}

// splitStatements splits a line at its semicolons outside strings and
// brackets; a trailing one ends the line.
func splitStatements(s string) []string {
	var out []string
	for {
		depth := 0
		i := indexTop(s, ';', &depth)
		if i < 0 {
			break
		}
		if p := strings.TrimSpace(s[:i]); p != "" {
			out = append(out, p)
		}
		s = s[i+1:]
	}
	if p := strings.TrimSpace(s); p != "" {
		out = append(out, p)
	}
	return out
}

// TranslateCond translates a Python condition into a Lua expression.
func TranslateCond(body string) (string, error) {
	stmt, _ := splitComment(strings.TrimSpace(body))
	return condExpr(stmt)
}

// assignTarget translates what is assigned to: a name, a field, or an
// item at a literal index (l[0] is Lua's l[1]; d["k"] stays).
func assignTarget(n *node) (string, error) {
	switch n.op {
	case "name", "attr":
		v, err := value(n)
		if err != nil {
			return "", err
		}
		if v.kind == kText || v.kind == kBool || v.kind == kNil {
			return "", hand("assigning to %s", v.code)
		}
		return v.code, nil
	case "index":
		x, err := value(n.kids[0])
		if err != nil {
			return "", err
		}
		k := n.kids[1]
		switch {
		case k.op == "num":
			i, err := strconv.Atoi(k.text)
			if err != nil || i < 0 {
				return "", hand("assigning at index %s (Python counts from 0, Lua from 1, and from the end below 0)", k.text)
			}
			return x.wrap(precAtom) + "[" + strconv.Itoa(i+1) + "]", nil
		case k.op == "str":
			return x.wrap(precAtom) + "[" + luaQuote(k.text) + "]", nil
		}
		return "", hand("assigning at an index that is not a literal (Python counts from 0, Lua from 1)")
	}
	return "", hand("assigning to this")
}

// indexNote says which Python item an assignment at a number sets
// (l[1] = v -- l[0] in Python): the index moved by one. The comment also
// marks the line as Lua, so that seat port, run on its own output, does
// not read l[1] as Python's and move it again.
func indexNote(target *node, python string) string {
	if target.op == "index" && target.kids[1].op == "num" {
		return " -- " + python + " in Python"
	}
	return ""
}

// assignment splits "a = b" (not ==, <=, >=, !=).
func assignment(s string) (lhs, rhs string, ok bool) {
	toks, err := tokenize(s)
	if err != nil {
		return "", "", false
	}
	depth := 0
	for _, t := range toks {
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "=":
			if depth == 0 {
				return strings.TrimSpace(s[:t.pos]), strings.TrimSpace(s[t.pos+1:]), true
			}
		}
	}
	return "", "", false
}

// mixedIndent returns the 1-based line where a body's indentation first
// mixes tabs and spaces (across its lines or within one), or 0.
func mixedIndent(lines []string) int {
	var tabs, spaces bool
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lead := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		tabs = tabs || strings.Contains(lead, "\t")
		spaces = spaces || strings.Contains(lead, " ")
		if tabs && spaces {
			return i + 1
		}
	}
	return 0
}

var (
	assignedRE = regexp.MustCompile(`^(?:for\s+)?([A-Za-z_]\w*)\s*(=[^=]|\+=|-=|\*=|/=|%=|\s+in\s)`)
	globalRE   = regexp.MustCompile(`^global\s+(.+)$`)
)

// funcLocals lists the names a def's body assigns that are not its
// parameters or declared global, and the indentation of its body.
func funcLocals(header string, body []string, prefix string, indent int) ([]string, string) {
	m := defRE.FindStringSubmatch(header)
	skip := map[string]bool{}
	for _, p := range strings.Split(m[2], ",") {
		skip[strings.TrimSpace(p)] = true
	}
	var names []string
	inner := ""
	var stmts []string
	for _, raw := range body {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		line := strings.TrimPrefix(raw, prefix)
		in := len(line) - len(strings.TrimLeft(line, " \t"))
		if in <= indent {
			break
		}
		if inner == "" {
			inner = prefix + line[:in]
		}
		stmt, _ := splitComment(strings.TrimSpace(line))
		stmts = append(stmts, stmt)
		if g := globalRE.FindStringSubmatch(stmt); g != nil {
			for _, n := range strings.Split(g[1], ",") {
				skip[strings.TrimSpace(n)] = true
			}
		}
	}
	for _, stmt := range stmts {
		if a := assignedRE.FindStringSubmatch(stmt + " "); a != nil && !skip[a[1]] && !luaKeywords[a[1]] {
			skip[a[1]] = true
			names = append(names, a[1])
		}
	}
	return names, inner
}

func commonIndent(lines []string) string {
	prefix, set := "", false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lead := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if !set {
			prefix, set = lead, true
			continue
		}
		for !strings.HasPrefix(lead, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	return prefix
}

// splitComment splits a "#" comment off a statement, outside strings.
func splitComment(s string) (stmt, comment string) {
	if i := indexCode(s, func(c byte) bool { return c == '#' }); i >= 0 {
		return strings.TrimSpace(s[:i]), s[i+1:]
	}
	return s, ""
}
