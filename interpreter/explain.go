package interpreter

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"

	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// Names the sandbox removes (§9.3), for messages that say so.
var (
	removedGlobals = []string{"io", "require", "package", "debug", "coroutine", "dofile", "loadfile", "module"}
	keptOS         = []string{"time", "clock", "date"}
)

var (
	calledRE  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*[("{']`)
	indexedRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\.[A-Za-z_]`)
)

// explainNil rewords gopher-lua's "attempt to call a non-function object"
// and "attempt to index a non-table object(nil)", which name nothing, by
// finding on the failing line the name that is nil: seat.replly (with the
// nearest seat function), os.execute or io (removed by the sandbox), or a
// global that was never defined.
func (m *luaWorld) explainNil(se *luadm.Error, ch *luadm.Code) {
	var re *regexp.Regexp
	switch {
	case strings.HasPrefix(se.Msg, "attempt to call a non-function object"):
		re = calledRE
	case strings.HasPrefix(se.Msg, "attempt to index a non-table object(nil)"):
		re = indexedRE
	default:
		m.explainOperand(se, ch)
		return
	}
	line, ok := failingLine(se, ch)
	if !ok {
		return
	}
	local := 0 // the column of a local that may be the nil one
	for _, ix := range re.FindAllStringSubmatchIndex(line, -1) {
		path := strings.Split(line[ix[2]:ix[3]], ".")
		if !schema.IsIdentifier(path[0]) {
			continue // a keyword ("end(" is no call of end)
		}
		if declaredLocal(ch.Src, path[0]) {
			if local == 0 {
				local = culpritCol(se, ix[2])
			}
			continue
		}
		if why := m.nilReason(path, re == calledRE); why != "" {
			se.Msg = why
			se.Col = culpritCol(se, ix[2])
			return
		}
	}
	se.Col = local
}

// culpritCol is the column (1-based, in characters) of the byte offset
// off of the failing line, for the caret of the error's detail; 0 if the
// line is not the error's code.
func culpritCol(se *luadm.Error, off int) int {
	if off > len(se.Code) {
		return 0
	}
	return utf8.RuneCountInString(se.Code[:off]) + 1
}

// luaSpelling is the Lua for functions of Python and JavaScript that
// scripts ported by hand reach for (seat check gives the same).
var luaSpelling = luadm.LuaSpelling

// nilReason reports why path (a.b.c) is nil, or "" if it is not.
func (m *luaWorld) nilReason(path []string, called bool) string {
	var v lua.LValue = m.L.G.Global
	for i, p := range path {
		t, ok := v.(*lua.LTable)
		if !ok {
			return ""
		}
		v = t.RawGetString(p)
		if v != lua.LNil {
			continue
		}
		name := strings.Join(path[:i+1], ".")
		what := "index" // a nil on the way to the name, or an indexed one
		if called && i == len(path)-1 {
			what = "call"
		}
		switch {
		case i == 0 && slices.Contains(removedGlobals, p):
			return fmt.Sprintf("attempt to %s %s, which the sandbox removes (scripts have no io, require, package, debug or coroutine; os keeps time, clock and date)", what, name)
		case i == 1 && path[0] == "os" && !slices.Contains(keptOS, p):
			return fmt.Sprintf("attempt to %s %s, which the sandbox removes (os keeps only time, clock and date)", what, name)
		case i == 1 && path[0] == "seat":
			return fmt.Sprintf("attempt to %s %s, which is nil: seat has no %q%s", what, name, p, schema.DidYouMean(p, m.seatNames(), "seat.%s"))
		case i == 0 && m.globalSets[p].at != "":
			set := m.globalSets[p]
			if set.nil {
				return fmt.Sprintf("attempt to %s %s, which is nil (a global set to nil at %s)", what, name, set.at)
			}
			return fmt.Sprintf("attempt to %s %s, which is nil (a global set at %s, then set to nil)", what, name, set.at)
		case i == 0:
			hint := "check its spelling"
			if lua, ok := luaSpelling[name]; ok {
				hint = "Lua has no " + name + ": " + lua
			} else if s := schema.Suggest(p, m.globalNames()); s != "" {
				hint = "did you mean " + s + "?"
			}
			return fmt.Sprintf("attempt to %s %s, which is nil (a global not defined when this ran; %s)", what, name, hint)
		case luaSpelling[name] != "":
			return fmt.Sprintf("attempt to %s %s, which is nil (Lua has no %s: %s)", what, name, name, luaSpelling[name])
		default:
			return fmt.Sprintf("attempt to %s %s, which is nil", what, name)
		}
	}
	return ""
}

// globalSet is where a global was last assigned while it was not set,
// file:line, and whether to nil.
type globalSet struct {
	at  string
	nil bool
}

// maxGlobalSets bounds the globals whose assignments are remembered: a
// script that makes globals by the thousand (_G["k" .. i] = v) does not
// grow the machine without end.
const maxGlobalSets = 4096

// noteGlobalSet remembers where the global name is being assigned, from
// the globals' __newindex: the script's file and line.
func (m *luaWorld) noteGlobalSet(L *lua.LState, name string, toNil bool) {
	if _, seen := m.globalSets[name]; !seen && len(m.globalSets) >= maxGlobalSets {
		return
	}
	if m.globalSets == nil {
		m.globalSets = map[string]globalSet{}
	}
	at := strings.TrimSuffix(L.Where(1), ":")
	if at == "" {
		at = "an unknown line"
	}
	m.globalSets[name] = globalSet{at: at, nil: toNil}
}

// seatNames lists the functions of the seat table.
func (m *luaWorld) seatNames() []string {
	var names []string
	if t, ok := m.L.GetGlobal("seat").(*lua.LTable); ok {
		t.ForEach(func(k, _ lua.LValue) { names = append(names, k.String()) })
	}
	return names
}

// globalNames lists the defined globals, those made on first use (the
// libraries, eSEAT's self) and those assigned nil, for suggestions.
func (m *luaWorld) globalNames() []string {
	var names []string
	m.L.G.Global.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok {
			names = append(names, string(s))
		}
	})
	lazy := luadm.LibraryNames()
	if !m.selfMade {
		lazy = append(slices.Clip(lazy), "self")
	}
	for _, name := range lazy {
		if m.L.G.Global.RawGetString(name) == lua.LNil {
			names = append(names, name)
		}
	}
	set := slices.Sorted(maps.Keys(m.globalSets))
	return append(names, set...)
}

// Operands of the operators gopher-lua's errors do not name: the path
// before or after .., an arithmetic operator, or after #.
const pathPat = `[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*`

var (
	arithErrRE = regexp.MustCompile(`^cannot perform (concat|add|sub|mul|div|mod|pow|unm) operation between (\w+) and (\w+)`)
	// operandRE finds an operator's operands: those before it, then those
	// after it (two searches: one match of a left operand takes the
	// operator, which the right operand's match needs too).
	operandRE = map[string][]*regexp.Regexp{
		"..": {regexp.MustCompile(`(?:^|[^.\w])(` + pathPat + `)\s*\.\.`), regexp.MustCompile(`\.\.\s*(` + pathPat + `)`)},
		"#":  {regexp.MustCompile(`#\s*(` + pathPat + `)`)},
		"+":  {regexp.MustCompile(`(?:^|[^.\w])(` + pathPat + `)\s*[-+*/%^]`), regexp.MustCompile(`[-+*/%^]\s*(` + pathPat + `)`)},
	}
	opWords = map[string]string{"concat": "..", "add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%", "pow": "^", "unm": "-"}
)

// explainOperand rewords gopher-lua's "cannot perform concat operation
// between string and nil" and "__len undefined", which name nothing, by
// finding on the failing line the operand that is nil: a global never
// defined (with a suggestion), a field of one, or else the one operand
// that is a local or a field.
func (m *luaWorld) explainOperand(se *luadm.Error, ch *luadm.Code) {
	var op, kind string
	switch mm := arithErrRE.FindStringSubmatch(se.Msg); {
	case strings.HasPrefix(se.Msg, "__len undefined"):
		op, kind = "#", "#"
	case mm != nil && (mm[2] == "nil" || mm[3] == "nil"):
		op, kind = opWords[mm[1]], "+"
		if mm[1] == "concat" {
			kind = ".."
		}
	default:
		return
	}
	line, ok := failingLine(se, ch)
	if !ok {
		return
	}
	var unknown []string // operands that are not globals: locals or fields
	var unknownAt int    // the column of the first
	for _, o := range operands(kind, line) {
		at, name := o.at, o.name
		path := strings.Split(name, ".")
		if name == "" || luaWords[path[0]] {
			continue
		}
		if declaredLocal(ch.Src, path[0]) {
			if !slices.Contains(unknown, name) {
				if len(unknown) == 0 {
					unknownAt = culpritCol(se, at)
				}
				unknown = append(unknown, name)
			}
			continue
		}
		if why := m.nilReason(path, false); why != "" {
			se.Msg = strings.Replace(why, "attempt to index ", "", 1)
			se.Msg = strings.Replace(se.Msg, ", which is nil", " is nil", 1)
			se.Msg = fmt.Sprintf("%s, in `%s`", se.Msg, op)
			se.Col = culpritCol(se, at)
			return
		}
		if _, isGlobal := m.L.G.Global.RawGetString(path[0]).(*lua.LNilType); isGlobal && !slices.Contains(unknown, name) {
			if len(unknown) == 0 {
				unknownAt = culpritCol(se, at)
			}
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 1 {
		se.Msg = fmt.Sprintf("%s is nil, in `%s` (%s)", unknown[0], op, se.Msg)
		se.Col = unknownAt
	}
}

// operand is an operator's operand found on a line: its text and byte
// offset.
type operand struct {
	name string
	at   int
}

// operands are the operands of an operator of kind ("..", "#", "+") on
// line, in the order they are written, each once.
func operands(kind, line string) []operand {
	var out []operand
	for _, re := range operandRE[kind] {
		for _, ix := range re.FindAllStringSubmatchIndex(line, -1) {
			if !slices.ContainsFunc(out, func(o operand) bool { return o.at == ix[2] }) {
				out = append(out, operand{line[ix[2]:ix[3]], ix[2]})
			}
		}
	}
	slices.SortFunc(out, func(a, b operand) int { return a.at - b.at })
	return out
}

// luaWords are Lua's keywords and literals, never an operand's name.
var luaWords = map[string]bool{"and": true, "or": true, "not": true, "nil": true, "true": true, "false": true,
	"then": true, "do": true, "end": true, "return": true, "local": true, "if": true, "else": true, "elseif": true,
	"while": true, "for": true, "in": true, "repeat": true, "until": true, "function": true, "break": true}

// declaredLocal reports whether src declares name as a local: local x,
// local function x, a for variable or a function parameter.
func declaredLocal(src, name string) bool {
	if !strings.Contains(src, name) {
		return false
	}
	q := regexp.QuoteMeta(name)
	re := regexp.MustCompile(`\blocal\s+(?:function\s+)?(?:[A-Za-z_]\w*\s*,\s*)*` + q + `\b|\bfor\s+(?:[A-Za-z_]\w*\s*,\s*)*` + q + `\b|\bfunction\b[^(]*\([^)]*\b` + q + `\b`)
	return re.MatchString(seatml.BlankStrings(src))
}

// failingLine is the code of the line a script error is on, its strings
// blanked and its comment cut; false when the error is not in ch.
func failingLine(se *luadm.Error, ch *luadm.Code) (string, bool) {
	if ch == nil || ch.Src == "" || se.Pos.File != ch.Pos.File || se.Pos.Line < ch.Pos.Line {
		return "", false
	}
	line := seatml.BlankStrings(luadm.NthLine(ch.Src, se.Pos.Line-ch.Pos.Line+1))
	if i := strings.Index(line, "--"); i >= 0 {
		line = line[:i]
	}
	return line, true
}
