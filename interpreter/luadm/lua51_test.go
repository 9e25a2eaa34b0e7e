package luadm

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// The differential harness: a chunk of Lua runs in seat's sandbox and in
// the real Lua 5.1 (Debian's lua5.1, when it is on PATH), and the two
// results, serialized the same way, are compared. Each result is "ok"
// and its values, or "err"; a string is its bytes in hex, a number %.17g,
// a table its sequence.

// lua51Server runs in lua5.1: it reads chunks, one a line in hex, and
// writes each one's serialized result on a line.
const lua51Server = `
local function ser(v)
  local t = type(v)
  if t == "string" then
    return "s:" .. (v:gsub(".", function(c) return string.format("%02x", c:byte()) end))
  elseif t == "number" then
    if v ~= v then return "n:nan" elseif v == math.huge then return "n:inf" elseif v == -math.huge then return "n:-inf" end
    return "n:" .. string.format("%.17g", v)
  elseif t == "table" then
    local p = {}
    for i = 1, #v do p[i] = ser(v[i]) end
    return "{" .. table.concat(p, ",") .. "}"
  end
  return t .. ":" .. tostring(v)
end
local function pack(...) return select("#", ...), {...} end
for line in io.lines() do
  local code = line:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
  local f, err = loadstring(code)
  if not f then
    io.write("compile ", (tostring(err):gsub("\n", " ")), "\n")
  else
    local n, r = pack(pcall(f))
    if r[1] then
      local p = {"ok"}
      for i = 2, n do p[#p + 1] = ser(r[i]) end
      io.write(table.concat(p, " "), "\n")
    else
      io.write("err ", (tostring(r[2]):gsub("\n", " ")), "\n")
    end
  end
  io.flush()
end
`

// serialize is ser above, in Go, for seat's values.
func serialize(v lua.LValue) string {
	switch v := v.(type) {
	case lua.LString:
		return "s:" + hex.EncodeToString([]byte(v))
	case lua.LNumber:
		f := float64(v)
		switch {
		case math.IsNaN(f):
			return "n:nan"
		case math.IsInf(f, 1):
			return "n:inf"
		case math.IsInf(f, -1):
			return "n:-inf"
		}
		return "n:" + strconv.FormatFloat(f, 'g', 17, 64)
	case *lua.LTable:
		var p []string
		for i := 1; i <= v.Len(); i++ {
			p = append(p, serialize(v.RawGetInt(i)))
		}
		return "{" + strings.Join(p, ",") + "}"
	case lua.LBool:
		return "boolean:" + v.String()
	}
	return v.Type().String() + ":" + v.String()
}

// seatRun runs code in a fresh sandbox under a watchdog of limit and
// returns its serialized result ("ok ...", "err MESSAGE"), and whether the
// watchdog stopped it.
func seatRun(code string, limit time.Duration) (string, StopReason) {
	L := Sandbox(64 << 20)
	defer L.Close()
	w := NewWatchdog(L, limit, 64<<20)
	defer w.Close()
	fn, err := L.LoadString(code)
	if err != nil {
		return "compile " + err.Error(), NotStopped
	}
	L.Push(fn)
	w.Start()
	err = L.PCall(0, lua.MultRet, nil)
	stopped := w.Stop()
	if err != nil {
		msg := err.Error()
		if e, ok := err.(*lua.ApiError); ok {
			msg = e.Object.String()
		}
		return "err " + strings.ReplaceAll(msg, "\n", " "), stopped
	}
	p := []string{"ok"}
	for i := 1; i <= L.GetTop(); i++ {
		p = append(p, serialize(L.Get(i)))
	}
	return strings.Join(p, " "), stopped
}

// lua51 is a running lua5.1 serving chunks, or nil when there is none.
type lua51 struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out chan string
}

var (
	lua51Once sync.Once
	lua51Proc *lua51
)

// reference returns the lua5.1 server, started on first use, or nil when
// lua5.1 is not on PATH.
func reference() *lua51 {
	lua51Once.Do(func() {
		if _, err := exec.LookPath("lua5.1"); err != nil {
			return
		}
		r := &lua51{}
		if r.start() == nil {
			lua51Proc = r
		}
	})
	return lua51Proc
}

func (r *lua51) start() error {
	cmd := exec.Command("lua5.1", "-e", lua51Server)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	out := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			out <- sc.Text()
		}
		close(out)
	}()
	r.cmd, r.in, r.out = cmd, in, out
	return nil
}

// run gives code to lua5.1 and returns its serialized result; ok is false
// when lua5.1 took longer than limit (it is then restarted).
func (r *lua51) run(code string, limit time.Duration) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		if r.start() != nil {
			return "", false
		}
	}
	if _, err := io.WriteString(r.in, hex.EncodeToString([]byte(code))+"\n"); err != nil {
		r.restart()
		return "", false
	}
	select {
	case line, ok := <-r.out:
		if !ok {
			r.restart()
			return "", false
		}
		return line, true
	case <-time.After(limit):
		r.restart()
		return "", false
	}
}

func (r *lua51) restart() {
	if r.cmd != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
	r.cmd = nil
}

// luaString is s as a Lua literal that both lexers read alike: every byte
// outside printable ASCII, and the quote and backslash, as \ddd.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			fmt.Fprintf(&b, "\\%03d", c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Tokens the fuzz target builds patterns and subjects from, when asked
// to (a raw byte string is mostly malformed as a pattern): classes, sets,
// anchors, captures, back references, %b, %f, Japanese text.
var (
	patternTokens = []string{"a", "b", "日", "本", ".", "%a", "%d", "%s", "%w", "%p", "%u", "%l", "%x", "%c", "%z",
		"%A", "%S", "%W", "[ab]", "[^a]", "[a-c]", "[%a_]", "[]]", "[^]]", "[%]]", "[\x80-\xff]", "*", "+", "-", "?",
		"(", ")", "()", "%1", "%2", "^", "$", "%b()", "%bab", "%f[%w]", "%f[%W]", "%f[%z]", "%f[a]", "%.", "%%",
		"x", " ", "\xe6", "%", "[", "%b", "%f"}
	formatTokens = []string{"%d", "%5.2f", "%-5s", "%05d", "%+d", "% d", "%#x", "%#o", "%.0f", "%e", "%G", "%g",
		"%.3g", "%c", "%q", "%i", "%u", "%X", "%.3s", "%10.4s", "%%", "x", "日", "%-+ #0", "%.", "%99.99f", "%5", "%#.0o",
		"%.0x", "%#g", "%-08.3d", "%+.1e", "%E", "%s", "%.20g", "%5c", "%-3c", "%05s", "%", ".", "0", "9", "-", "+",
		"#", " ", "s", "d", "x", "f"}
	subjectTokens = []string{"a", "b", "ab", "aab", "日本語", "本", "(", ")", "()", " ", "\t", "x", "1", "42",
		"A", "_", "%", ".", "\x00", "\xff", "\xe6\x97", "hello", "こんにちは", "[", "]", "^", "$", "-"}
)

func fromTokens(s string, tokens []string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(tokens[int(s[i])%len(tokens)])
	}
	return b.String()
}

// fuzzChunk turns a fuzz input into a chunk of Lua calling one library
// function, or "" for an input that tests only a known, documented
// difference (docs/seatml.md §9.3).
func fuzzChunk(op uint8, s, p, r string, a, b int) string {
	if len(s) > 48 || len(p) > 24 || len(r) > 16 {
		return ""
	}
	if op&0x80 != 0 { // tokens, for well-formed patterns and formats
		tokens := patternTokens
		if op%16 == 7 || op%16 == 8 {
			tokens = formatTokens
		}
		s, p = fromTokens(s, subjectTokens), fromTokens(p, tokens)
	}
	// The integers stay where Lua 5.1 and seat convert them alike.
	a, b = a%(1<<20), b%(1<<20)
	if op%16 == 7 || op%16 == 8 {
		// Lua 5.1 cuts a directive's output at a NUL (§9.3).
		s = strings.ReplaceAll(s, "\x00", "")
	}
	S, P, R := luaString(s), luaString(p), luaString(r)
	num := func(n int) string { return strconv.Itoa(n) }
	small := func(n int) string { return num(n%12 - 4) }
	// A replacement string with % before anything but a digit or %, or
	// last, is gopher-lua's (§9.3).
	plainRepl := true
	for i := 0; i < len(r); i++ {
		if r[i] == '%' {
			if i+1 == len(r) || !isdigit(int(r[i+1])) && r[i+1] != '%' {
				plainRepl = false
			}
			i++
		}
	}
	// Lua 5.1 ends a pattern at a NUL byte (§9.3: seat reads it whole).
	if strings.IndexByte(p, 0) >= 0 && op%16 <= 6 {
		return ""
	}
	switch op % 16 {
	case 0:
		return "return string.find(" + S + ", " + P + ", " + small(a) + ", " + strconv.FormatBool(b%2 == 0) + ")"
	case 1:
		return "return string.match(" + S + ", " + P + ", " + small(a) + ")"
	case 2:
		return "local r = {} for a, b, c in string.gmatch(" + S + ", " + P + ") do r[#r + 1] = {a, b, c} if #r > 100 then break end end return r"
	case 3:
		if !plainRepl {
			return ""
		}
		return "return string.gsub(" + S + ", " + P + ", " + R + ", " + small(a+8) + ")"
	case 4:
		return "return string.gsub(" + S + ", " + P + ", {a = 1, [\"日\"] = " + R + ", b = false, [\"()\"] = \"p\"})"
	case 5:
		return "return string.gsub(" + S + ", " + P + ", function(x, y) if x == " + R + " then return nil end return #x .. \"<\" .. tostring(y) end, " + small(a+8) + ")"
	case 6:
		return "local n = 0 for w in string.gmatch(" + S + ", " + P + ") do n = n + 1 if n > 100 then break end end return n, string.find(" + S + ", " + P + ", " + small(b) + ")"
	case 7:
		// Numbers whose tostring is Lua 5.1's too (§9.3: 1e15, 0.1 +
		// 0.2 and inf are written otherwise).
		return "return string.format(" + P + ", " + S + ", " + num(a) + ", " + num(b) + "/1024, " + num(a) + "*1000)"
	case 8:
		// Any number, and no %s or %q to write them with tostring.
		P = luaString(strings.NewReplacer("s", "f", "q", "e").Replace(p))
		return "return string.format(" + P + ", " + num(a) + ", " + num(b) + "/7, 0/0, -1/0, " + num(a) + "*1e10, " + num(b) + "/1024, 1/0, -(0/0))"
	case 9:
		return "return string.rep(" + S + ", " + small(a) + "), string.byte(" + S + ", " + small(a) + ", " + small(b) + "), string.sub(" + S + ", " + small(a) + ", " + small(b) + ")"
	case 10:
		return "return string.upper(" + S + "), string.lower(" + S + "), string.reverse(" + S + "), string.len(" + S + "), string.sub(" + S + ", " + small(a) + ")"
	case 11:
		return "local t = {} for c in string.gmatch(" + S + ", \".\") do t[#t + 1] = c end t[0] = \"z\" return unpack(t, " + small(a) + ", " + small(b) + ")"
	case 12:
		return "local t = {} for c in string.gmatch(" + S + ", \".\") do t[#t + 1] = c end return table.concat(t, " + R + ", " + small(a) + ", " + small(b) + ")"
	case 13:
		return "local t = {} for c in string.gmatch(" + S + ", \".\") do t[#t + 1] = c end table.sort(t) return t, table.concat(t, " + R + ")"
	case 14:
		return "local t = {} for c in string.gmatch(" + S + ", \".\") do t[#t + 1] = c:byte() % 7 end table.sort(t, function(x, y) return x > y end) return t"
	}
	return "local t = {} for c in string.gmatch(" + S + ", \".\") do t[#t + 1] = c end return table.concat(t, " + R + ")"
}

// FuzzStringLibAgainstLua51 runs each input in seat's sandbox and checks
// that no Go panic surfaced (a "runtime error" from inside a library
// function); with lua5.1 on PATH (Debian's package lua5.1) it also
// compares the result with Lua 5.1's, error or not (error messages are
// gopher-lua's and are not compared). Without lua5.1 the seeds still run,
// for the first check. FUZZOPS=,7,8, fuzzes those kinds of call only (see
// fuzzChunk).
//
//	go test -run '^$' -fuzz FuzzStringLibAgainstLua51 -fuzztime 60s ./interpreter/luadm
func FuzzStringLibAgainstLua51(f *testing.F) {
	for _, c := range []struct {
		op      uint8
		s, p, r string
		a, b    int
	}{
		{0, "hello world", "o w", "", 1, 0},
		{0x80, "\x04\x05\x02", "\x00\x19\x1a", "", 0, 0},
		{1, "  こんにちは  ", "^%s*(.-)%s*$", "", 1, 0},
		{1, "abc", "()%1", "", 1, 0},
		{2, "a=1, b=2", "(%w+)=(%w+)", "", 0, 0},
		{2, "THE (quick) fox", "%f[%a]%a+", "", 0, 0},
		{3, "abc", "", "-", 12, 0},
		{3, "hello world", "(o)", "[%1%0]", 8, 0},
		{4, "日本a", "日", "X", 0, 0},
		{5, "f(a(b)c)d", "%b()", "()", 8, 0},
		{6, "abc", "b*", "", 0, 5},
		{7, "日本", "%5s|%-5s|%.2s|%q", "", 0, 0},
		{8, "x", "%x %g %c %5.1f %d", "", -1, 12345678},
		{9, "日本語", "", "", 2, 7},
		{10, "héllo ａｂｃ \xff", "", "", 0, 0},
		{11, "abc", "", "", 4, 6},
		{12, "abc", "", ",", 6, 8},
		{13, "zebra", "", "", 0, 0},
		{14, "zebra", "", "", 0, 0},
		{15, "日本", "", "、", 0, 0},
	} {
		f.Add(c.op, c.s, c.p, c.r, c.a, c.b)
	}
	ref := reference()
	f.Fuzz(func(t *testing.T, op uint8, s, p, r string, a, b int) {
		code := fuzzChunk(op, s, p, r, a, b)
		if ops := os.Getenv("FUZZOPS"); ops != "" && !strings.Contains(ops, ","+strconv.Itoa(int(op%16))+",") {
			return
		}
		if code == "" {
			return
		}
		got, stopped := seatRun(code, time.Second)
		if strings.Contains(got, "runtime error") {
			t.Fatalf("%s\nseat: a Go panic: %s", code, got)
		}
		if stopped != NotStopped || strings.Contains(got, "pattern too complex") || ref == nil {
			return // a runaway pattern, or seat's bound on its depth (§9.3)
		}
		want, ok := ref.run(code, time.Second)
		if !ok {
			return // lua5.1 ran long too
		}
		if strings.HasPrefix(got, "err") && strings.HasPrefix(want, "err") {
			return
		}
		if (op%16 == 7 || op%16 == 8) && hasNUL(got) {
			return // a NUL kept by format (§9.3)
		}
		if got != want {
			t.Fatalf("%s\nseat:    %s\nlua5.1:  %s", code, got, want)
		}
	})
}

// hasNUL reports whether a serialized result has a string with a NUL.
func hasNUL(result string) bool {
	for _, v := range strings.Fields(result) {
		if h, ok := strings.CutPrefix(v, "s:"); ok {
			for i := 0; i+1 < len(h); i += 2 {
				if h[i:i+2] == "00" {
					return true
				}
			}
		}
	}
	return false
}
