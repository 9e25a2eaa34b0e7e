package interpreter

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/seatml/seat/interpreter/luadm"
)

// newSandbox returns the Lua sandbox of luadm. eSEAT's self, a table for
// the behavior's own values as eSEAT scripts keep them on their self
// (self.count = 0; docs/porting.md), is made on first use (installGlobals).
func newSandbox(memory uint64) *lua.LState {
	return luadm.Sandbox(memory)
}

// toText converts a script result for sending: strings as they are,
// numbers as Lua prints them, booleans as true or false.
func toText(v lua.LValue) (string, bool) {
	switch v.Type() {
	case lua.LTString, lua.LTNumber:
		return v.String(), true
	case lua.LTBool:
		if v == lua.LTrue {
			return "true", true
		}
		return "false", true
	}
	return "", false
}
