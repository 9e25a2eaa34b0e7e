package port

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/interpreter/seatml"
)

// TestTranslateRules: each translation rule, Python in, Lua out; every
// output parses as Lua.
func TestTranslateRules(t *testing.T) {
	cases := []struct{ py, lua string }{
		{`print "Hello"`, `py.print("Hello")`},
		{`print("a", b)`, `py.print("a", b)`},
		{`print "a", 1`, `py.print("a", 1)`},
		{`x = "a" + b`, `x = "a" .. b`},
		{`x = str(n) + " items"`, `x = py.str(n) .. " items"`},
		{`x = rtc_in_data.data + "!"`, `x = rtc_in_data .. "!"`},
		{`x = a + b`, `x = py.add(a, b)`}, // strings join, numbers add: decided when it runs
		{`x = a + 1`, `x = a + 1`},
		{`x = "a" + rtc_in_data.data`, `x = "a" .. rtc_in_data`},
		{`n = rtc_in_data.data + 1`, `n = rtc_in_data + 1`}, // TimedLong arithmetic; Lua's + reads the text as a number
		{`raised = 0`, `raised = 0`},                        // not the raise statement
		{`trying = True`, `trying = true`},                  // nor try
		{`seat.setTimeout(5)`, `seat.timeout(5)`},
		{`self.last = msg`, `self.last = msg`}, // eSEAT's self: seat's table for the behavior's own values
		{`self._cnt = self._cnt + 1`, `self._cnt = self._cnt + 1`},
		{`self.stateTransfer("start")`, `seat.transition("start")`}, // its methods are seat's
		{`self.sendto("chat", "x")`, `seat.sendto("chat", "x")`},
		{`x = "n=%d" % n`, `x = py.mod("n=%d", n)`},
		{`x = "n=%d" % 3`, `x = py.format("n=%d", 3)`},
		{`x = "%s/%s" % (a, b)`, `x = py.format("%s/%s", a, b)`},
		{`n = int(s)`, `n = py.int(s)`},
		{`f = float(s)`, `f = py.float(s)`},
		{`k = len(t)`, `k = py.len(t)`},
		{`x = round(2.5)`, `x = py.round(2.5)`},
		{`ok = 1 < x < 3`, `ok = 1 < x and x < 3`},
		{`s = "\x41\u3042\101"`, `s = "AあA"`},
		{`s = r"\d+"`, `s = "\\d+"`},
		{`ok = True`, `ok = true`},
		{`v = None`, `v = nil`},
		{`d = a != b`, `d = not py.eq(a, b)`}, // lists compare by value
		{`d = a != 1`, `d = a ~= 1`},
		{`p = x ** 2`, `p = x ^ 2`},
		{`e = v is None`, `e = v == nil`},
		{`e = v is not None`, `e = v ~= nil`},
		{`count += 1`, `count = count + 1`},
		{`s += "x"`, `s = s .. "x"`},
		{`l = [1, 2]`, `l = {1, 2}`},
		{`l = []`, `l = {}`},
		{`first = l[0]`, `first = py.index(l, 0)`},
		{`v = l[i]`, `v = py.index(l, i)`},
		{`l[0] = v`, `l[1] = v -- l[0] in Python`}, // the comment also keeps seat port from moving it again
		{`print(f())`, `py.print((f()))`},          // one value, nil when f returns none: print shows None
		{`x = g(1, f(2))`, `x = g(1, (f(2)))`},
		{`print(len(s))`, `py.print(py.len(s))`}, // py's functions return one value
		{`print("a"); f(); x = 1;`, `py.print("a"); f(); x = 1`},
		{`s = "\x1b[0m"`, `s = (string.char(27) .. "[0m")`}, // Lua's \27 is decimal, Python's octal
		{`s = "\r\a"`, `s = "\r\a"`},
		{`n = max(2, 1)`, `n = math.max(2, 1)`},
		{`s = t[1:3]`, `s = py.slice(t, 1, 3)`},
		{`l.append(x)`, `table.insert(l, x)`},
		{`u = s.upper()`, `u = string.upper(s)`},
		{`t = s.strip()`, `t = py.strip(s)`},
		{`n = random.randint(1, 6)`, `n = math.random(1, 6)`},
		{`seat.set_result(x)`, `rtc_result = x`},
		{`seat.stateTransfer("b")`, `seat.transition("b")`},
		{`global a, b`, `-- global a, b (Lua variables are global unless local)`},
		{`import random`, `-- import random (Lua has math.random and math.*)`},
		{`pass`, `-- pass`},
		{`x = 1 # one`, `x = 1 -- one`},
		{"if a:\n  x = 1\nelif b:\n  x = 2\nelse:\n  x = 3", "if py.truthy(a) then\n  x = 1\nelseif py.truthy(b) then\n  x = 2\nelse\n  x = 3\nend"},
		{"if n > 0 and not done:\n  f()", "if n > 0 and not py.truthy(done) then\n  f()\nend"},
		{"for i in range(3):\n  f(i)", "for i_ = 0, (3) - 1 do i = i_\n  f(i)\nend"}, // i keeps its last value after the loop, as in Python
		{"for i in range(1, n):\n  f(i)", "for i_ = 1, (n) - 1 do i = i_\n  f(i)\nend"},
		{"for x in items:\n  f(x)", "for _, x_ in py.iter(items) do x = x_\n  f(x)\nend"}, // a list's items or a string's characters
		{"for k, v in d.items():\n  f(k, v)", "for k, v in pairs(d) do\n  f(k, v)\nend"},
		{"while n > 0:\n  n -= 1", "while n > 0 do\n  n = n - 1\nend"},
		{"def greet(who):\n  return \"hi \" + who", "function greet(who)\n  return \"hi \" .. who\nend"},
		{"def f(x):\n  global total\n  if x:\n    y = 1\n  else:\n    y = 2\n  total = y", "function f(x)\n  local y\n  -- global total (Lua variables are global unless local)\n  if py.truthy(x) then\n    y = 1\n  else\n    y = 2\n  end\n  total = y\nend"},
		{"    indented = 1\n    if indented:\n        f()", "    indented = 1\n    if py.truthy(indented) then\n        f()\n    end"},
	}
	for _, c := range cases {
		got, problems := TranslateScript(c.py)
		if len(problems) != 0 || got != c.lua {
			t.Errorf("%q\n got %q %v\nwant %q", c.py, got, problems, c.lua)
		}
		if !seatml.IsLuaSyntax(got, false) {
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
		{`d = {"a": 1}`, "Python dictionaries and sets"},
		{`s = t[1:3:2]`, "a slice with a step"},
		{`l[i] = v`, `assigning at an index that is not a literal (Python counts from 0, Lua from 1)`},
		{`x = a if c else b`, `a conditional expression (x if c else y)`},
		{`name = x or "guest"`, `"or" on values that are not True or False (Python's 0 and "" are false, Lua's are true): write an if`},
		{"if a:\n\t f()", "indentation mixes tabs and spaces (Python 2 and 3 nest it differently)"},
		{`p = s.split(",")`, "the Python method .split()"},
		{`import os`, `Python module "os" has no Lua equivalent`},
		{"for i in range(0, 10, 2):\n  f(i)", "range with a step"},
		{"continue", "Lua has no continue"},
		{"def f(a, b=1):\n  pass", "default and keyword arguments"},
		{"if x if y else z:\n  f()\nelse:\n  g()", `a conditional expression (x if c else y)`}, // the else goes with it, not as a second problem
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
		if !seatml.IsLuaSyntax(got, false) {
			t.Errorf("%q: the result is not Lua: %q", c.py, got)
		}
	}
}

func TestTranslateCond(t *testing.T) {
	for py, lua := range map[string]string{
		`count != 0 and True`:       `count ~= 0 and true`,
		`rtc_in_data.data == "yes"`: `rtc_in_data == "yes"`,
		`not flag`:                  `not py.truthy(flag)`,
		`n`:                         `py.truthy(n)`,
		`x in l`:                    `py.contains(l, x)`,
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

// TestValidLuaInAnESEATFile: an eSEAT file's scripts are Python, so a
// body that also parses as Lua is read as Python (issue 32 #13: print(1,
// 2) was kept as Lua, which prints "1\t2"); statements on one line are
// translated, not disabled (issue 21: print("bye"); seat.stateTransfer(…)
// became a "-- seat port:" comment). A body with what only Lua has stays
// as written, eSEAT's names renamed; a body whose translation is the same
// code stays as written too.
func TestValidLuaInAnESEATFile(t *testing.T) {
	src := `<seatml><general name="p"><adaptor name="chat" type="socket" role="server" port="0"/></general>
<state name="start"><rule><key>bye</key><script>print("bye"); seat.stateTransfer("start")</script></rule>
<rule><key>t</key><script>self.setTimeout(3); x = "seat.stateTransfer"</script></rule>
<rule><key>p</key><script>print(1, 2)</script></rule>
<rule><key>n</key><script>n = n + rtc_in_data</script><cond>a and b</cond></rule>
<rule><key>l</key><script>x = "a" .. y; seat.stateTransfer("s")</script><cond>x ~= nil</cond></rule>
<rule><key>k</key><script>seat.send("chat",'ok')</script></rule></state></seatml>`
	r, err := File("t.seatml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Output)
	for _, want := range []string{
		`<script>py.print("bye"); seat.transition("start")</script>`,
		`<script>seat.timeout(3); x = "seat.stateTransfer"</script>`,
		`<script>py.print(1, 2)</script>`,
		`<script>n = n .. rtc_in_data</script><cond>py.truthy(a) and py.truthy(b)</cond>`, // the event text joins, as Python's +
		`<script>x = "a" .. y; seat.transition("s")</script><cond>x ~= nil</cond>`,        // Lua: kept, renamed
		`<script>seat.send("chat",'ok')</script>`,                                         // the same code either way: as written
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "seat port:") || len(r.Notes) != 0 {
		t.Errorf("left for hand work: %v\n%s", r.Notes, out)
	}
	if r.Lua != 3 || r.Translated != 5 || r.Partial != 0 {
		t.Errorf("%d Lua, %d translated, %d partial; want 3, 5, 0", r.Lua, r.Translated, r.Partial)
	}
	// Run on its own output, seat port changes nothing.
	again, err := File("t.seatml", r.Output)
	if err != nil || string(again.Output) != out {
		t.Errorf("ported again (%v):\n%s", err, again.Output)
	}
}

// TestMarkBroken: what seat check would refuse in the ported file is
// marked at its place, with a note of its input line; a second run marks
// it once, with the same text (the positions in a message are those of
// the ported file); once mended by hand, the mark goes.
func TestMarkBroken(t *testing.T) {
	src := `<?xml version="1.0" encoding="UTF-8"?>
<seatml>
  <general name="受付">
    <adaptor name="in" type="provider"/>
    <adaptor name="chat" type="socket" role="server" port="0"/>
    <adaptor name="chat" type="socket" role="server" port="0"/>
  </general>
  <state name="待機">
    <rule source="webb"><message sendto="chat">こんにちは</message></rule>
  </state>
</seatml>
`
	name := filepath.Join(t.TempDir(), "t.seatml")
	r, err := File(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Note{
		{6, `seat check fails here: adaptor "chat" is declared twice (first at 6:5); fix it by hand (a comment marks the place)`},
		{9, `seat check fails here: rule source "webb" is not a declared adaptor; fix it by hand (a comment marks the place)`},
	}
	if diff := cmp.Diff(want, r.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	out := string(r.Output)
	for _, w := range []string{
		"\n    <!-- seat port: seat check fails here: adaptor \"chat\" is declared twice (first at 6:5) -->\n    <adaptor name=\"chat\"",
		"\n    <!-- seat port: seat check fails here: rule source \"webb\" is not a declared adaptor -->\n    <rule source=\"webb\">",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	again, err := File(name, r.Output)
	if err != nil || string(again.Output) != out || len(again.Notes) != 2 {
		t.Errorf("ported again (%v, %v):\n%s", err, again.Notes, again.Output)
	}
	mended := strings.Replace(strings.Replace(out, `source="webb"`, `source="chat"`, 1), `<adaptor name="chat" type="socket" role="server" port="0"/>
  </general>`, `</general>`, 1)
	fixed, err := File(name, []byte(mended))
	if err != nil || strings.Contains(string(fixed.Output), "seat check fails") || len(fixed.Notes) != 0 {
		t.Errorf("mended (%v, %v):\n%s", err, fixed.Notes, fixed.Output)
	}
}

// TestStructuredRtcin: in a rule on an rtcin of a type other than
// TimedString, eSEAT's rtc_in_data.data is the value's data member (seat
// gives such a value as a table), so it stays, and its Python indexes
// count from 0 as before; on a TimedString rtcin it is the event text,
// rtc_in_data.
func TestStructuredRtcin(t *testing.T) {
	src := `<?xml version="1.0" encoding="UTF-8"?>
<seatml>
  <general name="Ctl">
    <adaptor name="pos" type="rtcin" datatype="RTC::TimedDoubleSeq"/>
    <adaptor name="txt" type="rtcin" datatype="TimedString"/>
    <adaptor name="n" type="rtcin" datatype="TimedLong"/>
  </general>
  <state name="main_mode">
    <rule source="pos">
      <cond>rtc_in_data.data[0] > 1.0</cond>
      <script>x = rtc_in_data.data[1] + 2</script>
    </rule>
    <rule source="txt"><script>y = rtc_in_data.data + "!"</script></rule>
    <rule source="n"><script>z = rtc_in_data.data + 1</script></rule>
    <rule><script>w = rtc_in_data.data + "?"</script></rule>
  </state>
</seatml>
`
	r, err := File("t.seatml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Output)
	for _, want := range []string{
		`<cond><![CDATA[py.index(rtc_in_data.data, 0) > 1.0]]></cond>`,
		`<script>x = py.index(rtc_in_data.data, 1) + 2</script>`,
		`<script>y = rtc_in_data .. "!"</script>`,
		`<script>z = rtc_in_data.data + 1</script>`,
		`<script>w = rtc_in_data .. "?"</script>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	if strings.Contains(out, structuredPlaceholder) || len(r.Notes) != 0 {
		t.Errorf("notes %v, output:\n%s", r.Notes, out)
	}
}
