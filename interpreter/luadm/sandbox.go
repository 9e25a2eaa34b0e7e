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
//
// string, table, math and os are opened on first use: a Lua state costs
// kilobytes per library, and ten thousand sessions each have one while
// most never touch math or os. The globals' metatable answers their names
// (ProtectGlobals' replacement passes them on to it), and the string
// metatable opens string at a script's first method call on a string.
// Until then rawget(_G, "math") and pairs(_G) do not see them; once
// opened, a library a script removes (math = nil) stays removed.
func Sandbox(memory uint64) *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 200, MinimizeStackMemory: true, RegistrySize: 128, RegistryMaxSize: 1 << 20})
	L.Push(L.NewFunction(lua.OpenBase))
	L.Push(lua.LString(lua.BaseLibName))
	L.Call(1, 0)
	for _, name := range []string{"dofile", "loadfile", "require", "module", "_printregs", "getfenv", "setfenv", "newproxy"} {
		L.SetGlobal(name, lua.LNil)
	}
	L.SetGlobal("unpack", L.NewFunction(baseUnpack))
	L.SetGlobal("collectgarbage", L.NewFunction(collectGarbage))
	L.SetGlobal("pairs", L.NewFunction(pairsWithMeta(L.GetGlobal("pairs"))))
	L.SetGlobal("setmetatable", Guarded(L, L.GetGlobal("setmetatable"), func(L *lua.LState) { L.CheckTable(1) }))
	// Lua 5.1's load reads a function; seat's takes a string, as loadstring.
	L.SetGlobal("load", L.NewFunction(baseLoad))
	L.SetGlobal("loadstring", L.NewFunction(baseLoadString))

	libs := &lazyLibs{memory: memory}
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(libs.index))
	L.G.Global.Metatable = mt
	// Strings' methods ("x"):upper() open string on first use too. Scripts
	// may use them but neither see nor replace the metatable
	// (getmetatable("") is false, as in Lua 5.1 sandboxes; gopher-lua's
	// setmetatable would accept a string).
	smt := L.NewTable()
	smt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.Push(libs.str(L).RawGet(L.Get(2)))
		return 1
	}))
	smt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(lua.LString(""), smt)
	libs.smt = smt
	return L
}

// lazyLibs opens a sandbox's libraries on first use.
type lazyLibs struct {
	memory uint64
	opened [4]bool // by lazyOpeners' order
	string *lua.LTable
	smt    *lua.LTable // the strings' metatable
}

// lazyOpeners are the libraries opened on first use, with how.
var lazyOpeners = [...]struct {
	name string
	open func(*lazyLibs, *lua.LState) *lua.LTable
}{
	{"string", (*lazyLibs).str},
	{"table", (*lazyLibs).table},
	{"math", func(z *lazyLibs, L *lua.LState) *lua.LTable { return z.open(L, lua.OpenMath, lua.MathLibName) }},
	{"os", (*lazyLibs).os},
}

// LibraryNames are the libraries a sandbox opens on first use: names a
// script may use though the globals do not list them yet (suggestions for
// a misspelled name).
func LibraryNames() []string {
	names := make([]string, len(lazyOpeners))
	for i, l := range lazyOpeners {
		names[i] = l.name
	}
	return names
}

// index is the globals' __index: a library's name opens it, once.
func (z *lazyLibs) index(L *lua.LState) int {
	k, _ := L.Get(2).(lua.LString)
	for i, lib := range lazyOpeners {
		if string(k) == lib.name && !z.opened[i] { // opened: then removed by a script
			z.opened[i] = true
			L.Push(lib.open(z, L))
			return 1
		}
	}
	L.Push(lua.LNil)
	return 1
}

// open runs a gopher-lua library opener, which sets the global, and
// returns its table.
func (z *lazyLibs) open(L *lua.LState, opener lua.LGFunction, name string) *lua.LTable {
	L.Push(L.NewFunction(opener))
	L.Push(lua.LString(name))
	L.Call(1, 1)
	lib := L.Get(-1).(*lua.LTable)
	L.Pop(1)
	return lib
}

// str opens string without dump, with seat's linear functions that stop
// at the script limits (strlib.go), and hides its metatable.
func (z *lazyLibs) str(L *lua.LState) *lua.LTable {
	if z.string != nil {
		return z.string
	}
	// A string method may open it while the script has a global string
	// of its own: gopher-lua's opener would fill that (a table) or fail
	// (a name conflict). The library is opened on its own and the
	// script's global kept.
	g := L.G.Global
	mine := g.RawGetString(lua.StringLibName)
	if mine != lua.LNil {
		g.RawSetString(lua.StringLibName, lua.LNil)
	}
	s := z.open(L, lua.OpenString, lua.StringLibName)
	if mine != lua.LNil {
		g.RawSetString(lua.StringLibName, mine)
	}
	s.RawSetString("dump", lua.LNil)
	for name, fn := range map[string]lua.LGFunction{
		"find": strFind, "match": strMatch, "gmatch": strGmatch, "gfind": strGmatch,
		"gsub": strGsub, "rep": strRep(z.memory), "byte": strByte, "format": strFormat,
	} {
		s.RawSetString(name, L.NewFunction(fn))
	}
	for name, f := range map[string]func(string) string{"upper": upper, "lower": lower, "reverse": reverse} {
		s.RawSetString(name, L.NewFunction(strCopy("string."+name, f, z.memory)))
	}
	// OpenString made the library the strings' metatable: a script
	// could then unhide it (rawset(string, "__metatable", nil)) and
	// replace every string's methods (string.__index = …). The strings
	// keep their own hidden metatable, which now looks in the library.
	s.RawSetString("__index", lua.LNil)
	z.smt.RawSetString("__index", s)
	L.SetMetatable(lua.LString(""), z.smt)
	z.string = s
	z.opened[0] = true
	return s
}

// table opens table with seat's linear concat and sort (tablib.go).
func (z *lazyLibs) table(L *lua.LState) *lua.LTable {
	t := z.open(L, lua.OpenTable, lua.TabLibName)
	t.RawSetString("concat", L.NewFunction(tableConcat(z.memory)))
	t.RawSetString("sort", L.NewFunction(tableSort))
	return t
}

// os opens os reduced to time, clock and date.
func (z *lazyLibs) os(L *lua.LState) *lua.LTable {
	os := z.open(L, lua.OpenOs, lua.OsLibName)
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
	return os
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
