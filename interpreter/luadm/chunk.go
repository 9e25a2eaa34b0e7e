package luadm

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"

	"github.com/seatml/seat/schema"
)

// maxQuoted is how much of a cond a syntax error quotes.
const maxQuoted = 60

// Compile compiles src, which starts at line:col of file, so that Lua's
// positions are the file's: the first line is indented to col, and the
// compiled line numbers are shifted by the lines before it (padding with
// newlines instead would make a large file's load quadratic). expr, if
// not empty, compiles src as an expression and names it in errors ("cond",
// "expr"): the chunk returns its value.
func Compile(file, src string, line, col int, expr string) (*lua.FunctionProto, *schema.Diagnostic) {
	stmts, d := Parse(file, src, line, col, expr)
	if d != nil {
		return nil, d
	}
	offset := line - 1
	if expr != "" {
		offset = line - 2
	}
	proto, err := lua.Compile(stmts, file)
	if err != nil {
		return nil, compileDiagnostic(err, file, line, col, offset)
	}
	shiftLines(proto, offset)
	// A chunk is a vararg function; gopher-lua would build Lua 5.0's "arg"
	// table at every call for it. Chunks are called with no arguments.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, nil
}

var (
	compileErrRE = regexp.MustCompile(`^compile error near line\((\d+)\) [^:]*: (.*)$`)
	atLineRE     = regexp.MustCompile(`at line (\d+)`)
)

// compileDiagnostic places a gopher-lua compile error at its file line
// (gopher-lua counts lines from the chunk's start).
func compileDiagnostic(err error, file string, line, col, offset int) *schema.Diagnostic {
	d := &schema.Diagnostic{Pos: schema.Pos{File: file, Line: line, Col: col}, Msg: "lua: " + err.Error()}
	m := compileErrRE.FindStringSubmatch(strings.TrimSpace(err.Error()))
	if m == nil {
		return d
	}
	n, _ := strconv.Atoi(m[1])
	if n > 0 {
		d.Pos.Line = n + offset
		if d.Pos.Line != line {
			d.Pos.Col = 1
		}
	}
	d.Msg = "lua: " + atLineRE.ReplaceAllStringFunc(m[2], func(s string) string {
		k, _ := strconv.Atoi(strings.TrimPrefix(s, "at line "))
		return fmt.Sprintf("at line %d", k+offset)
	})
	return d
}

// NthLine returns line n (1-based) of s, or "" past its end.
func NthLine(s string, n int) string {
	for ; n > 1; n-- {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return ""
		}
		s = s[i+1:]
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Parse parses a chunk placed as Compile places it: its statements, or
// the syntax error at its position in the file.
func Parse(file, src string, line, col int, expr string) ([]ast.Stmt, *schema.Diagnostic) {
	var b strings.Builder
	offset := line - 1
	if expr != "" {
		b.WriteString("return (\n")
		offset = line - 2
	}
	b.WriteString(strings.Repeat(" ", col-1))
	b.WriteString(src)
	if expr != "" {
		b.WriteString("\n)")
	}
	placed := b.String()
	stmts, err := parse.Parse(strings.NewReader(placed), file)
	if err != nil {
		d := schema.Diagnostic{Pos: schema.Pos{File: file, Line: line, Col: col}, Msg: "lua: " + err.Error()}
		var pe *parse.Error
		if errors.As(err, &pe) {
			d.Msg = "lua: " + pe.Message
			if pe.Pos.Line != parse.EOF {
				// The parser counts bytes; positions count characters.
				d.Pos.Line, d.Pos.Col = pe.Pos.Line+offset, schema.CharCol(NthLine(placed, pe.Pos.Line), pe.Pos.Column)
				switch line := NthLine(placed, pe.Pos.Line); {
				case pe.Token != "" && !utf8.ValidString(pe.Token):
					// The lexer stopped inside a character: name it whole.
					r, _ := utf8.DecodeRuneInString(line[min(max(pe.Pos.Column-1, 0), len(line)):])
					d.Msg = fmt.Sprintf("lua: %q cannot start a name or a value: Lua names are ASCII letters, digits and _; put Japanese text in quotes", r)
				case pe.Token != "":
					d.Msg += fmt.Sprintf(" near %q", pe.Token)
				}
			} else {
				d.Pos = schema.Pos{File: file, Line: line, Col: col}.Advance(src)
				d.Msg += " at the end of the script"
				if expr == "" {
					// Scanned as written: the first line's padding is no indentation.
					at := func(t token) string {
						c := schema.CharCol(NthLine(src, t.line), t.col)
						if t.line == 1 {
							c += col - 1
						}
						return fmt.Sprintf("%d:%d", t.line+offset, c)
					}
					if m := unclosedMessage(src, at); m != "" {
						d.Msg = "lua: the script ends too soon: " + m
					}
				}
			}
			if e, ok := elifAt(placed); ok && pe.Pos.Line != parse.EOF && e.line <= pe.Pos.Line {
				// Python's elif reads as a name, and the parser stops after it.
				d.Pos = schema.Pos{File: file, Line: e.line + offset, Col: schema.CharCol(NthLine(placed, e.line), e.col)}
				d.Msg = "lua: elif is Python; Lua writes elseif"
			}
			if expr != "" {
				exprDiagnostic(&d, pe, expr, src, schema.Pos{File: file, Line: line, Col: col})
			}
		}
		return nil, &d
	}
	return stmts, nil
}

// exprDiagnostic rewords an expression's syntax error in the terms of
// what the user wrote: the expression's own text is quoted after what it
// is (a cond), and an error the parser found in the wrapper seat adds
// around it ("return (" and ")") is placed at the end of the expression,
// as the expression being incomplete there.
func exprDiagnostic(d *schema.Diagnostic, pe *parse.Error, what, src string, start schema.Pos) {
	text := strings.TrimSpace(src)
	end := start.Advance(strings.TrimRight(src, " \t\r\n"))
	quoted := fmt.Sprintf("lua: %s %q: ", what, schema.Excerpt(text, maxQuoted))
	switch {
	case pe.Pos.Line == parse.EOF || d.Pos.Line > end.Line || d.Pos.Line == end.Line && d.Pos.Col > end.Col:
		d.Pos = end
		d.Msg = quoted + "the expression is incomplete at its end (a missing operand or closing parenthesis?)"
	case pe.Token == "=" && loneEquals(text):
		d.Msg = quoted + strings.TrimPrefix(d.Msg, "lua: ") + "; a " + what + " is an expression: compare with =="
	default:
		d.Msg = quoted + strings.TrimPrefix(d.Msg, "lua: ")
	}
}

// loneEquals reports whether text has an = that is not part of ==, ~=,
// <= or >=: an assignment written where a comparison was meant.
func loneEquals(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] != '=' {
			continue
		}
		if i+1 < len(text) && text[i+1] == '=' {
			i++
			continue
		}
		if i > 0 && strings.IndexByte("=~<>", text[i-1]) >= 0 {
			continue
		}
		return true
	}
	return false
}

// shiftLines adds offset to every line number of a compiled function and
// of the functions it defines.
func shiftLines(p *lua.FunctionProto, offset int) {
	if offset == 0 {
		return
	}
	if p.LineDefined > 0 {
		p.LineDefined += offset
		p.LastLineDefined += offset
	}
	for i := range p.DbgSourcePositions {
		p.DbgSourcePositions[i] += offset
	}
	for _, f := range p.FunctionPrototypes {
		shiftLines(f, offset)
	}
}
