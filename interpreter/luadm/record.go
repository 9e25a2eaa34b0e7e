package luadm

import (
	lua "github.com/yuin/gopher-lua"
)

// Record is Go data that scripts read as a read-only table, without a
// table being built: its fields are read on access, pairs walks them
// (the sandbox's pairs honours __pairs), and FromLua gives its GoValue.
// An event's data is one: most scripts read one field of it, if any.
type Record interface {
	// Field is the named field's value, nil if there is none.
	Field(L *lua.LState, name string) lua.LValue
	// Fields are the names of the fields there are, in order.
	Fields() []string
	// GoValue is the record as plain values (FromLua, JSON).
	GoValue() any
}

const recordType = "seat.record"

// SetRecord makes ud the script's view of r: ud.Value is r, its
// metatable the records' (one per Lua state). ud may be part of r, so
// that the view costs no allocation of its own.
func SetRecord(L *lua.LState, ud *lua.LUserData, r Record) *lua.LUserData {
	mt, ok := L.GetTypeMetatable(recordType).(*lua.LTable)
	if !ok {
		mt = recordMetatable(L)
	}
	ud.Value, ud.Metatable = r, mt
	return ud
}

func recordMetatable(L *lua.LState) *lua.LTable {
	mt := L.NewTypeMetatable(recordType)
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		r := L.CheckUserData(1).Value.(Record)
		if k, ok := L.Get(2).(lua.LString); ok {
			L.Push(r.Field(L, string(k)))
		} else {
			L.Push(lua.LNil)
		}
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("%s is read-only: copy what you change into a table of your own", L.Get(1).String())
		return 0
	}))
	next := L.NewFunction(func(L *lua.LState) int {
		r := L.CheckUserData(1).Value.(Record)
		names := r.Fields()
		i := 0
		if k, ok := L.Get(2).(lua.LString); ok {
			for i < len(names) && names[i] != string(k) {
				i++
			}
			i++
		}
		if i >= len(names) {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LString(names[i]))
		L.Push(r.Field(L, names[i]))
		return 2
	})
	mt.RawSetString("__pairs", L.NewFunction(func(L *lua.LState) int {
		L.Push(next)
		L.Push(L.Get(1))
		L.Push(lua.LNil)
		return 3
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	return mt
}

// pairsWithMeta is pairs that honours a __pairs metamethod, as Lua 5.2's
// does: a record's fields are walked as a table's.
func pairsWithMeta(base lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		if ud, ok := L.Get(1).(*lua.LUserData); ok {
			if mm := L.GetMetaField(ud, "__pairs"); mm != lua.LNil {
				L.Push(mm)
				L.Push(ud)
				L.Call(1, 3)
				return 3
			}
		}
		L.Push(base)
		L.Push(L.Get(1))
		L.Call(1, 3)
		return 3
	}
}
