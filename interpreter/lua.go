package interpreter

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// newSandbox returns a Lua state with only the libraries SEATML §9.3 allows:
// base without dofile and loadfile (load takes strings only), string without
// dump, table, math, and os reduced to time, clock and date. The string
// metatable is hidden, and setmetatable takes tables only.
func newSandbox() *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 200, MinimizeStackMemory: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.OsLibName, lua.OpenOs},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range []string{"dofile", "loadfile", "require", "module", "_printregs", "getfenv", "setfenv", "newproxy"} {
		L.SetGlobal(name, lua.LNil)
	}
	if s, ok := L.GetGlobal("string").(*lua.LTable); ok {
		s.RawSetString("dump", lua.LNil)
	}
	// Strings share one metatable: scripts may use its methods but neither
	// see nor replace it (getmetatable("") is false, as in Lua 5.1
	// sandboxes; gopher-lua's setmetatable would accept a string).
	if mt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		mt.RawSetString("__metatable", lua.LFalse)
	}
	setmetatable := L.GetGlobal("setmetatable")
	L.SetGlobal("setmetatable", L.NewFunction(func(L *lua.LState) int {
		L.CheckTable(1)
		top := L.GetTop()
		L.Push(setmetatable)
		for i := 1; i <= top; i++ {
			L.Push(L.Get(i))
		}
		L.Call(top, 1)
		return 1
	}))
	if os, ok := L.GetGlobal("os").(*lua.LTable); ok {
		keep := map[string]bool{"time": true, "clock": true, "date": true}
		var drop []lua.LValue
		os.ForEach(func(k, _ lua.LValue) {
			if !keep[k.String()] {
				drop = append(drop, k)
			}
		})
		for _, k := range drop {
			os.RawSet(k, lua.LNil)
		}
	}
	// Lua 5.1's load reads a function; seat's takes a string, as loadstring.
	loadString := L.GetGlobal("loadstring")
	L.SetGlobal("load", L.NewFunction(func(L *lua.LState) int {
		if L.Get(1).Type() != lua.LTString {
			L.ArgError(1, "load takes a string in seat")
		}
		s := L.CheckString(1)
		if strings.HasPrefix(s, "\x1bLua") {
			L.ArgError(1, "binary chunks are not allowed")
		}
		top := L.GetTop()
		L.Push(loadString)
		L.Push(lua.LString(s))
		if top >= 2 {
			L.Push(L.Get(2))
			L.Call(2, lua.MultRet)
		} else {
			L.Call(1, lua.MultRet)
		}
		return L.GetTop() - top
	}))
	return L
}

// ScriptError is a failed Lua chunk or a runaway.
type ScriptError struct {
	File    string
	Line    int
	Msg     string
	Timeout bool
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
func scriptError(ch *chunk, err error, timedOut bool, limit string) *ScriptError {
	se := &ScriptError{File: ch.file, Line: ch.line}
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
	if timedOut {
		se.Timeout = true
		msg = "script stopped: time limit of " + limit + " exceeded"
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
