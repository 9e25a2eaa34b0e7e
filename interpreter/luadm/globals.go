package luadm

import lua "github.com/yuin/gopher-lua"

// Globals are a front end's own globals: names it answers or watches
// through the globals' metatable instead of keeping them in the globals
// table (SEATML's event globals and py, SCXML's _event). Either hook may
// be nil.
type Globals struct {
	// Get answers the read of a string name the globals table does not
	// hold: its value and true, or false to leave the name to the
	// libraries (a library's name opens it; any other name is nil).
	Get func(L *lua.LState, name string) (lua.LValue, bool)
	// Set sees the assignment of v to a string name the globals table
	// does not hold, before it is stored: true if the front end took it
	// (nothing is stored), false to store it. It may refuse the
	// assignment by raising an error (L.RaiseError).
	Set func(L *lua.LState, name string, v lua.LValue) bool
}

// ProtectGlobals gives L's globals table the metatable that answers g's
// names and passes the others on to the libraries, opened on first use
// (Sandbox). The metatable is protected: getmetatable(_G) is false and
// setmetatable(_G, …) an error. Call it once, on a Sandbox's state.
//
// Only a name missing from the globals table reaches the hooks, and each
// such read or assignment costs one call of a hook: on the event path, a
// hook should be a closure (a method value adds a call) that checks for
// its own names inline first.
func ProtectGlobals(L *lua.LState, g Globals) {
	libs := globalsIndex(L)
	get, set := g.Get, g.Set
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		if k, ok := L.Get(2).(lua.LString); ok && get != nil {
			if v, ok := get(L, string(k)); ok {
				L.Push(v)
				return 1
			}
		}
		if libs != nil {
			return libs(L)
		}
		L.Push(lua.LNil)
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		t, k, v := L.CheckTable(1), L.Get(2), L.Get(3)
		if s, ok := k.(lua.LString); ok && set != nil && set(L, string(s), v) {
			return 0
		}
		t.RawSet(k, v)
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	L.G.Global.Metatable = mt
}

// globalsIndex returns the __index function of L's globals' metatable, if
// it is a Go function: ProtectGlobals calls it for the names the front
// end does not answer, so that the libraries still open on first use.
func globalsIndex(L *lua.LState) lua.LGFunction {
	if mt, ok := L.G.Global.Metatable.(*lua.LTable); ok {
		if f, ok := mt.RawGetString("__index").(*lua.LFunction); ok && f.IsG {
			return f.GFunction
		}
	}
	return nil
}
