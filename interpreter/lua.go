package interpreter

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/seatml"
)

// newSandbox returns the Lua sandbox of luadm. eSEAT's self, a table for
// the behavior's own values as eSEAT scripts keep them on their self
// (self.count = 0; docs/porting.md), is made on first use (installGlobals).
func newSandbox(memory uint64) *lua.LState {
	return luadm.Sandbox(memory)
}

// ScriptError is a failed Lua chunk or a runaway.
type ScriptError struct {
	File    string
	Line    int
	Msg     string
	Timeout bool // stopped at the time limit
	Memory  bool // stopped at the memory limit
}

func (e *ScriptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

var locRE = regexp.MustCompile(`^(.*?):(\d+): `)

// scriptError turns a gopher-lua error into a ScriptError naming the file
// and line.
func scriptError(ch *seatml.Chunk, err error, stopped luadm.StopReason, opts *Options) *ScriptError {
	se := &ScriptError{File: ch.File, Line: ch.Line}
	msg := err.Error()
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		msg = ae.Object.String()
	}
	if m := locRE.FindStringSubmatch(msg); m != nil {
		se.File = m[1]
		fmt.Sscanf(m[2], "%d", &se.Line)
		msg = msg[len(m[0]):]
	}
	switch stopped {
	case luadm.StoppedTime, luadm.StoppedAborted:
		se.Timeout = true
	case luadm.StoppedMemory:
		se.Memory = true
	}
	if stopped != luadm.NotStopped {
		msg = luadm.StopText(stopped, opts.ScriptTimeout, opts.ScriptMemory)
	}
	se.Msg = strings.TrimSpace(msg)
	return se
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
