package luadm

import (
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// The base and table functions that can run long in one Go call: unpack,
// table.concat and table.sort, load; and collectgarbage, which ran the
// process's collector.

// baseUnpack is Lua 5.1's unpack, its results put on the registry at once.
func baseUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := L.OptInt(2, 1)
	e := 0
	if L.Get(3) == lua.LNil {
		e = t.Len()
	} else {
		e = L.CheckInt(3)
	}
	if i > e {
		return 0
	}
	n := e - i + 1
	if n <= 0 || n > maxResults {
		L.RaiseError("too many results to unpack (at most %d)", maxResults)
	}
	reserve(L, n)
	for k := range n {
		L.Push(t.RawGet(lua.LNumber(i + k))) // RawGetInt sees the array part only: not t[0]
	}
	return n
}

// tableConcat is Lua 5.1's table.concat: t[i] .. sep .. ... .. t[j],
// i and j 1 and #t by default, a value that is not a string or a number
// an error (nil too: the range is not cut to the sequence), and the
// separator a string or a number. The result is built in one buffer of
// its size, refused outright when that is over the memory limit.
// gopher-lua pushed every piece and separator on the registry first
// (quadratic, as unpack).
func tableConcat(memory uint64) lua.LGFunction {
	return func(L *lua.LState) int {
		t := L.CheckTable(1)
		sep := ""
		switch v := L.Get(2).(type) {
		case *lua.LNilType:
		case lua.LString, lua.LNumber:
			sep = v.String()
		default:
			L.TypeError(2, lua.LTString)
		}
		i := L.OptInt(3, 1)
		j := L.OptInt(4, t.Len())
		if i > j {
			L.Push(lua.LString(""))
			return 1
		}
		st := newSteps(L)
		var parts []string // each value is there, so the loop is as long as the table at most
		var total uint64
		for k := i; ; k++ {
			v := t.RawGet(lua.LNumber(k)) // RawGetInt sees the array part only: not t[0]
			if !lua.LVCanConvToString(v) {
				L.RaiseError("invalid value (%s) at index %d in table for 'concat'", v.Type().String(), k)
			}
			s := lua.LVAsString(v)
			parts = append(parts, s)
			total += uint64(len(s))
			if k > i {
				total += uint64(len(sep))
			}
			st.add(1)
			if k == j {
				break
			}
		}
		if total > memory {
			L.RaiseError("table.concat: the result (%d bytes) is over the script memory limit of %s", total, BytesText(memory))
		}
		var b strings.Builder
		b.Grow(int(total))
		for k, s := range parts {
			if k > 0 {
				b.WriteString(sep)
			}
			b.WriteString(s)
			st.copied(len(s) + len(sep))
		}
		L.Push(lua.LString(b.String()))
		return 1
	}
}

// tableSort sorts t[1..#t] with < or the given function, looking at the
// context between comparisons: a long sort without a function runs no Lua.
func tableSort(L *lua.LState) int {
	t := L.CheckTable(1)
	var fn *lua.LFunction
	if L.Get(2) != lua.LNil {
		fn = L.CheckFunction(2)
	}
	n := t.Len()
	s := &sorter{L: L, fn: fn, vals: make([]lua.LValue, n), steps: newSteps(L)}
	for i := range s.vals {
		s.vals[i] = t.RawGetInt(i + 1)
		s.steps.add(1)
	}
	sort.Sort(s)
	for i, v := range s.vals {
		t.RawSetInt(i+1, v)
		s.steps.add(1)
	}
	return 0
}

type sorter struct {
	L     *lua.LState
	fn    *lua.LFunction
	vals  []lua.LValue
	steps steps
}

func (s *sorter) Len() int      { return len(s.vals) }
func (s *sorter) Swap(i, j int) { s.vals[i], s.vals[j] = s.vals[j], s.vals[i] }
func (s *sorter) Less(i, j int) bool {
	s.steps.add(1)
	if s.fn == nil {
		// Two strings: Go's comparison (bytes, as Lua's strcmp in the C
		// locale), counted by their length. gopher-lua's LessThan
		// compares byte by byte in a loop, and counting one step for it
		// let a sort of 2,000 copies of a 10 MB string run 18 s
		// between two looks at the context.
		if a, ok := s.vals[i].(lua.LString); ok {
			if b, ok := s.vals[j].(lua.LString); ok {
				s.steps.copied(min(len(a), len(b)))
				return a < b
			}
		}
		return s.L.LessThan(s.vals[i], s.vals[j])
	}
	s.L.Push(s.fn)
	s.L.Push(s.vals[i])
	s.L.Push(s.vals[j])
	s.L.Call(2, 1)
	less := lua.LVAsBool(s.L.Get(-1))
	s.L.Pop(1)
	return less
}

// collectGarbage does nothing: gopher-lua's ran the process's collector,
// stopping every behavior for each call.
func collectGarbage(L *lua.LState) int {
	L.Push(lua.LNumber(0))
	return 1
}

const (
	// maxLoad is the most source load compiles: gopher-lua's parser and
	// compiler cannot be interrupted, and the compiler takes time in the
	// square of the nesting (functions nested 30,000 deep took 10 s); at
	// 64 KiB and maxSyntaxLevels the worst chunk found takes about 50 ms.
	maxLoad = 64 << 10
	// maxSyntaxLevels is how deep blocks and expressions may nest in a
	// chunk given to load, as Lua 5.1's LUAI_MAXCCALLS.
	maxSyntaxLevels = 200
)

// baseLoad is load: a string of source (never a function or a binary
// chunk, which are errors), compiled as loadString does.
func baseLoad(L *lua.LState) int {
	if L.Get(1).Type() != lua.LTString {
		L.ArgError(1, "load takes a string in seat")
	}
	if strings.HasPrefix(L.CheckString(1), "\x1bLua") {
		L.ArgError(1, "binary chunks are not allowed")
	}
	return baseLoadString(L)
}

// baseLoadString is loadstring, its size and nesting bounded so that one
// call is short. A binary chunk, like any chunk that does not compile,
// gives nil and the reason.
func baseLoadString(L *lua.LState) int {
	src := L.CheckString(1)
	name := L.OptString(2, "<string>")
	fail := func(msg string) int {
		L.Push(lua.LNil)
		L.Push(lua.LString(msg))
		return 2
	}
	if strings.HasPrefix(src, "\x1bLua") {
		return fail(name + ": binary chunks are not allowed")
	}
	if len(src) > maxLoad {
		return fail(name + ": chunk too large (" + BytesText(uint64(len(src))) + "; load takes " + BytesText(maxLoad) + " at most)")
	}
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return fail(err.Error())
	}
	if deeperThan(chunk, maxSyntaxLevels) {
		return fail(name + ": chunk has too many syntax levels (more than 200 nested)")
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return fail(err.Error())
	}
	L.Push(L.NewFunctionFromProto(proto))
	return 1
}

// deeperThan reports whether blocks and expressions nest more than limit
// deep in chunk. Chains that Lua parses in a loop, not by recursion (a +
// b + c, a.b.c, f()(), elseif), count as one level, as in Lua; the walk
// itself goes no deeper than limit.
func deeperThan(chunk []ast.Stmt, limit int) bool {
	w := depthWalker{limit: limit}
	w.stmts(chunk, 0)
	return w.over
}

type depthWalker struct {
	limit int
	over  bool
}

func (w *depthWalker) deep(d int) bool {
	if d > w.limit {
		w.over = true
	}
	return w.over
}

func (w *depthWalker) stmts(list []ast.Stmt, d int) {
	if w.deep(d) {
		return
	}
	for _, s := range list {
		w.stmt(s, d)
	}
}

func (w *depthWalker) exprs(list []ast.Expr, d int) {
	for _, e := range list {
		w.expr(e, d)
	}
}

func (w *depthWalker) stmt(s ast.Stmt, d int) {
	if w.deep(d) {
		return
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		w.exprs(s.Lhs, d+1)
		w.exprs(s.Rhs, d+1)
	case *ast.LocalAssignStmt:
		w.exprs(s.Exprs, d+1)
	case *ast.FuncCallStmt:
		w.expr(s.Expr, d+1)
	case *ast.DoBlockStmt:
		w.stmts(s.Stmts, d+1)
	case *ast.WhileStmt:
		w.expr(s.Condition, d+1)
		w.stmts(s.Stmts, d+1)
	case *ast.RepeatStmt:
		w.expr(s.Condition, d+1)
		w.stmts(s.Stmts, d+1)
	case *ast.IfStmt:
		for {
			w.expr(s.Condition, d+1)
			w.stmts(s.Then, d+1)
			next, ok := elseif(s)
			if !ok {
				w.stmts(s.Else, d+1)
				return
			}
			s = next
		}
	case *ast.NumberForStmt:
		w.expr(s.Init, d+1)
		w.expr(s.Limit, d+1)
		if s.Step != nil {
			w.expr(s.Step, d+1)
		}
		w.stmts(s.Stmts, d+1)
	case *ast.GenericForStmt:
		w.exprs(s.Exprs, d+1)
		w.stmts(s.Stmts, d+1)
	case *ast.FuncDefStmt:
		w.expr(s.Name.Func, d+1)
		w.expr(s.Name.Receiver, d+1)
		w.stmts(s.Func.Stmts, d+1)
	case *ast.ReturnStmt:
		w.exprs(s.Exprs, d+1)
	}
}

// elseif returns the if of an elseif: an else block that is one if alone.
func elseif(s *ast.IfStmt) (*ast.IfStmt, bool) {
	if len(s.Else) != 1 {
		return nil, false
	}
	next, ok := s.Else[0].(*ast.IfStmt)
	return next, ok
}

func (w *depthWalker) expr(e ast.Expr, d int) {
	for !w.deep(d) {
		switch x := e.(type) {
		case *ast.AttrGetExpr:
			w.expr(x.Key, d+1)
			e = x.Object // a.b.c: a loop in Lua
		case *ast.FuncCallExpr:
			w.exprs(x.Args, d+1)
			if x.Receiver != nil {
				w.expr(x.Func, d+1)
				e = x.Receiver
			} else {
				e = x.Func
			}
		case *ast.TableExpr:
			for _, f := range x.Fields {
				if f.Key != nil {
					w.expr(f.Key, d+1)
				}
				w.expr(f.Value, d+1)
			}
			return
		case *ast.ArithmeticOpExpr:
			w.expr(x.Rhs, d+1)
			e = x.Lhs // a + b + c: left-deep, a loop in Lua
		case *ast.LogicalOpExpr:
			w.expr(x.Rhs, d+1)
			e = x.Lhs
		case *ast.RelationalOpExpr:
			w.expr(x.Rhs, d+1)
			e = x.Lhs
		case *ast.StringConcatOpExpr:
			w.expr(x.Lhs, d+1)
			e, d = x.Rhs, d+1 // right-associative: recursion in Lua too
		case *ast.UnaryMinusOpExpr:
			e, d = x.Expr, d+1
		case *ast.UnaryNotOpExpr:
			e, d = x.Expr, d+1
		case *ast.UnaryLenOpExpr:
			e, d = x.Expr, d+1
		case *ast.FunctionExpr:
			w.stmts(x.Stmts, d+1)
			return
		default:
			return
		}
	}
}
