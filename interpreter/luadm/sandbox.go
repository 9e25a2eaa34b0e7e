// Package luadm is seat's Lua datamodel: the sandboxed Lua state that
// SEATML scripts and SCXML documents with datamodel="lua" run in, and the
// evaluation of expressions, conditions, locations and scripts in it.
package luadm

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// maxArrayIndex bounds a table's array part (gopher-lua's MaxArrayIndex,
// 67,108,864 by default). t[n] = v fills every index from the array's end
// to n with nil in one Go call, which neither limit can interrupt:
// t[60000000] = true took 4.7 GB and seconds, from one index a peer could
// choose. 4,194,304 entries are 64 MiB, the default script memory limit;
// a larger integer key is kept in the hash part: reading and writing it
// work, # does not count it (docs/seatml.md §9.3).
const maxArrayIndex = 1 << 22

func init() { lua.MaxArrayIndex = maxArrayIndex }

// Sandbox returns a Lua state with only the libraries SEATML §9.3 allows:
// base without dofile and loadfile (load takes strings only), string without
// dump, table, math, and os reduced to time, clock and date. The string
// metatable is hidden, and setmetatable takes tables only. The library
// functions that could run long in one Go call are replaced by linear ones
// that stop at the script limits (docs/seatml.md §9.3 lists them all);
// memory bounds the results string.rep and table.concat may build.
func Sandbox(memory uint64) *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 200, MinimizeStackMemory: true, RegistrySize: 256, RegistryMaxSize: 1 << 20})
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
	// The library functions that could run long in one Go call are seat's
	// own (strlib.go, tablib.go): linear, and stopped at the script
	// limits as the VM is between instructions.
	if s, ok := L.GetGlobal("string").(*lua.LTable); ok {
		s.RawSetString("dump", lua.LNil)
		for name, fn := range map[string]lua.LGFunction{
			"find": strFind, "match": strMatch, "gmatch": strGmatch, "gfind": strGmatch,
			"gsub": strGsub, "rep": strRep(memory), "byte": strByte, "format": strFormat,
		} {
			s.RawSetString(name, L.NewFunction(fn))
		}
		for name, f := range map[string]func(string) string{"upper": upper, "lower": lower, "reverse": reverse} {
			s.RawSetString(name, L.NewFunction(strCopy("string."+name, f, memory)))
		}
	}
	if t, ok := L.GetGlobal("table").(*lua.LTable); ok {
		t.RawSetString("concat", L.NewFunction(tableConcat(memory)))
		t.RawSetString("sort", L.NewFunction(tableSort))
	}
	L.SetGlobal("unpack", L.NewFunction(baseUnpack))
	L.SetGlobal("collectgarbage", L.NewFunction(collectGarbage))
	// Strings share one metatable: scripts may use its methods but neither
	// see nor replace it (getmetatable("") is false, as in Lua 5.1
	// sandboxes; gopher-lua's setmetatable would accept a string).
	if mt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		mt.RawSetString("__metatable", lua.LFalse)
	}
	L.SetGlobal("setmetatable", Guarded(L, L.GetGlobal("setmetatable"), func(L *lua.LState) { L.CheckTable(1) }))
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
		// gopher-lua's os.date writes its format in one Go call that
		// cannot be stopped, about 24 bytes for each 2 of it (%c): a
		// 6 MB format took 555 ms under a 50 ms limit.
		os.RawSetString("date", Guarded(L, os.RawGetString("date"), func(L *lua.LState) {
			if f, ok := L.Get(1).(lua.LString); ok && len(f) > maxDateFormat {
				L.RaiseError("os.date: format too long (%s; os.date takes %s at most)", BytesText(uint64(len(f))), BytesText(maxDateFormat))
			}
		}))
	}
	// Lua 5.1's load reads a function; seat's takes a string, as loadstring.
	L.SetGlobal("load", L.NewFunction(baseLoad))
	L.SetGlobal("loadstring", L.NewFunction(baseLoadString))
	return L
}

// maxDateFormat is the longest format os.date takes: its result is 786 KB
// at most (%c repeated), written in about 6 ms.
const maxDateFormat = 64 << 10

// Guarded returns fn behind check: check sees the arguments first and may
// raise an error; otherwise fn gets them all and its results are returned.
func Guarded(L *lua.LState, fn lua.LValue, check func(*lua.LState)) *lua.LFunction {
	return L.NewFunction(func(L *lua.LState) int {
		check(L)
		top := L.GetTop()
		L.Push(fn)
		for i := 1; i <= top; i++ {
			L.Push(L.Get(i))
		}
		L.Call(top, lua.MultRet)
		return L.GetTop() - top
	})
}

// BytesText formats a byte count for messages: "256 MiB", "1.5 KiB", "12 B".
func BytesText(n uint64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
