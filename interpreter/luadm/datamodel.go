package luadm

import (
	"fmt"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"

	"github.com/seatml/seat/schema"
)

// Code is Lua compiled once and placed at its position in its file, so
// that its run-time errors name the file's line: an expression, a
// location to assign to, or a script. It is the one compiled form of
// both languages' Lua: an SCXML document's compiles at load (Compile…),
// a SEATML file's chunks when first run (NewChunk), which keeps loading a
// large file fast. Code that does not compile keeps its error, which
// every run returns (SCXML runs a document with an illegal expression:
// evaluating it raises error.execution).
type Code struct {
	Pos  schema.Pos
	Src  string
	what string // "expr", "cond", "location", "script" ...: for errors
	// bare: a SEATML chunk, whose errors have no label and are placed
	// at the line Lua names; slot, if positive, its index among its
	// program's chunks, by which a datamodel keeps its function.
	bare bool
	slot int
	once sync.Once // a chunk's compilation
	// proto is the compiled code; err, its compile error.
	proto *lua.FunctionProto
	err   *schema.Diagnostic
	root  string // a location's variable
}

// NewChunk returns a SEATML chunk that starts at pos: a script, or a
// <cond> (an expression), compiled when first run. Check finds its
// errors at load. slot, if positive, is its index among its program's
// chunks (each is given its own).
func NewChunk(src string, pos schema.Pos, cond bool, slot int) *Code {
	c := &Code{Pos: pos, Src: src, what: "script", bare: true, slot: slot}
	if cond {
		c.what = "cond"
	}
	return c
}

// IsCond reports whether the code is a condition.
func (c *Code) IsCond() bool { return c.what == "cond" }

// compileName is what Compile calls the code: the expression's name, or
// "" for a script.
func (c *Code) compileName() string {
	if c.what == "script" {
		return ""
	}
	return c.what
}

// Check finds a chunk's errors at load: a syntax error, or for a chunk
// that mayFailToCompile, a compile error (the chunk is then compiled).
// Other chunks compile when first run.
func (c *Code) Check() *schema.Diagnostic {
	if MayFailToCompile(c.Src) {
		c.compile()
		return c.err
	}
	_, d := Parse(c.Pos.File, c.Src, c.Pos.Line, c.Pos.Col, c.compileName())
	return d
}

// MayFailToCompile reports whether gopher-lua could reject src only when
// compiling it, not when parsing it: such chunks compile at load.
func MayFailToCompile(src string) bool {
	return len(src) > 2048 || strings.Contains(src, "...") || strings.Contains(src, "goto") ||
		strings.Contains(src, "::") || strings.Contains(src, "break")
}

// compile compiles a chunk once (other code compiled when it was made).
func (c *Code) compile() {
	if !c.bare {
		return
	}
	c.once.Do(func() {
		c.proto, c.err = Compile(c.Pos.File, c.Src, c.Pos.Line, c.Pos.Col, c.compileName())
	})
}

// CompileExpr compiles an expression that starts at pos; what names it
// in errors (the attribute: "expr", "cond").
func CompileExpr(src string, pos schema.Pos, what string) *Code {
	c := &Code{Pos: pos, Src: src, what: what}
	c.proto, c.err = Compile(pos.File, src, pos.Line, pos.Col, what)
	return c
}

// CompileScript compiles a script that starts at pos.
func CompileScript(src string, pos schema.Pos) *Code {
	c := &Code{Pos: pos, Src: src, what: "script"}
	c.proto, c.err = Compile(pos.File, src, pos.Line, pos.Col, "")
	return c
}

// CompileLocation compiles an assignment to a location: a variable, or a
// field path such as a.b[1], that starts at pos.
func CompileLocation(loc string, pos schema.Pos) *Code {
	c := &Code{Pos: pos, Src: loc, what: "location"}
	trimmed := strings.TrimSpace(loc)
	c.root = trimmed
	if i := strings.IndexAny(c.root, ".[: "); i >= 0 {
		c.root = c.root[:i]
	}
	if !isLocation(trimmed) {
		c.err = &schema.Diagnostic{Pos: pos, Msg: fmt.Sprintf("location %q is not a variable or a field", loc)}
		return c
	}
	// Its syntax errors are placed in what the user wrote, read as the
	// expression it is, not in the assignment seat makes of it.
	if _, d := Parse(pos.File, loc, pos.Line, pos.Col, "location"); d != nil {
		c.err = d
		return c
	}
	// A chunk takes its arguments as "...": the value is the first.
	c.proto, c.err = Compile(pos.File, loc+" = ...", pos.Line, pos.Col, "")
	return c
}

// Err is the code's compile error, or nil.
func (c *Code) Err() *schema.Diagnostic {
	c.compile()
	return c.err
}

// label names the code in its errors ("" for a chunk).
func (c *Code) label() string {
	switch {
	case c.bare:
		return ""
	case c.what == "script":
		return "<script>"
	}
	return fmt.Sprintf("%s %q", c.what, schema.Excerpt(strings.TrimSpace(c.Src), maxQuoted))
}

// DataModel evaluates expressions, conditions, locations and scripts in a
// Lua state: the one way Lua code of either language is run.
type DataModel struct {
	L         *lua.LState
	fns       map[*Code]*lua.LFunction
	slots     []*lua.LFunction // the functions of chunks that have a slot
	protected map[string]bool
	dog       *Watchdog
	timeout   time.Duration
	memory    uint64
	// Explain, if set, may reword the message of a SEATML chunk's Lua
	// error (not a stop): what was nil, a Python idiom, the sandbox. An
	// SCXML document's code, which has a label, keeps Lua's words.
	Explain func(e *Error, c *Code)
}

// New returns a datamodel over L.
func New(L *lua.LState) *DataModel {
	return &DataModel{L: L, fns: map[*Code]*lua.LFunction{}, protected: map[string]bool{}}
}

// Limit stops each later call that runs longer than timeout or grows the
// heap by more than memory bytes, with an error; Close releases the
// watchdog.
func (d *DataModel) Limit(timeout time.Duration, memory uint64) {
	d.dog = NewWatchdog(d.L, timeout, memory)
	d.timeout, d.memory = timeout, memory
}

// UseWatchdog limits later calls with a watchdog its caller made for L
// and closes; timeout and memory are its limits, which errors name.
func (d *DataModel) UseWatchdog(dog *Watchdog, timeout time.Duration, memory uint64) {
	d.dog, d.timeout, d.memory = dog, timeout, memory
}

// Close releases the datamodel's watchdog and Lua state.
func (d *DataModel) Close() {
	if d.dog != nil {
		d.dog.Close()
	}
	d.L.Close()
}

// Protect makes the names read-only for Assign (SCXML's system
// variables).
func (d *DataModel) Protect(names ...string) {
	for _, n := range names {
		d.protected[n] = true
	}
}

// Protected reports whether a name is read-only (see Protect).
func (d *DataModel) Protected(name string) bool { return d.protected[name] }

// function returns code's function in d's state, made once.
func (d *DataModel) function(c *Code) (*lua.LFunction, error) {
	if c.slot > 0 && c.slot < len(d.slots) {
		if fn := d.slots[c.slot]; fn != nil {
			return fn, nil
		}
	} else if fn := d.fns[c]; fn != nil {
		return fn, nil
	}
	c.compile()
	if c.err != nil {
		if c.bare {
			return nil, &Error{Pos: schema.Pos{File: c.Pos.File, Line: c.Pos.Line}, Msg: c.err.Error()}
		}
		return nil, &Error{Pos: c.err.Pos, Msg: c.err.Msg}
	}
	fn := d.L.NewFunctionFromProto(c.proto)
	if c.slot > 0 {
		if c.slot >= len(d.slots) {
			d.slots = append(d.slots, make([]*lua.LFunction, c.slot+1-len(d.slots))...)
		}
		d.slots[c.slot] = fn
	} else {
		d.fns[c] = fn
	}
	return fn, nil
}

// run calls code with args, leaving nret results on the stack. Its
// error is an *Error.
func (d *DataModel) run(c *Code, nret int, args ...lua.LValue) error {
	var fn *lua.LFunction
	if c.slot > 0 && c.slot < len(d.slots) { // a chunk run before: the event path's
		fn = d.slots[c.slot]
	}
	if fn == nil {
		var err error
		if fn, err = d.function(c); err != nil {
			return err
		}
	}
	return d.Call(fn, c, nret, args...)
}

// Call calls fn, the function of code c or one that code defined (c then
// says where, for errors), under the datamodel's limits, leaving nret
// results on the stack. Its error is an *Error.
func (d *DataModel) Call(fn *lua.LFunction, c *Code, nret int, args ...lua.LValue) error {
	top := d.L.GetTop()
	d.L.Push(fn)
	for _, a := range args {
		d.L.Push(a)
	}
	if d.dog != nil {
		d.dog.Start()
	}
	err := d.L.PCall(len(args), nret, nil)
	stopped := NotStopped
	if d.dog != nil {
		stopped = d.dog.Stop()
	}
	if err == nil { // it ran to its end, whatever the watchdog saw last
		return nil
	}
	d.L.SetTop(top)
	e := c.fail(err, stopped, d.timeout, d.memory)
	if stopped == NotStopped && c.bare && d.Explain != nil {
		d.Explain(e, c)
	}
	return e
}

// Eval evaluates an expression.
func (d *DataModel) Eval(c *Code) (lua.LValue, error) {
	if err := d.run(c, 1); err != nil {
		return lua.LNil, err
	}
	v := d.L.Get(-1)
	d.L.Pop(1)
	return v, nil
}

// Cond evaluates a condition: Lua's truth (nil and false are false).
func (d *DataModel) Cond(c *Code) (bool, error) {
	v, err := d.Eval(c)
	if err != nil {
		return false, err
	}
	return lua.LVAsBool(v), nil
}

// Assign sets a location to v. A location whose table does not exist is
// an error, as is one naming a protected variable.
func (d *DataModel) Assign(c *Code, v lua.LValue) error {
	if d.protected[c.root] {
		return fmt.Errorf("%s: %s is a system variable and cannot be assigned", c.Pos, c.root)
	}
	return d.run(c, 0, v)
}

// isLocation reports whether s looks like an assignable Lua expression:
// a name followed by fields and indexes.
func isLocation(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	return !strings.ContainsAny(s, "()=;,") || strings.Contains(s, "[")
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// IsName reports whether s is a Lua name: ASCII letters, digits and _,
// not starting with a digit, and not a keyword (Lua 5.1, as gopher-lua,
// has no other names).
func IsName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isNameStart(c) && !(c >= '0' && c <= '9') {
			return false
		}
	}
	switch s {
	case "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in",
		"local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while", "goto":
		return false
	}
	return true
}

// Exec runs a script.
func (d *DataModel) Exec(c *Code) error { return d.run(c, 0) }

// Set sets a global variable.
func (d *DataModel) Set(name string, v lua.LValue) { d.L.SetGlobal(name, v) }

// Lazy is Go data that makes its own Lua value, when a script first
// reads it.
type Lazy interface {
	LuaValue(L *lua.LState) lua.LValue
}

// ToLua converts a Go value (nil, bool, numbers, string, []any,
// map[string]any, lua.LValue, Lazy) to a Lua value in L.
func ToLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case lua.LValue:
		return x
	case Lazy:
		return x.LuaValue(L)
	case bool:
		return lua.LBool(x)
	case int:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := L.CreateTable(len(x), 0)
		for _, e := range x {
			t.Append(ToLua(L, e))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, e := range x {
			t.RawSetString(k, ToLua(L, e))
		}
		return t
	}
	return lua.LString(fmt.Sprint(v))
}

// FromLua converts a Lua value to a Go value that does not refer to any
// Lua state: tables become []any (a sequence; an empty table is an empty
// list) or map[string]any, and functions and userdata their description.
// A table that contains itself, one nested deeper than MaxDepth, or more
// than MaxValues values in all (a table shared many times over is copied
// each time) is refused with an error instead of running out of stack or
// memory.
func FromLua(v lua.LValue) (any, error) {
	c := converter{budget: MaxValues}
	return c.value(v, 0)
}

// The bounds of FromLua.
const (
	MaxDepth  = 100
	MaxValues = 100000
)

type converter struct {
	budget int
	path   []*lua.LTable // the tables being converted, outermost first
}

func (c *converter) value(v lua.LValue, depth int) (any, error) {
	if c.budget--; c.budget < 0 {
		return nil, fmt.Errorf("the value has more than %d values in all", MaxValues)
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		return float64(x), nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		return c.table(x, depth)
	case *lua.LUserData:
		if r, ok := x.Value.(Record); ok {
			// a field a script may have changed is converted as a
			// value of this one: a table that contains its own record
			// is refused as one that contains itself.
			return r.GoValue(func(v lua.LValue) (any, error) { return c.value(v, depth+1) })
		}
	}
	return v.String(), nil
}

func (c *converter) table(t *lua.LTable, depth int) (any, error) {
	if depth >= MaxDepth {
		return nil, fmt.Errorf("the value has tables nested more than %d deep", MaxDepth)
	}
	for _, p := range c.path {
		if p == t {
			return nil, fmt.Errorf("the value is a table that contains itself")
		}
	}
	c.path = append(c.path, t)
	defer func() { c.path = c.path[:len(c.path)-1] }()
	n := t.Len()
	count := 0
	t.ForEach(func(lua.LValue, lua.LValue) { count++ })
	if n == count {
		l := make([]any, n)
		for i := 1; i <= n; i++ {
			e, err := c.value(t.RawGetInt(i), depth+1)
			if err != nil {
				return nil, err
			}
			l[i-1] = e
		}
		return l, nil
	}
	m := make(map[string]any, count)
	var err error
	t.ForEach(func(k, e lua.LValue) {
		if err == nil {
			m[k.String()], err = c.value(e, depth+1)
		}
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// IsLiteral reports whether text is a Lua literal: nil, a boolean, a
// number, a string, or a table constructor of literals (a negative
// number included). Such text is data; anything else (a name, a call) is
// code, which <data> content is never run as.
func IsLiteral(text string) bool {
	stmts, err := parse.Parse(strings.NewReader("return "+text), "literal")
	if err != nil || len(stmts) != 1 {
		return false
	}
	ret, ok := stmts[0].(*ast.ReturnStmt)
	return ok && len(ret.Exprs) == 1 && literal(ret.Exprs[0])
}

func literal(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.NilExpr, *ast.TrueExpr, *ast.FalseExpr, *ast.NumberExpr, *ast.StringExpr:
		return true
	case *ast.UnaryMinusOpExpr:
		_, ok := x.Expr.(*ast.NumberExpr)
		return ok
	case *ast.TableExpr:
		for _, f := range x.Fields {
			if f.Key != nil && !literal(f.Key) || !literal(f.Value) {
				return false
			}
		}
		return true
	}
	return false
}
