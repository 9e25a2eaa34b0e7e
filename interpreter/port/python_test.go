package port

import (
	"strings"
	"testing"

	"github.com/seatml/seat/interpreter"
)

// TestTranslateRules: each translation rule, Python in, Lua out; every
// output parses as Lua.
func TestTranslateRules(t *testing.T) {
	cases := []struct{ py, lua string }{
		{`print "Hello"`, `print("Hello")`},
		{`print("a", b)`, `print("a", b)`},
		{`x = "a" + b`, `x = "a" .. b`},
		{`x = str(n) + " items"`, `x = tostring(n) .. " items"`},
		{`x = rtc_in_data.data + "!"`, `x = rtc_in_data .. "!"`},
		{`x = a + b`, `x = a + b`},
		{`x = "a" + rtc_in_data.data`, `x = "a" .. rtc_in_data`},
		{`n = rtc_in_data.data + 1`, `n = rtc_in_data + 1`}, // TimedLong arithmetic; Lua's + reads the text as a number
		{`raised = 0`, `raised = 0`},                        // not the raise statement
		{`trying = True`, `trying = true`},                  // nor try
		{`seat.setTimeout(5)`, `seat.timeout(5)`},
		{`x = "n=%d" % n`, `x = string.format("n=%d", n)`},
		{`x = "%s/%s" % (a, b)`, `x = string.format("%s/%s", a, b)`},
		{`n = int(s)`, `n = math.floor(tonumber(s))`},
		{`f = float(s)`, `f = tonumber(s)`},
		{`k = len(t)`, `k = #(t)`},
		{`ok = True`, `ok = true`},
		{`v = None`, `v = nil`},
		{`d = a != b`, `d = a ~= b`},
		{`p = x ** 2`, `p = x ^ 2`},
		{`e = v is None`, `e = v == nil`},
		{`e = v is not None`, `e = v ~= nil`},
		{`count += 1`, `count = count + (1)`},
		{`s += "x"`, `s = s .. ("x")`},
		{`l = [1, 2]`, `l = {1, 2}`},
		{`l = []`, `l = {}`},
		{`first = l[0]`, `first = l[1]`},
		{`l.append(x)`, `table.insert(l, x)`},
		{`u = s.upper()`, `u = s:upper()`},
		{`t = s.strip()`, `t = s:match("^%s*(.-)%s*$")`},
		{`n = random.randint(1, 6)`, `n = math.random(1, 6)`},
		{`seat.set_result(x)`, `rtc_result = x`},
		{`seat.stateTransfer("b")`, `seat.transition("b")`},
		{`global a, b`, `-- global a, b (Lua variables are global unless local)`},
		{`import random`, `-- import random (Lua has math.random and math.*)`},
		{`pass`, `-- pass`},
		{`x = 1 # one`, `x = 1 -- one`},
		{"if a:\n  x = 1\nelif b:\n  x = 2\nelse:\n  x = 3", "if a then\n  x = 1\nelseif b then\n  x = 2\nelse\n  x = 3\nend"},
		{"for i in range(3):\n  f(i)", "for i = 0, (3) - 1 do\n  f(i)\nend"},
		{"for i in range(1, n):\n  f(i)", "for i = 1, (n) - 1 do\n  f(i)\nend"},
		{"for x in items:\n  f(x)", "for _, x in ipairs(items) do\n  f(x)\nend"},
		{"for k, v in d.items():\n  f(k, v)", "for k, v in pairs(d) do\n  f(k, v)\nend"},
		{"while n > 0:\n  n -= 1", "while n > 0 do\n  n = n - (1)\nend"},
		{"def greet(who):\n  return \"hi \" + who", "function greet(who)\n  return \"hi \" .. who\nend"},
		{"    indented = 1\n    if indented:\n        f()", "    indented = 1\n    if indented then\n        f()\n    end"},
	}
	for _, c := range cases {
		got, problems := TranslateScript(c.py)
		if len(problems) != 0 || got != c.lua {
			t.Errorf("%q\n got %q %v\nwant %q", c.py, got, problems, c.lua)
		}
		if !interpreter.IsLuaSyntax(got, false) {
			t.Errorf("%q: the translation is not Lua: %q", c.py, got)
		}
	}
}

// TestHandWork: what has no mechanical translation is left as a comment
// with its reason, and listed at its line.
func TestHandWork(t *testing.T) {
	cases := []struct{ py, reason string }{
		{"try:\n  f()\nexcept:\n  pass", "try has no mechanical Lua translation"},
		{"class A:\n  pass", "class has no mechanical Lua translation"},
		{`d = {"a": 1}`, "Python dictionaries"},
		{`s = t[1:3]`, "a slice (Lua has string.sub and table.move)"},
		{`v = l[i]`, `indexing with "i" (Python counts from 0, Lua from 1)`},
		{`x = a if c else b`, `"if" in an expression`},
		{`p = s.split(",")`, "the Python method .split()"},
		{`import os`, `Python module "os" has no Lua equivalent`},
		{"for i in range(0, 10, 2):\n  f(i)", "range with a step"},
		{"continue", "Lua has no continue"},
		{"def f(a, b=1):\n  pass", "default and keyword arguments"},
		{"if x in l:\n  f()\nelse:\n  g()", `"in" in an expression`}, // the else goes with it, not as a second problem
	}
	for _, c := range cases {
		got, problems := TranslateScript(c.py)
		if len(problems) == 0 || problems[0].Reason != c.reason || problems[0].Line != 1 {
			t.Errorf("%q: problems %v, want %q at line 1", c.py, problems, c.reason)
		}
		for _, p := range problems[min(1, len(problems)):] {
			if !noLuaForm[firstWord(strings.Split(c.py, "\n")[p.Line-1])] {
				t.Errorf("%q: a second problem that is not a block header of its own: %v", c.py, p)
			}
		}
		if !strings.Contains(got, "-- seat port: "+c.reason) {
			t.Errorf("%q: no seat port comment in %q", c.py, got)
		}
		if !interpreter.IsLuaSyntax(got, false) {
			t.Errorf("%q: the result is not Lua: %q", c.py, got)
		}
	}
}

func TestTranslateCond(t *testing.T) {
	for py, lua := range map[string]string{
		`count != 0 and True`:       `count ~= 0 and true`,
		`rtc_in_data.data == "yes"`: `rtc_in_data == "yes"`,
		`not flag`:                  `not flag`,
	} {
		if got, err := TranslateCond(py); err != nil || got != lua {
			t.Errorf("%q: %q (%v), want %q", py, got, err, lua)
		}
	}
}

func TestDiff(t *testing.T) {
	if d := Diff("f", []byte("a\nb\nc\n"), []byte("a\nb\nc\n")); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	want := "--- f.orig\n+++ f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	if d := Diff("f", []byte("a\nb\nc\n"), []byte("a\nB\nc\n")); d != want {
		t.Errorf("diff:\n%s\nwant:\n%s", d, want)
	}
}
