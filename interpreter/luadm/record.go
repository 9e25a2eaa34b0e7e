package luadm

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// Record is Go data that scripts read as a read-only table, without a
// table being built: its fields are read on access, pairs walks them
// (the sandbox's pairs honours __pairs), and FromLua gives its GoValue.
// A record that is a fmt.Stringer is named so by tostring and in the
// error a script gets for assigning one of its fields.
// A record's Lua values belong to one Lua state: a Lazy record read by
// another state gives that state a record of its own.
// An event's data is one: most scripts read one field of it, if any.
type Record interface {
	// Field is the named field's value, nil if there is none.
	Field(L *lua.LState, name string) lua.LValue
	// Fields are the names of the fields there are, in order.
	Fields() []string
	// GoValue is the record as plain values (FromLua): fromLua converts
	// a field whose Lua value a script may have changed (a table).
	GoValue(fromLua func(lua.LValue) (any, error)) (any, error)
}

const recordType = "seat.record"

// SetRecord makes ud the script's view of r: ud.Value is r, its
// metatable the records' (one per Lua state). ud may be part of r, so
// that the view costs no allocation of its own.
func SetRecord(L *lua.LState, ud *lua.LUserData, r Record) *lua.LUserData {
	return SetRecordMeta(ud, r, RecordMetatable(L))
}

// RecordMetatable is the records' metatable of L, for a caller that makes
// a record per event to keep (SetRecordMeta) instead of looking it up in
// L's registry each time.
func RecordMetatable(L *lua.LState) *lua.LTable {
	if mt, ok := L.GetTypeMetatable(recordType).(*lua.LTable); ok {
		return mt
	}
	return recordMetatable(L)
}

// SetRecordMeta is SetRecord with the metatable RecordMetatable gave.
func SetRecordMeta(ud *lua.LUserData, r Record, mt *lua.LTable) *lua.LUserData {
	ud.Value, ud.Metatable = r, mt
	return ud
}

func recordMetatable(L *lua.LState) *lua.LTable {
	mt := L.NewTypeMetatable(recordType)
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		r := checkRecord(L)
		if k, ok := L.Get(2).(lua.LString); ok {
			L.Push(r.Field(L, string(k)))
		} else {
			L.Push(lua.LNil)
		}
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("%s is read-only: copy what you change into a table of your own", describe(L))
		return 0
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(describe(L)))
		return 1
	}))
	mt.RawSetString("__pairs", PairsMethod(L))
	mt.RawSetString("__metatable", lua.LFalse)
	return mt
}

// PairsMethod is a __pairs metamethod that walks a record's fields (for
// a userdata with a metatable of its own that is also a Record).
func PairsMethod(L *lua.LState) *lua.LFunction {
	next := L.NewFunction(func(L *lua.LState) int {
		r := checkRecord(L)
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
	return L.NewFunction(func(L *lua.LState) int {
		L.Push(next)
		L.Push(L.Get(1))
		L.Push(lua.LNil)
		return 3
	})
}

// describe is argument 1 as a record says it is (fmt.Stringer), else as
// Lua writes a userdata.
func describe(L *lua.LState) string {
	if s, ok := checkRecord(L).(fmt.Stringer); ok {
		return s.String()
	}
	return L.Get(1).String()
}

// checkRecord is argument 1 as a record, or an argument error (the
// iterator pairs gives can be called with anything).
func checkRecord(L *lua.LState) Record {
	if ud, ok := L.Get(1).(*lua.LUserData); ok {
		if r, ok := ud.Value.(Record); ok {
			return r
		}
	}
	L.ArgError(1, recordType+" expected, got "+L.Get(1).Type().String())
	return nil
}

// pairsWithMeta is pairs that honours a __pairs metamethod, as Lua 5.2's
// does for a userdata: a record's fields are walked as a table's. A
// table's __pairs is not honoured: scripts are Lua 5.1's, which do not
// expect it, and a table is walked as it always was.
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
		L.CheckTable(1) // the error names pairs, not base
		L.Push(base)
		L.Push(L.Get(1))
		L.Call(1, 3)
		return 3
	}
}
