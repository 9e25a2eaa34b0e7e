package luadm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// call runs script in a sandbox under a watchdog of the given time limit
// (and a 256 MiB memory limit), after setup has put its inputs in the
// state; it returns the results as text, the error, why the watchdog
// stopped it and how long the call took.
func call(t *testing.T, limit time.Duration, setup func(L *lua.LState), script string) (string, error, StopReason, time.Duration) {
	t.Helper()
	L := Sandbox(256 << 20)
	defer L.Close()
	w := NewWatchdog(L, limit, 256<<20)
	defer w.Close()
	if setup != nil {
		setup(L)
	}
	fn, err := L.LoadString(script)
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	start := time.Now()
	w.Start()
	err = L.PCall(0, lua.MultRet, nil)
	stopped := w.Stop()
	took := time.Since(start)
	var out []string
	for i := 1; i <= L.GetTop(); i++ {
		out = append(out, L.Get(i).String())
	}
	return strings.Join(out, " "), err, stopped, took
}

// TestLibraryCallsStopAtTheLimit: a library call that runs long in one Go
// call (a pattern that backtracks over a long subject, a sort or a concat
// of a large table, loading a large chunk) is stopped at the time limit,
// as a Lua loop is, and pcall cannot catch it. Before, each ran to its
// end: the finds, gsub and concat for minutes, the sort of strings for
// seconds, and the limit was noticed only then.
func TestLibraryCallsStopAtTheLimit(t *testing.T) {
	const limit = 20 * time.Millisecond
	subject := func(L *lua.LState) { L.SetGlobal("s", lua.LString(strings.Repeat("a", 20000))) }
	bigTable := func(L *lua.LState) {
		tb := L.NewTable()
		for i := range 2_000_000 {
			tb.Append(lua.LNumber((i * 7919) % 1_000_003))
		}
		L.SetGlobal("t", tb)
	}
	// A long set: the matcher reads it whole at each step ([...] and
	// %f[...]), which must count as more than one step.
	longSet := func(L *lua.LState) {
		L.SetGlobal("s", lua.LString(strings.Repeat("a", 100000)))
		L.SetGlobal("set", lua.LString(strings.Repeat("b", 1000000)))
	}
	words := func(L *lua.LState) {
		tb := L.NewTable()
		for i := range 3_000_000 {
			tb.Append(lua.LString(fmt.Sprint("語", i)))
		}
		L.SetGlobal("t", tb)
	}
	// Two long equal strings many times: each comparison reads them
	// whole.
	longStrings := func(L *lua.LState) {
		tb := L.NewTable()
		s := []lua.LString{lua.LString(strings.Repeat("x", 10_000_000)), lua.LString(strings.Repeat("x", 10_000_000))}
		for i := range 2000 {
			tb.Append(s[i%2])
		}
		L.SetGlobal("t", tb)
	}
	for _, c := range []struct {
		name   string
		setup  func(*lua.LState)
		script string
	}{
		{"find", subject, `return s:find("a-a-a-b")`},
		{"match", subject, `return s:match("(a*)(a*)b")`},
		{"gmatch", subject, `for w in s:gmatch("a-a-b") do end`},
		{"gsub", subject, `return s:gsub("a-a-b", "x")`},
		{"pcall-find", subject, `while true do pcall(string.find, s, "a-a-a-b") end`},
		{"long-set", longSet, `return s:find("[" .. set .. "]")`},
		{"long-set-repeated", longSet, `return s:match("[" .. set .. "a]*")`},
		{"long-frontier", longSet, `return s:find("%f[" .. set .. "]")`},
		{"sort", bigTable, `table.sort(t)`},
		{"sort-strings", words, `table.sort(t)`},
		{"sort-function", bigTable, `table.sort(t, function(a, b) return a > b end)`},
		{"sort-long-strings", longStrings, `table.sort(t)`},
		{"concat", words, `return #table.concat(t, "、")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err, stopped, took := call(t, limit, c.setup, c.script)
			if stopped != StoppedTime || err == nil {
				t.Errorf("not stopped for time (%v, %v, %q) after %v", stopped, err, out, took)
			}
			// Generous for a loaded machine; before, these took seconds
			// to minutes.
			if took > limit+time.Second {
				t.Errorf("stopped after %v; the limit is %v", took, limit)
			}
			t.Logf("stopped after %v", took)
		})
	}
}

// TestLibraryCallsAreLinear: what took gopher-lua seconds in one call
// (the 65,000-character line through gsub: 8-19 s; unpack of
// 200,000 values: 15.8 s; concat and byte, which pushed every value the
// same way) takes milliseconds, with the right results.
func TestLibraryCallsAreLinear(t *testing.T) {
	line := func(L *lua.LState) { L.SetGlobal("line", lua.LString(strings.Repeat("<", 65000))) }
	for _, c := range []struct {
		name, script, want string
	}{
		{"gsub", `local s, n = line:gsub("<", "&lt;") return #s, n`, "260000 65000"},
		{"gsub-function", `local s, n = line:gsub("<", function(c) return "&lt;" end) return #s, n`, "260000 65000"},
		{"gsub-table", `local s, n = line:gsub("<", {["<"] = "&lt;"}) return #s, n`, "260000 65000"},
		{"gsub-empty", `local s, n = line:gsub("", "-") return #s, n`, "130001 65001"},
		{"gmatch", `local n = 0 for c in line:gmatch("<") do n = n + 1 end return n`, "65000"},
		{"find-all", `local n, i = 0, 1 while true do local b, e = line:find("<", i) if not b then break end n, i = n + 1, e + 1 end return n`, "65000"},
		{"greedy", `return #line:match("^(<*)$")`, "65000"},
		{"unpack", `return select("#", unpack({}, 1, 131072))`, "131072"},
		{"byte", `return select("#", line:byte(1, -1))`, "65000"},
		{"concat", `local t = {} for i = 1, 65000 do t[i] = "<" end return #table.concat(t, ",")`, "129999"},
		{"rep", `return #string.rep("<>", 1e6)`, "2000000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err, _, took := call(t, 20*time.Second, line, c.script)
			if err != nil || out != c.want {
				t.Fatalf("%q, %v; want %q", out, err, c.want)
			}
			if took > 2*time.Second { // about 10 ms each on the 2-core VM
				t.Errorf("took %v", took)
			}
		})
	}
}

// TestStringLibraryIsLua51: the string functions seat replaced give Lua
// 5.1's results, Japanese text included (bytes, as Lua counts), where
// gopher-lua's differed: %f frontiers, find's init past a match, gsub's
// limit of 0, byte with one argument, format's checks.
func TestStringLibraryIsLua51(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`return ("hello world"):find("o w")`, "5 7"},
		{`return ("hello world"):find("o", 6)`, "8 8"},
		{`return ("hello world"):find("", 3)`, "3 2"},
		{`return ("a.c"):find(".", 1, true)`, "2 2"},
		{`return ("abc"):find("b", -1)`, "nil"},
		{`return ("abc"):find("b", -10)`, "2 2"},
		{`return ("key = value"):find("(%w+)%s*=%s*(%w+)")`, "1 11 key value"},
		{`return ("  こんにちは  "):match("^%s*(.-)%s*$")`, "こんにちは"},
		{`return ("名前=花子"):match("^(.-)=(.*)$")`, "名前 花子"},
		{`return ("abc"):match("()b()")`, "2 3"},
		{`return select("#", ("x"):match("y"))`, "1"},
		{`return ("THE (quick) fox"):gsub("%f[%a]%a+", "<%0>")`, "<THE> (<quick>) <fox> 3"},
		{`return ("f(a(b)c)d"):match("%b()")`, "(a(b)c)"},
		{`return ("hello hello"):match("(h%a+) %1")`, "hello"},
		// A back reference to a position capture matches nothing (it
		// was a Go panic, "slice bounds out of range [:-2]").
		{`return ("abc"):find("()%1")`, "nil"},
		{`return ("abc"):match("()a%1")`, "nil"},
		{`return ("abc"):gsub("()%1", "x")`, "abc 0"},
		{`return select("#", ("abc"):gmatch("(a)()%2")())`, "0"},
		{`return ("abc"):gsub("", "-")`, "-a-b-c- 4"},
		{`return ("abc"):gsub(".", "x", 0)`, "abc 0"},
		{`return ("abc"):gsub(".", "x", 2)`, "xxc 2"},
		{`return ("hello"):gsub("^h", "J")`, "Jello 1"},
		{`return ("abc"):gsub("b", "%%")`, "a%c 1"},
		{`return ("abc"):gsub("b", "50%")`, "a50%c 1"},
		{`return ("abc"):gsub("(b)", "[%1%0]")`, "a[bb]c 1"},
		{`return ("abc"):gsub("b", 7)`, "a7c 1"},
		{`return ("abc"):gsub("%w", {a = "A", b = false})`, "Abc 3"},
		{`return ("日本語"):gsub("本", "[%0]")`, "日[本]語 1"},
		{`local t = {} for k, v in ("a=1, b=2"):gmatch("(%w+)=(%w+)") do t[#t+1] = k .. v end return table.concat(t, ",")`, "a1,b2"},
		{`local n = 0 for w in ("^a^b"):gmatch("^%a") do n = n + 1 end return n`, "2"},
		{`return ("abc"):byte()`, "97"},
		{`return ("abc"):byte(1, -1)`, "97 98 99"},
		{`return ("abc"):byte(10)`, ""},
		{`return ("ab"):rep(3)`, "ababab"},
		// upper and lower change ASCII letters only, byte by byte.
		{`return ("héllo ａｂｃ ÀÉ 日本 \255"):upper() == "HéLLO ａｂｃ ÀÉ 日本 \255"`, "true"},
		{`return ("HéLLO ＡＢＣ ÀÉ 日本 \255"):lower() == "héllo ＡＢＣ ÀÉ 日本 \255"`, "true"},
		{`return #("\255"):rep(1000):upper(), #("Ⱥ"):rep(1000):lower()`, "1000 2000"},
		{`return string.format("%d %s %5.2f %x %q", 3, "x", 3.14159, 255, "a")`, `3 x  3.14 ff "a"`},
		{`return string.format("%5s|%-5s|%%", "ab", "cd")`, "   ab|cd   |%"},
		{`return string.format("%s は %d 歳", "花子", 7)`, "花子 は 7 歳"},
		// format is C's sprintf's, not Go's fmt's: widths and
		// precisions count bytes, %c is one byte, %o/%u/%x/%X take the
		// number as unsigned, %g has 6 digits, inf and nan as C, %q as
		// Lua reads back, strings read as numbers as Lua reads them.
		{`return string.format("[%5s|%.2s|%-4s]", "日", "日本", "é")`, "[  日|\xe6\x97|é  ]"},
		{`return string.format("%c%c%c", 200, 0x3042, -1) == "\200\066\255"`, "true"},
		{`return string.format("%x %X %o %u", -1, -3.7, 8, 5)`, "ffffffffffffffff FFFFFFFFFFFFFFFD 10 5"},
		{`return string.format("%x %x %d", 2^64, 0/0, 1e20)`, "0 8000000000000000 -9223372036854775808"},
		{`return string.format("%g %g %g %.3g", 1234567, 0.1 + 0.2, 1e-5, 0.0001234)`, "1.23457e+06 0.3 1e-05 0.000123"},
		{`return string.format("%5.1f|%f|%E|%+f", 1/0, -1/0, 1/0, 1/0)`, "  inf|-inf|INF|+inf"},
		{`return string.format("%#x %#o %#.0o %+x % x %.0d|%#X", 0, 0, 0, 255, 255, 0, 255)`, "0 0 0 ff ff |0XFF"},
		{`return string.format("%05s|%05c|%-05d|%05.3d|%+05d", "ab", 65, 5, 7, 5)`, "   ab|    A|5    |  007|+0005"},
		{`return string.format("%10q", "x")`, `"x"`},
		{`return string.format("%q", "a\n\"\0\r\\\1")`, "\"a\\\n\\\"\\000\\r\\\\\x01\""},
		{`local s = "a\1\255\0\226\128\139\"\\\n\r\t" return loadstring("return " .. string.format("%q", s))() == s`, "true"},
		{`return string.format("%d %d %d %.1f", "010", " 0x10 ", "1e2", "-inf")`, "10 16 100 -inf"},
		{`return string.format("%s %s", 12, "%d")`, "12 %d"},
		{`return unpack({1, 2, 3}, 2)`, "2 3"},
		{`return unpack({1, 2, 3}, 2, 4)`, "2 3 nil"},
		{`return table.concat({1, 2, 3}, "、", 2)`, "2、3"},
		// concat does not cut the range to the sequence, takes a number
		// as separator, and t[0] and unpack's t[0] are values too.
		{`return table.concat({1, 2, 3}, 0)`, "10203"},
		{`return table.concat({[0] = "z", "a"}, ",", 0)`, "z,a"},
		{`return table.concat({}, ",", 3, 1), table.concat({}, ",", 1, 0)`, " "},
		{`return unpack({[0] = "z", "a"}, 0)`, "z a"},
		{`return unpack({[-1] = "y", [0] = "z"}, -1, 0)`, "y z"},
		{`local t = {"b", "c", "a"} table.sort(t) return table.concat(t)`, "abc"},
		{`local t = {1, 3, 2} table.sort(t, function(a, b) return a > b end) return table.concat(t)`, "321"},
		{`return collectgarbage("count")`, "0"},
		{`return load("return 1 + 1")()`, "2"},
	} {
		out, err, _, _ := call(t, 5*time.Second, nil, c.script)
		if err != nil || out != c.want {
			t.Errorf("%s: %q, %v; want %q", c.script, out, err, c.want)
		}
	}
}

// TestLibraryErrors: malformed patterns and formats, results that would
// be over the bounds, and chunks nested too deep are Lua errors (or, for
// load, nil and the reason), not hangs or a crashed process.
func TestLibraryErrors(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`return ("abc"):find("[a")`, "malformed pattern (missing ']')"},
		{`return ("abc"):find("%")`, "malformed pattern (ends with '%')"},
		{`return ("abc"):find("(a")`, "unfinished capture"},
		{`return ("abc"):find("%b")`, "unbalanced pattern"},
		{`return ("abc"):gsub("(a)", "%2")`, "invalid capture index"},
		{`return ("abc"):find("%f")`, "missing '[' after '%f' in pattern"},
		{`return ("abc"):find(string.rep("(", 40) .. "a" .. string.rep(")", 40))`, "too many captures"},
		{`return ("a"):rep(300):find(string.rep("a?", 300))`, "pattern too complex"},
		{`return ("abc"):gsub("%w", {a = true})`, "invalid replacement value (a boolean)"},
		{`return string.format("%100d", 1)`, "invalid format (width or precision too long)"},
		{`return string.format("%d %d", 1)`, "bad argument #3 to format (no value)"},
		{`return string.format("%y", 1)`, "invalid option '%y' to 'format'"},
		{`return string.format("%5%")`, "bad argument #2 to format (no value)"},
		{`return string.format("%", 1)`, "invalid option '%' to 'format'"},
		{`return string.format("%s", nil)`, "bad argument #2 to format (string expected, got nil)"},
		{`return string.format("%q", {})`, "bad argument #2 to format (string expected, got table)"},
		{`return string.format("%d", print)`, "bad argument #2 to format (number expected, got function)"},
		{`return string.format("%x", "ff")`, "bad argument #2 to format (number expected, got string)"},
		{`return unpack({}, 1, 1e7)`, "too many results to unpack"},
		// A gmatch iterator whose call raised an error is as new for
		// the next call (its matcher's depth was left counting: after
		// 200 errors, "pattern too complex").
		{`local it = ("xa"):gmatch("a[") for i = 1, 250 do pcall(it) end return it()`, "malformed pattern (missing ']')"},
		{`return table.concat({1, 2, 3}, ",", 2, 5)`, "invalid value (nil) at index 4 in table for 'concat'"},
		{`return table.concat({1, 2, 3}, ",", 0)`, "invalid value (nil) at index 0 in table for 'concat'"},
		{`return table.concat({}, ",", 1, 3)`, "invalid value (nil) at index 1 in table for 'concat'"},
		{`return table.concat({1, {}, 3})`, "invalid value (table) at index 2 in table for 'concat'"},
		{`return table.concat({1, 2}, ",", 1, 2^31 - 1)`, "invalid value (nil) at index 3 in table for 'concat'"},
		{`return table.concat({1, 2}, {})`, "bad argument #2 to concat (string expected, got table)"},
		{`return ("x"):rep(1e6):byte(1, -1)`, "string slice too long"},
		{`local s, t = string.rep("x", 2^20), {} for i = 1, 300 do t[i] = s end return table.concat(t)`, "table.concat: the result (314572800 bytes) is over the script memory limit of 256 MiB"},
		{`return string.rep("abc", 1e10)`, "over the script memory limit"},
		{`return select(2, load("return " .. string.rep("f(", 300) .. "1" .. string.rep(")", 300)))`, "too many syntax levels"},
		{`return select(2, load(string.rep("do ", 300) .. string.rep("end ", 300)))`, "too many syntax levels"},
		{`return select(2, load(string.rep("function f() ", 1000) .. string.rep("end ", 1000)))`, "too many syntax levels"},
		{`return select(2, load(string.rep(" ", 2^17)))`, "chunk too large (128.0 KiB; load takes 64.0 KiB at most)"},
		// os.date writes its format in one Go call that cannot be
		// stopped: 6 MB of %c took 555 ms under a 50 ms limit.
		{`return os.date(("%c"):rep(40000))`, "os.date: format too long (78.1 KiB; os.date takes 64.0 KiB at most)"},
		{`return #os.date(("%Y"):rep(30000), 0), os.date("!%Y-%m-%d", 86400)`, "120000 1970-01-02"},
	} {
		out, err, _, took := call(t, 5*time.Second, nil, c.script)
		got := out
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%.80s: %q; want %q", c.script, got, c.want)
		}
		if took > 2*time.Second {
			t.Errorf("%.80s: took %v", c.script, took)
		}
	}
	// A string over the memory limit, grown over several calls, is not
	// copied again in one step.
	L := Sandbox(1 << 20)
	defer L.Close()
	L.SetGlobal("big", lua.LString(strings.Repeat("x", 2<<20)))
	for _, f := range []string{"upper", "lower", "reverse"} {
		err := L.DoString("return big:" + f + "()")
		if want := "string." + f + ": the result (2097152 bytes) is over the script memory limit of 1 MiB"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", f, err, want)
		}
	}
	// The slowest chunk found for gopher-lua's compiler, nested functions
	// just under the bound, filling the size bound: about 50 ms.
	nest := strings.Repeat("function f() ", 199) + strings.Repeat("end ", 199) + "\n"
	nested := func(L *lua.LState) { L.SetGlobal("src", lua.LString(strings.Repeat(nest, maxLoad/len(nest)))) }
	if out, err, _, took := call(t, 5*time.Second, nested, `return type(load(src))`); err != nil || out != "function" || took > time.Second {
		t.Errorf("nested functions: %q, %v, after %v", out, err, took)
	} else {
		t.Logf("nested functions: %v", took)
	}
	// Chains Lua parses in a loop are not nesting.
	for _, src := range []string{
		"return 1" + strings.Repeat(" + 1", 5000),
		"return a" + strings.Repeat(".b", 5000),
		"if a then" + strings.Repeat(" elseif a then", 3000) + " end",
	} {
		if out, err, _, _ := call(t, 5*time.Second, func(L *lua.LState) { L.SetGlobal("src", lua.LString(src)) }, `return type(load(src))`); err != nil || out != "function" {
			t.Errorf("%.40s…: %q, %v", src, out, err)
		}
	}
}

// TestSparseIndexIsBounded: a script storing at a huge integer index
// (one a peer chose) does not fill a table's array with tens of millions
// of nils in one uninterruptible Go call: before, t[60000000] = true took
// 4.7 GB and 3.6-9.8 s under a 50 ms limit. The value is kept and read
// back; an index past 4,194,304 is in the hash part.
func TestSparseIndexIsBounded(t *testing.T) {
	out, err, _, took := call(t, 5*time.Second, nil, `local t = {} t[60000000] = true t[4194303] = 1 t[4194304] = 2 return t[60000000], t[4194303], t[4194304]`)
	if err != nil || out != "true 1 2" {
		t.Fatalf("got %q, %v", out, err)
	}
	if took > 2*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestLibrariesOpenOnFirstUse: string, table, math and os cost a Lua
// state kilobytes each and most sessions never touch some of them; they
// open on first use and then behave as if they had always been there
// (issue 33: 62 KB per idle session, the goal 50). A string method works
// before string was named, the string metatable stays hidden, and a
// library a script removed stays removed.
func TestLibrariesOpenOnFirstUse(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`return rawget(_G, "string"), rawget(_G, "table"), rawget(_G, "math"), rawget(_G, "os")`, "nil nil nil nil"},
		{`return ("受付"):rep(2), getmetatable(""), type(rawget(_G, "string"))`, "受付受付 false table"},
		{`return string.upper("ok"), rawget(_G, "string") == string, string.dump`, "OK true nil"},
		{`return math.floor(2.5), math.pi > 3, rawget(_G, "math") ~= nil`, "2 true true"},
		{`return table.concat({"a", "b"}, ","), os.execute, type(os.time())`, "a,b nil number"},
		{`local s = string; string = nil; return string, s.len("abc"), ("x"):upper()`, "nil 3 X"},
		{`math.floor(1); math = nil; return math`, "nil"},
		{`return os.date(string.rep("%c", 40000))`, ""},
		// A global named string that is not the library: a string method
		// still opens the library (it failed: "name conflict for module"),
		// and the script's table does not become the strings' metatable.
		{`string = "受付"; return ("x"):upper(), string`, "X 受付"},
		{`string = {}; local mine = string; local u = ("x"):upper()
		  mine.__index = function() return function() return "mine" end end
		  return u, ("abc"):upper(), getmetatable(""), string == mine, mine.upper`, "X ABC false true nil"},
		// The library is not the strings' metatable either: a script
		// changes its functions (as in Lua), not the metatable.
		{`rawset(string, "__metatable", nil); string.__index = {}; return getmetatable(""), ("abc"):upper()`, "false ABC"},
	} {
		got, err, _, _ := call(t, time.Second, nil, c.script)
		if c.want == "" {
			if err == nil || !strings.Contains(err.Error(), "format too long") {
				t.Errorf("%s: %v, want the os.date guard's error", c.script, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s\ngot %q (%v), want %q", c.script, got, err, c.want)
		}
	}
}

// TestPairsIsLua51sForTables: the sandbox's pairs (which honours a
// record's __pairs) names itself in its errors as Lua's does, walks a
// table whatever __pairs its metatable has (Lua 5.1 scripts do not
// expect one honoured), and a record's iterator given another userdata
// is an argument error, not a Go panic. Before, pairs(nil) read "bad
// argument #1 to (anonymous)", and the iterator given _event panicked
// with "interface conversion".
func TestPairsIsLua51sForTables(t *testing.T) {
	rec := func(L *lua.LState) {
		L.SetGlobal("rec", SetRecord(L, &lua.LUserData{}, testRecord{}))
		L.SetGlobal("other", L.NewUserData())
	}
	for _, c := range []struct{ script, want string }{
		{`for k in pairs(nil) do end`, "bad argument #1 to pairs (table expected, got nil)"},
		{`for k in pairs(5) do end`, "bad argument #1 to pairs (table expected, got number)"},
		{`for k in pairs(other) do end`, "bad argument #1 to pairs (table expected, got userdata)"},
		{`local n = 0 for k in pairs(setmetatable({a = 1}, {__pairs = function() error("honoured") end})) do n = n + 1 end return n`, "1"},
		{`local s = "" for k, v in pairs(rec) do s = s .. k .. v end return s`, "a1b2"},
		{`local f = pairs(rec) return f(other)`, "(seat.record expected, got userdata)"},
	} {
		out, err, _, _ := call(t, 5*time.Second, rec, c.script)
		got := out
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %q; want %q", c.script, got, c.want)
		}
	}
}

type testRecord struct{}

func (testRecord) Field(L *lua.LState, name string) lua.LValue {
	return map[string]lua.LValue{"a": lua.LNumber(1), "b": lua.LNumber(2)}[name]
}
func (testRecord) Fields() []string { return []string{"a", "b"} }
func (testRecord) GoValue(func(lua.LValue) (any, error)) (any, error) {
	return map[string]any{"a": 1.0, "b": 2.0}, nil
}
