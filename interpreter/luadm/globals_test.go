package luadm

import (
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// TestProtectGlobals: the globals' metatable a front end installs answers
// its own names through Get (a value, or nil, without a library behind
// it), lets Set take an assignment, refuse it with an error or leave it
// stored, passes every other name on to the libraries (still opened on
// first use) and cannot be read or replaced by a script. The hooks see
// only string names the globals table does not hold.
func TestProtectGlobals(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		// Get: its names, a name it declines, a library, an unknown name.
		{`return answer, type(rawget(_G, "answer"))`, "42 nil"},
		{`return os, declined`, "nil nil"},
		{`return rawget(_G, "math"), math.floor(2.5), rawget(_G, "math") == math`, "nil 2 true"},
		{`return ("x"):upper(), string.rep("ab", 2), nothing`, "X abab nil"},
		{`rawset(_G, "answer", 7); return answer`, "7"},
		{`_G[1] = "one"; local two = _G[2]; return rawget(_G, 1), "[" .. seen .. "]"`, "one []"},
		{`x = 1; local y = x + x; return y, seen`, "2 set x"},
		// Set: taken (not stored), refused, stored.
		{`kept = "受付"; return rawget(_G, "kept"), got, kept`, "nil 受付 受付"},
		{`mine = 5; return rawget(_G, "mine"), mine, got`, "5 5 nil"},
		{`local ok, err = pcall(function() fixed = 1 end); return ok, err, rawget(_G, "fixed")`, "false <string>:1: fixed cannot be assigned nil"},
		// Protection.
		{`return getmetatable(_G), (pcall(setmetatable, _G, {})), answer`, "false false 42"},
		{`return (pcall(setmetatable, _G, nil)), answer`, "false 42"},
	} {
		setup := func(L *lua.LState) {
			var got lua.LValue = lua.LNil
			var seen []string // the hooks' calls before this read of seen
			ProtectGlobals(L, Globals{
				Get: func(L *lua.LState, name string) (lua.LValue, bool) {
					switch name {
					case "answer":
						return lua.LNumber(42), true
					case "os":
						return lua.LNil, true // answered nil: os stays closed
					case "got", "kept":
						return got, true
					case "seen":
						return lua.LString(strings.Join(seen, ",")), true
					}
					seen = append(seen, "get "+name)
					return nil, false
				},
				Set: func(L *lua.LState, name string, v lua.LValue) bool {
					seen = append(seen, "set "+name)
					switch name {
					case "kept":
						got = v
						return true
					case "fixed":
						L.RaiseError("%s cannot be assigned", name)
					}
					return false
				},
			})
		}
		got, err, _, _ := call(t, time.Second, setup, c.script)
		if err != nil || got != c.want {
			t.Errorf("%s\ngot %q (%v), want %q", c.script, got, err, c.want)
		}
	}
}
