package interpreter

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSandboxEscapeCorpus tries the known ways out of a Lua sandbox. Each
// attempt's rule sends what the script could reach; the comment says what a
// hole would look like. After every attempt the behavior still answers.
func TestSandboxEscapeCorpus(t *testing.T) {
	attempts := []struct{ name, script, want string }{
		// Bytecode: string.dump and binary chunks could forge VM state.
		{"dump-global", `return type(string.dump)`, "nil"},
		{"dump-via-method", `return type(("x").dump)`, "nil"},
		{"dump-via-metatable", `local mt = getmetatable("") return type(mt) == "table" and type(mt.__index.dump) or tostring(mt)`, "false"},
		{"load-binary", `local ok, err = pcall(load, "\27LuaQ\0") return tostring(ok)`, "false"},
		{"loadstring-binary", `local f = loadstring("\27LuaQ\0") return tostring(f)`, "nil"},
		{"load-function-reader", `return tostring((pcall(load, function() return "return os" end)))`, "false"},
		// The string metatable is shared by every string of the behavior.
		{"string-metatable-hidden", `return tostring(getmetatable("x"))`, "false"},
		{"string-setmetatable", `return tostring((pcall(setmetatable, "x", {})))`, "false"},
		{"string-methods-still-work", `return ("abc"):upper() .. #("abc")`, "ABC3"},
		// Libraries that reach the host.
		{"debug", `return type(debug)`, "nil"},
		{"io", `return type(io)`, "nil"},
		{"package", `return type(package) .. type(require) .. type(module)`, "nilnilnil"},
		{"files", `return type(dofile) .. type(loadfile)`, "nilnil"},
		{"os-reduced", `local n = 0 for k in pairs(os) do n = n + 1 end return n`, "3"},
		{"os-execute", `return type(os.execute) .. type(os.exit) .. type(os.getenv) .. type(os.remove)`, "nilnilnilnil"},
		{"fenv", `return type(getfenv) .. type(setfenv) .. type(newproxy)`, "nilnilnil"},
		{"coroutine", `return type(coroutine)`, "nil"},
		{"registry-via-debug", `return tostring((pcall(function() return debug.getregistry() end)))`, "false"},
		// The environment of loaded code is the sandbox, not something wider.
		{"load-env", `return type(load("return io")())`, "nil"},
		{"rawget-global", `return type(rawget(_G, "io")) .. type(rawget(_G, "debug"))`, "nilnil"},
	}
	var rules strings.Builder
	for _, a := range attempts {
		rules.WriteString(rule("", `<key>`+a.name+`</key><script sendto="chat"><![CDATA[`+a.script+`]]></script>`))
	}
	rules.WriteString(rule("", `<key>ping</key>`+msg("pong")))
	h := start(t, doc("", `<state name="s">`+rules.String()+`</state>`))
	h.take()
	var want []string
	for _, a := range attempts {
		h.event("chat", a.name)
		h.event("chat", "ping")
		want = append(want, "chat:"+a.want, "chat:pong")
	}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestTimeLimitCannotBeCaught: a script that catches the time limit's
// error with pcall, or runs its loop inside a metamethod or a callback
// from a library function, is still stopped, and the next event answered.
func TestTimeLimitCannotBeCaught(t *testing.T) {
	loops := map[string]string{
		"pcall":      `while true do pcall(function() while true do end end) end`,
		"xpcall":     `while true do xpcall(function() while true do end end, function() return "again" end) end`,
		"tostring":   `local t = setmetatable({}, {__tostring = function() while true do end end}) return tostring(t)`,
		"gsub":       `return (string.gsub("aaa", "a", function() while true do end end))`,
		"sort":       `local t = {3, 2, 1} table.sort(t, function(a, b) while true do end end)`,
		"error-meta": `error(setmetatable({}, {__tostring = function() while true do end end}))`,
		"index":      `local t = setmetatable({}, {__index = function() while true do end end}) return t.x`,
	}
	var rules strings.Builder
	for name, script := range loops {
		rules.WriteString(rule("", `<key>`+name+`</key><script sendto="chat"><![CDATA[`+script+`]]></script>`+msg("escaped")))
	}
	rules.WriteString(rule("", `<key>ping</key>`+msg("pong")))
	h := start(t, doc("", `<state name="s">`+rules.String()+`</state>`), func(o *Options) { o.ScriptTimeout = 20 * time.Millisecond })
	h.take()
	for name := range loops {
		h.event("chat", name)
		h.event("chat", "ping")
		if diff := cmp.Diff([]string{"chat:pong"}, h.sends()); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", name, diff)
		}
	}
}

// TestScriptMemoryLimit: a script that allocates without bound is stopped
// at the memory limit, well before the time limit and without taking the
// process down; string.rep refuses a result over the limit outright; a
// script inside the limit runs; and the behavior answers the next event.
func TestScriptMemoryLimit(t *testing.T) {
	const limit = 32 << 20
	h := start(t, doc("", `<state name="s">`+
		rule("", `<key>double</key><script><![CDATA[local s = "x" for i = 1, 40 do s = s .. s end]]></script>`+msg("escaped"))+
		rule("", `<key>table</key><script><![CDATA[local t = {} for i = 1, 1e9 do t[i] = {i} end]]></script>`+msg("escaped"))+
		rule("", `<key>rep</key><script><![CDATA[local s = string.rep("abc", 1e10)]]></script>`+msg("escaped"))+
		rule("", `<key>rep-method</key><script><![CDATA[local s = ("abc"):rep(1e10)]]></script>`+msg("escaped"))+
		rule("", `<key>small</key><script sendto="chat"><![CDATA[return #string.rep("ab", 1000)]]></script>`)+
		rule("", `<key>ping</key>`+msg("pong"))+
		`</state>`), func(o *Options) { o.ScriptMemory = limit; o.ScriptTimeout = time.Minute })
	h.take()
	for _, ev := range []string{"double", "table", "rep", "rep-method"} {
		h.event("chat", ev)
		h.event("chat", "ping")
		if diff := cmp.Diff([]string{"chat:pong"}, h.sends()); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", ev, diff)
		}
	}
	h.event("chat", "small")
	if diff := cmp.Diff([]string{"chat:2000"}, h.sends()); diff != "" {
		t.Errorf("small: (-want +got):\n%s", diff)
	}
	logs := h.logs.FilterMessageSnippet("script").All()
	var memory, rep int
	for _, e := range logs {
		for _, f := range e.Context {
			if strings.Contains(f.String, "memory limit of 32 MiB") {
				if strings.Contains(f.String, "string.rep") {
					rep++
				} else {
					memory++
				}
			}
		}
	}
	if memory != 2 || rep != 2 {
		t.Errorf("want 2 memory stops and 2 string.rep refusals logged, got %d and %d; logs: %v", memory, rep, logs)
	}
}
