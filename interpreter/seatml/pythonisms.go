package seatml

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/schema"
)

// SeatAPI lists the names of the seat table, aliases included (§9.4): the
// checker tells them from eSEAT-only names. TestSeatAPIListIsTheTable
// keeps it equal to what installAPI defines.
var SeatAPI = []string{
	"send", "publish", "call", "result", "cancel", "reply", "transition", "push", "pop", "raise", "state", "timeout", "reset_timer", "log", "now", "exit",
	"get_entry", "set_entry", "get_text", "set_text", "append_text", "clear_text",
	"get", "set", "set_timed", "motion", "subscribe", "unsubscribe",
	"sendto", "getEntry", "setEntry", "getText", "appendText", "clearText",
}

// ESEATRenames maps eSEAT's seat methods that seat has under another name
// (same arguments) to that name; seat port renames them.
var ESEATRenames = map[string]string{
	"stateTransfer":  "transition", // eSEAT core.py stateTransfer(newstate)
	"setTimeout":     "timeout",    // setTimeout(sec)
	"ros_publish":    "publish",    // RosAdaptor ros_publish(name, value)
	"callRosService": "call",       // callRosService(name, *args)
	"get_time":       "now",        // get_time(): rospy's time, or the clock's
}

// ESEATMethod reports whether name is a method of eSEAT's seat object
// (self in eSEAT's Python), and the seat function that does its work, if
// any: self.stateTransfer(s) is seat.transition(s).
func ESEATMethod(name string) (seatName string, ok bool) {
	if to, ok := ESEATRenames[name]; ok {
		return to, true
	}
	if slices.Contains(SeatAPI, name) {
		return name, true
	}
	_, ok = eseatOnly[name]
	return "", ok
}

// ESEATInstead returns what to write instead of eSEAT's seat method name,
// when seat has no such function.
func ESEATInstead(name string) (string, bool) {
	use, ok := eseatOnly[name]
	return use, ok
}

// eseatOnly are eSEAT's seat methods with no seat function, and what to
// write instead.
var eseatOnly = map[string]string{
	"set_result": "rtc_result = … (or return the value with <script sendto>)",
	"activate":   "nothing: it switches OpenRTM components, which seat does not run",
	"deactivate": "nothing: it switches OpenRTM components, which seat does not run",
	"setLogFlag": "seat run --log-level (debug shows every rule that fires)",
	"loginfo":    `seat.log("info", msg) (seat port writes it)`,
	// eSEAT's ROS helpers with no one-for-one translation.
	"get_caller_id":      `the ROS node's name: "/" followed by general@name as docs/ros.md writes it`,
	"setRate":            `<general rate="HZ"> with the work in <onexec>: a script cannot loop and sleep (docs/ros.md, Actions)`,
	"sleep":              `<onexec> at <general rate="HZ">, one step per tick: a script cannot sleep (docs/ros.md, Actions)`,
	"getRosActionServer": `rules on the goal event (key ros_action), seat.publish for feedback and seat.result to end it (docs/ros.md, Actions)`,
	"getRosActionClient": `seat.publish(adaptor, goal), and rules on ros_action_feedback and ros_action_result (docs/ros.md, Actions)`,
	"get_in_data":        `rtc_in_data or event.data`,
}

// definedGlobals collects the names a behavior's Lua defines or assigns:
// "function NAME", "local NAME" and "NAME =" at the start of a line. A
// byte scan: a regexp here doubled the load time of 10,000 rules.
func definedGlobals(jobs []*luaJob) map[string]bool {
	out := map[string]bool{}
	ident := func(s string, i int) string {
		j := i
		for j < len(s) && isIdentByte(s[j]) {
			j++
		}
		return s[i:j]
	}
	// dotted is a name with its fields, "a.b.c" (a method "a:b" as "a.b"):
	// a function put in a table, as "function seat.greet" or
	// "self.greet = ...", and its length in s.
	dotted := func(s string, i int) (string, int) {
		name := ident(s, i)
		n := len(name)
		for j := i + n; name != "" && j < len(s) && (s[j] == '.' || s[j] == ':'); j = i + n {
			next := ident(s, j+1)
			if next == "" {
				break
			}
			name += "." + next
			n += 1 + len(next)
		}
		return name, n
	}
	for _, j := range jobs {
		src := j.ch.Src
		for _, kw := range []string{"function ", "local "} {
			for off := 0; ; {
				k := strings.Index(src[off:], kw)
				if k < 0 {
					break
				}
				k += off
				off = k + len(kw)
				if k > 0 && isIdentByte(src[k-1]) {
					continue
				}
				for off < len(src) && src[off] == ' ' {
					off++
				}
				if name := ident(src, off); name != "" {
					out[name] = true
					full, _ := dotted(src, off)
					out[full] = true
				}
			}
		}
		for line := range strings.SplitSeq(src, "\n") {
			t := strings.TrimLeft(line, " \t")
			name := ident(t, 0)
			if rest := strings.TrimLeft(t[len(name):], " \t"); name != "" && strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "==") {
				out[name] = true
			} else if full, n := dotted(t, 0); n > len(name) {
				if rest := strings.TrimLeft(t[n:], " \t"); strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "==") {
					out[full] = true
				}
			}
		}
	}
	return out
}

var (
	// Statements and forms that are Python, never Lua.
	pythonLineRE = regexp.MustCompile(`^\s*(def \w+\s*\(.*\)\s*:|import \w|from [\w.]+ import |elif\b.*:\s*$|else\s*:\s*$|try\s*:\s*$|except\b.*:\s*$|class \w+.*:\s*$|global \w|(if|for|while)\b.*:\s*$|print\s+["'].*["']\s*$|print\s*\(.*\)\s*$|\w+\s*(\+|-|\*)=\s*\S)`)
	strPlusRE    = regexp.MustCompile(`("[^"]*"|'[^']*')\s*\+[^+]|[^+]\+\s*("|')`)
	strPercentRE = regexp.MustCompile(`("[^"]*"|'[^']*')\s*%\s*[\w(]`)
	pyCallRE     = regexp.MustCompile(`\b(str|unicode|int|float|len|range|repr)\s*\(`)
	pyConstRE    = regexp.MustCompile(`\b(True|False|None)\b`)
	selfRE       = regexp.MustCompile(`\bself\.(\w+)`)
	// A name f (or F) right before a quote: Python's f"…{x}…". In Lua it
	// calls f with the string.
	fStringRE = regexp.MustCompile(`(?:^|[^\w.:])([fF])(["'])`)
)

// isCall reports whether what follows a name at byte end of code calls
// it: an argument list, a string or a table.
func isCall(code string, end int) bool {
	rest := strings.TrimLeft(code[end:], " \t")
	return rest != "" && (rest[0] == '(' || rest[0] == '"' || rest[0] == '\'' || rest[0] == '{' || strings.HasPrefix(rest, "[["))
}

// libraryCalls reports uses of names the seat table and Lua's libraries
// (as seat's sandbox has them) do not have, in a line of code with its
// strings blanked: a call is sure to fail, so it is an error, with the
// name meant; reading such a seat field is a warning. A field the
// behavior's own Lua puts in the table (function seat.greet) is its own.
func libraryCalls(l *schema.List, blank string, at func(int) schema.Pos, defined map[string]bool) {
	for _, lib := range []string{"seat", "string", "table", "math", "os"} {
		for off := 0; ; {
			k := strings.Index(blank[off:], lib+".")
			if k < 0 {
				break
			}
			k += off
			off = k + len(lib) + 1
			if k > 0 && (isIdentByte(blank[k-1]) || blank[k-1] == '.' || blank[k-1] == ':') {
				continue // myseat.x, t.seat.x
			}
			end := off
			for end < len(blank) && isIdentByte(blank[end]) {
				end++
			}
			name := blank[off:end]
			if name == "" || defined[lib+"."+name] || defined[lib] && lib != "seat" {
				continue // a library the behavior replaces is its own
			}
			call := isCall(blank, end)
			if lib == "seat" {
				seatName(l, at(k), name, call)
				continue
			}
			names := libraryNames()[lib]
			if !call || slices.Contains(names, name) {
				continue
			}
			if use, ok := luadm.LuaSpelling[lib+"."+name]; ok {
				l.Errorf(at(k), "Lua has no %s.%s: %s", lib, name, use)
			} else if slices.Contains(fullLibraryNames()[lib], name) {
				l.Errorf(at(k), "%s.%s is not in seat's sandbox (docs/seatml.md §9.3): %s has %s", lib, name, lib, strings.Join(names, ", "))
			} else {
				l.Errorf(at(k), "%s has no %q%s", lib, name, schema.DidYouMean(name, names, lib+".%s"))
			}
		}
	}
}

// seatName reports a field of the seat table that is not seat's: what
// eSEAT called it, or the name meant. Calling it is an error.
func seatName(l *schema.List, pos schema.Pos, name string, call bool) {
	if slices.Contains(SeatAPI, name) {
		return
	}
	report := l.Warnf
	if call {
		report = l.Errorf
	}
	if to, ok := ESEATRenames[name]; ok {
		report(pos, "seat.%s is eSEAT's; in seat it is seat.%s (seat port renames it)", name, to)
	} else if use, ok := eseatOnly[name]; ok {
		report(pos, "seat.%s is eSEAT's; seat has no such function: write %s", name, use)
	} else {
		report(pos, "seat has no %q%s", name, schema.DidYouMean(name, SeatAPI, "seat.%s"))
	}
}

var (
	libsOnce          sync.Once
	libNames, libFull map[string][]string
)

// libraryNames are the functions of the libraries in seat's sandbox,
// sorted; fullLibraryNames those of Lua's own libraries, some of which
// the sandbox removes.
func libraryNames() map[string][]string     { libsOnce.Do(readLibraries); return libNames }
func fullLibraryNames() map[string][]string { libsOnce.Do(readLibraries); return libFull }

func readLibraries() {
	read := func(L *lua.LState) map[string][]string {
		defer L.Close()
		out := map[string][]string{}
		for _, lib := range []string{"string", "table", "math", "os"} {
			t, ok := L.GetGlobal(lib).(*lua.LTable)
			if !ok {
				continue
			}
			t.ForEach(func(k, v lua.LValue) {
				if s, ok := k.(lua.LString); ok && v != lua.LNil && !strings.HasPrefix(string(s), "__") {
					out[lib] = append(out[lib], string(s))
				}
			})
			sort.Strings(out[lib])
		}
		return out
	}
	libNames = read(luadm.Sandbox(0))
	libFull = read(lua.NewState())
}

// What to write in Lua for Python's built-in calls and constants.
var (
	pythonCalls = map[string]string{"str": "tostring(x)", "unicode": "tostring(x)", "int": "math.floor(tonumber(x))",
		"float": "tonumber(x)", "len": "#x", "range": "a numeric for: for i = a, b do … end", "repr": "string.format(\"%q\", x)"}
	pythonConsts = map[string]string{"True": "true", "False": "false", "None": "nil"}
)

// looksLikePython returns the first line of src that is Python, not Lua,
// with its number (1-based), if src has one.
func looksLikePython(src string) (string, int, bool) {
	for i, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		if pythonLineRE.MatchString(line) {
			return strings.TrimSpace(line), i + 1, true
		}
	}
	return "", 0, false
}

// pythonDiagnostic rewords the syntax error of a chunk that looks like
// Python: where, what, and to run seat port.
func pythonDiagnostic(ch *luadm.Code, d *schema.Diagnostic) {
	line, n, ok := looksLikePython(ch.Src)
	if !ok {
		pythonOperator(ch, d)
		return
	}
	start := schema.Pos{File: ch.Pos.File, Line: ch.Pos.Line, Col: ch.Pos.Col}
	if n > 1 {
		start = schema.Pos{File: ch.Pos.File, Line: ch.Pos.Line + n - 1, Col: 1}
	}
	prefix := strings.Split(ch.Src, "\n")[n-1]
	start = start.Advance(prefix[:len(prefix)-len(strings.TrimLeft(prefix, " \t"))])
	d.Pos = start
	d.Msg = fmt.Sprintf("this looks like Python, not Lua: `%s`; seat runs Lua: run seat port on this file (docs/porting.md)", schema.Excerpt(line, 60))
}

// pythonOps are Python operators that are not Lua, with what Lua writes.
var pythonOps = []struct {
	re  *regexp.Regexp
	say string
}{
	{regexp.MustCompile(`!=`), "`!=` is Python; Lua writes `~=`"},
	{regexp.MustCompile(`("\s*|'\s*)%\s*\(`), "`\"…\" % (a, b)` is Python's formatting; Lua writes string.format(\"…\", a, b)"},
	{regexp.MustCompile(`\*\*`), "`**` is Python; Lua writes `^`"},
	{regexp.MustCompile(`//`), "`//` is Python; Lua writes math.floor(a / b)"},
	{regexp.MustCompile(`\b\w+\s*(\+|-|\*|/)=`), "`x += y` is Python; Lua writes x = x + y"},
}

// pythonOperator rewords the syntax error of a chunk or cond that uses a
// Python operator: where it is, and the Lua spelling.
func pythonOperator(ch *luadm.Code, d *schema.Diagnostic) {
	for i, raw := range strings.Split(ch.Src, "\n") {
		code := raw
		if k := strings.Index(code, "--"); k >= 0 {
			code = code[:k]
		}
		blank := BlankStrings(code)
		for _, op := range pythonOps {
			m := op.re.FindStringIndex(blank)
			if m == nil {
				continue
			}
			p := schema.Pos{File: ch.Pos.File, Line: ch.Pos.Line + i, Col: 1}
			if i == 0 {
				p.Col = ch.Pos.Col
			}
			at := m[0] + strings.IndexAny(blank[m[0]:m[1]], "!%*/+-") // at the operator
			d.Pos = p.Advance(raw[:at])
			d.Msg = op.say
			return
		}
	}
}

// pythonisms finds Python idioms in a chunk that parses as Lua but would
// fail or misbehave at run time: + on strings, % formatting, str() and the
// like, True/False/None, self., and seat names eSEAT had and seat has not.
// defined holds the globals the behavior's own Lua defines (a str function
// of its own is no Python-ism). Lines without a trigger character cost a
// few byte searches: loading 10,000 rules must stay fast.
func pythonisms(ch *luadm.Code, defined map[string]bool) schema.List {
	var l schema.List
	src := ch.Src
	for i := 0; len(src) > 0; i++ {
		raw := src
		if k := strings.IndexByte(src, '\n'); k >= 0 {
			raw, src = src[:k], src[k+1:]
		} else {
			src = ""
		}
		code := raw
		if k := strings.Index(code, "--"); k >= 0 {
			if j := strings.Index(code[k:], "seat port:"); j >= 0 && strings.Trim(code[k+2:k+j], "[ ") == "" {
				p := schema.Pos{File: ch.Pos.File, Line: ch.Pos.Line + i, Col: 1}
				if i == 0 {
					p.Col = ch.Pos.Col
				}
				reason := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(code[k+j+len("seat port:"):]), "]]"))
				l.Warnf(p.Advance(raw[:k]), "left for hand work by seat port: %s", schema.Excerpt(reason, 100))
			}
			code = code[:k]
		}
		if !strings.ContainsAny(code, "+%(TFNs.fF") {
			continue
		}
		blank := code
		if strings.ContainsAny(code, `"'`) {
			blank = BlankStrings(code)
		}
		line, first := ch.Pos.Line+i, i == 0
		at := func(byteCol int) schema.Pos {
			p := schema.Pos{File: ch.Pos.File, Line: line, Col: 1}
			if first {
				p.Col = ch.Pos.Col
			}
			return p.Advance(raw[:byteCol])
		}
		quoted := strings.ContainsAny(blank, `"'`)
		if quoted && strings.IndexByte(blank, '+') >= 0 {
			for _, m := range strPlusRE.FindAllStringIndex(blank, -1) {
				if (blank[m[0]] == '"' || blank[m[0]] == '\'') && strings.HasSuffix(strings.TrimRight(blank[:m[0]], " \t"), "#") {
					continue // #"done," + 1: a string's length is a number
				}
				plus := m[0] + strings.IndexByte(blank[m[0]:m[1]], '+') // at the +, not at what precedes it
				l.Warnf(at(plus), "`+` on a string is arithmetic in Lua (Python joins strings with it): join with `..`")
				break
			}
		}
		if quoted && strings.IndexByte(blank, '%') >= 0 {
			if m := strPercentRE.FindStringIndex(blank); m != nil {
				l.Warnf(at(m[0]), "`%%` after a string is Python's formatting; in Lua write string.format(\"…\", …)")
			}
		}
		if strings.IndexByte(blank, '(') >= 0 && containsAnyWord(blank, "str", "unicode", "int", "float", "len", "range", "repr") { // pythonCalls
			for _, m := range pyCallRE.FindAllStringSubmatchIndex(blank, -1) {
				name := blank[m[2]:m[3]]
				if defined[name] || m[0] > 0 && (blank[m[0]-1] == '.' || blank[m[0]-1] == ':') {
					continue // py.str(x), t:len(): a field, not Python's built-in
				}
				l.Warnf(at(m[0]), "%s() is Python; Lua has no %s: write %s", name, name, pythonCalls[name])
			}
		}
		if containsAnyWord(blank, "True", "False", "None") {
			for _, m := range pyConstRE.FindAllStringSubmatchIndex(blank, -1) {
				if name := blank[m[2]:m[3]]; !defined[name] {
					l.Warnf(at(m[0]), "%s is Python; in Lua write %s", name, pythonConsts[name])
				}
			}
		}
		if quoted && strings.ContainsAny(blank, "fF") {
			for _, m := range fStringRE.FindAllStringSubmatchIndex(blank, -1) {
				if name := blank[m[2]:m[3]]; !defined[name] {
					l.Errorf(at(m[2]), "%s%c…%c is a Python f-string; Lua has none (this calls %s, which is nil): write string.format(\"… %%s …\", x), or join with ..", name, blank[m[4]], blank[m[4]], name)
				}
			}
		}
		if strings.Contains(blank, "self.") {
			// self is a table for the behavior's own values (docs/porting.md);
			// eSEAT's methods on it are the seat table's.
			for _, m := range selfRE.FindAllStringSubmatchIndex(blank, -1) {
				name := blank[m[2]:m[3]]
				if to, ok := ESEATMethod(name); ok && !defined["self."+name] {
					use := "seat." + to
					if to == "" {
						use = eseatOnly[name]
					}
					report := l.Warnf
					if isCall(blank, m[3]) {
						report = l.Errorf // self has no such function: the call fails
					}
					report(at(m[0]), "self.%s is eSEAT's method; in seat write %s (self is a table for your own values)", name, use)
				}
			}
		}
		if strings.IndexByte(blank, '.') >= 0 {
			libraryCalls(&l, blank, at, defined)
		}
	}
	return l
}

// BlankStrings returns code with the contents of its string literals
// replaced by spaces, quotes kept, so that patterns see only code (byte
// offsets are kept).
func BlankStrings(code string) string {
	b := []byte(code)
	var quote byte
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote != 0 && c == '\\' && i+1 < len(b):
			b[i], b[i+1] = ' ', ' '
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b[i] = ' '
		}
	}
	return string(b)
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// containsAnyWord reports whether s contains any of the words (as text;
// the regexp then checks word boundaries).
func containsAnyWord(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// IsLuaSyntax reports whether src parses as Lua (an expression for a cond).
func IsLuaSyntax(src string, expr bool) bool {
	_, d := luadm.Parse("body", src, 1, 1, condKind(expr))
	return d == nil
}
