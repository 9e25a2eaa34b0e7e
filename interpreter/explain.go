package interpreter

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"

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
func (m *Machine) explainNil(se *ScriptError, ch *chunk) {
	var re *regexp.Regexp
	switch {
	case strings.HasPrefix(se.Msg, "attempt to call a non-function object"):
		re = calledRE
	case strings.HasPrefix(se.Msg, "attempt to index a non-table object(nil)"):
		re = indexedRE
	default:
		return
	}
	if ch == nil || ch.src == "" || se.File != ch.file || se.Line < ch.line {
		return
	}
	line := blankStrings(nthLine(ch.src, se.Line-ch.line+1))
	if i := strings.Index(line, "--"); i >= 0 {
		line = line[:i]
	}
	for _, m2 := range re.FindAllStringSubmatch(line, -1) {
		path := strings.Split(m2[1], ".")
		if !schema.IsIdentifier(path[0]) {
			continue // a keyword: "end(" is no call of end
		}
		if why := m.nilReason(path, re == calledRE); why != "" {
			se.Msg = why
			return
		}
	}
}

// luaSpelling is the Lua for functions of Python and JavaScript that
// scripts ported by hand reach for.
var luaSpelling = map[string]string{
	"round":      "write math.floor(x + 0.5)",
	"math.round": "write math.floor(x + 0.5)",
	"len":        "write #x (a table's length, or a string's in bytes)",
	"str":        "write tostring(x)",
	"int":        "write math.floor(tonumber(x))",
	"float":      "write tonumber(x)",
}

// nilReason reports why path (a.b.c) is nil, or "" if it is not.
func (m *Machine) nilReason(path []string, called bool) string {
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

// seatNames lists the functions of the seat table.
func (m *Machine) seatNames() []string {
	var names []string
	if t, ok := m.L.GetGlobal("seat").(*lua.LTable); ok {
		t.ForEach(func(k, _ lua.LValue) { names = append(names, k.String()) })
	}
	return names
}

// globalNames lists the defined globals, for suggestions.
func (m *Machine) globalNames() []string {
	var names []string
	m.L.G.Global.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok {
			names = append(names, string(s))
		}
	})
	return names
}
