package luadm

import "testing"

// TestUnclosedBlock: a script that ends inside a construct names the one
// without an end and where it opens; strings and comments holding "end"
// are no ends; an end indented for a construct further out shows which
// one lacks its own; Python's elif is pointed at.
func TestUnclosedBlock(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"if x then", `f:10:14: lua: the script ends too soon: "if" at 10:5 has no end`},
		{"function f()\n  if x then\n    y()\nend", `f:13:4: lua: the script ends too soon: "if" at 11:3 has no end (the end at 13:1 is indented for "function" at 10:5)`},
		{"function f()\n  if x then\n    y()\n", `f:13:1: lua: the script ends too soon: "if" at 11:3 has no end (nor has "function" at 10:5)`},
		{"for i = 1, 3 do\n  seat.send(\"音声\", \"はい\")\n", `f:12:1: lua: the script ends too soon: "for" at 10:5 has no end`},
		{"while ok(function() return 1 end) do x() ", `f:10:46: lua: the script ends too soon: "while" at 10:5 has no end`},
		{"repeat x()", `f:10:15: lua: the script ends too soon: "repeat" at 10:5 has no until`},
		{"local s = \"end\" -- end\nif x then --[[ end\n]] y = [==[end]==]\n", `f:13:1: lua: the script ends too soon: "if" at 11:1 has no end`},
		{"if x then a() else if y then b() end", `f:10:41: lua: the script ends too soon: "if" at 10:5 has no end; "else if" opens a new if, which needs an end of its own: write elseif`},
		{"名前 = { \"一\",", `f:10:5: lua: '名' cannot start a name or a value: Lua names are ASCII letters, digits and _; put Japanese text in quotes`},
		{"t = { \"一\",", `f:10:15: lua: the script ends too soon: the "{" at 10:9 is not closed with "}"`},
		{"if x then\n  a()\nelif y then\n  b()\nend", `f:12:1: lua: elif is Python; Lua writes elseif`},
		{"if x then a() elif y then b() end", `f:10:19: lua: elif is Python; Lua writes elseif`},
		{"elif = 1", ""}, // a name like any other
	} {
		_, d := Parse("f", c.src, 10, 5, "")
		got := ""
		if d != nil {
			got = d.Error()
		}
		if got != c.want {
			t.Errorf("Parse(%q) = %s\nwant %s", c.src, got, c.want)
		}
	}
}
