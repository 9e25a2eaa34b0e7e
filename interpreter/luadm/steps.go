package luadm

import (
	"context"

	lua "github.com/yuin/gopher-lua"
)

// stepsPerCheck is how many units of work a library function does between
// two looks at the Lua state's context: a unit is one step of the pattern
// matcher, one comparison of a sort, or about 256 bytes copied, so a look
// comes every few tens of microseconds.
const stepsPerCheck = 1 << 12

// steps lets a library function that can run long in one Go call stop at
// the script limits as the Lua VM does between instructions: it counts the
// function's work and, every stepsPerCheck units, looks at the state's
// context (the watchdog's), raising the VM's own error once it is done.
// Looking also tells the watchdog that the call is running, not starved.
type steps struct {
	L    *lua.LState
	ctx  context.Context
	left int
}

func newSteps(L *lua.LState) steps {
	return steps{L: L, ctx: L.Context(), left: stepsPerCheck}
}

// add counts n units of work.
func (s *steps) add(n int) {
	s.left -= n
	if s.left <= 0 {
		s.check()
	}
}

// copied counts n bytes copied.
func (s *steps) copied(n int) { s.add(1 + n>>8) }

func (s *steps) check() {
	s.left = stepsPerCheck
	if s.ctx == nil {
		return
	}
	select {
	case <-s.ctx.Done():
		s.L.RaiseError("%s", s.ctx.Err().Error())
	default:
	}
}
