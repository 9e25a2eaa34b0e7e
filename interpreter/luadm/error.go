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
	// Code is the line of code the error is on, when it is known; Col, the
	// column in it of what failed (1-based; 0: unknown), which an
	// Explain that finds the culprit sets.
	Code string
	Col  int
}

// Diagnostic is e as seat check's problems are: its place, its message,
// and the failing line of code as the detail, with a caret under what
// failed when that is known. Its Error is e's.
func (e *Error) Diagnostic() schema.Diagnostic {
	d := schema.Diagnostic{Pos: e.Pos, Msg: e.Msg}
	if e.Label != "" {
		d.Msg = e.Label + ": " + e.Msg
	}
	if e.Code != "" {
		d.Detail = schema.Snippet(e.Pos.Line, e.Code, e.Col)
	}
	return d
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
			if c.what == "cond" && e.Pos.File == c.Pos.File {
				// Lua may name the line of the wrapper seat puts around
				// an expression ("return (" just above it, ")" just
				// below): the error is the expression's. (A line further
				// off is a function's the cond called.)
				switch last := c.Pos.Line + strings.Count(c.Src, "\n"); e.Pos.Line {
				case c.Pos.Line - 1:
					e.Pos.Line = c.Pos.Line
				case last + 1:
					e.Pos.Line = last
				}
			}
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
	} else {
		e.Code = c.Line(e.Pos)
	}
	e.Msg = strings.TrimSpace(msg)
	return e
}

// Line is the line of c's code at pos, a line of c's file; "" when pos is
// not in c.
func (c *Code) Line(pos schema.Pos) string {
	if c.Src == "" || pos.File != c.Pos.File || pos.Line < c.Pos.Line {
		return ""
	}
	return strings.TrimRight(NthLine(c.Src, pos.Line-c.Pos.Line+1), " \t\r")
}
