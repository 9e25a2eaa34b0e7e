package luadm

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/seatml/seat/schema"
)

// Error is Lua code that failed when run, SEATML's or an SCXML
// document's: placed at its line in its file, with what failed and why.
// It is the one error a script, a condition or an expression returns.
type Error struct {
	Pos schema.Pos
	// Label names what failed, for code that has one: `<script>`,
	// `cond "x > 1"`; "" for a SEATML chunk, whose position says it.
	Label string
	Msg   string
	// Stopped says which limit stopped the code (NotStopped: Lua raised
	// the error).
	Stopped StopReason
}

func (e *Error) Error() string {
	if e.Label != "" {
		return e.Pos.String() + ": " + e.Label + ": " + e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// locRE finds the file:line gopher-lua puts before a runtime error.
var locRE = regexp.MustCompile(`^(.*?):(\d+): `)

// fail places a run-time error of code c. A SEATML chunk's is placed at
// the file:line Lua names (a function of another file included), else at
// the chunk's start. Other code's: at its position, or for a script at
// the line of its own file that Lua names (a script spans lines; an
// expression is placed at its start, as Lua may name the line of the
// wrapper seat adds). A stopped call says which limit stopped it.
func (c *Code) fail(err error, stopped StopReason, timeout time.Duration, memory uint64) *Error {
	msg := err.Error()
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		msg = ae.Object.String()
	}
	e := &Error{Pos: c.Pos, Label: c.label(), Stopped: stopped}
	if c.bare {
		e.Pos.Col = 0
		if m := locRE.FindStringSubmatch(msg); m != nil {
			e.Pos.File = m[1]
			e.Pos.Line, _ = strconv.Atoi(m[2])
			msg = msg[len(m[0]):]
		}
	} else if rest, ok := strings.CutPrefix(msg, c.Pos.File+":"); ok && stopped == NotStopped {
		if i := strings.Index(rest, ": "); i > 0 {
			if line, err := strconv.Atoi(rest[:i]); err == nil {
				msg = rest[i+2:]
				if c.what == "script" && line != c.Pos.Line {
					e.Pos = schema.Pos{File: c.Pos.File, Line: line}
				}
			}
		}
	}
	if stopped != NotStopped {
		msg = StopText(stopped, timeout, memory)
	}
	e.Msg = strings.TrimSpace(msg)
	return e
}
