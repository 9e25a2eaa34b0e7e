package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/manager"
)

// debugCommands are seat ctl's debugger commands, for its usage.
const debugCommands = `Debugger (a behavior of a seat run --control):
  break NAME state|leave STATE      stop when the behavior enters (leaves) a state
  break NAME rule [FILE:]LINE       stop when the rule (or widget) at that line fires
  break NAME message ADAPTOR [RE]   stop when a message goes to the adaptor (matching RE)
  break NAME event RE               stop when an event whose text matches RE arrives
  break NAME when LUA               stop before an event when the Lua condition holds
  clear NAME [ID]                   remove a breakpoint, or all of them
  pause NAME                        stop at the next thing it does (at once if idle)
  continue NAME                     go on to the next breakpoint
  step [--micro] NAME               go on to the next event (--micro: the next thing done)
  until NAME STATE                  go on until it enters STATE
  show NAME                         where it stopped, its states, queue, timers, Lua globals
  set NAME VARIABLE JSON            set a Lua global (or name.field): set 受付 guest '"山田"'
  send NAME ADAPTOR TEXT            an event of the adaptor, as if it had arrived
  send --json NAME ADAPTOR JSON     a structured message (a ROS message, an OpenRTM value), as JSON or YAML
With a session per peer, each command takes --session PEER: that peer's session (seat ctl sessions NAME).
`

// debugNames are the debugger's commands.
var debugNames = []string{"break", "clear", "pause", "continue", "step", "until", "show", "set", "send"}

// debugCmd runs a debugger command on the behavior rest[1]; args are
// what follows its name.
func debugCmd(c *manager.Client, cmd, name string, args []string, o debugFlags, stdout io.Writer) error {
	var req manager.DebugRequest
	op := cmd
	query, label := "", name
	if o.session != "" { // a session of a behavior with a session per peer
		query, label = "?session="+url.QueryEscape(o.session), name+" "+o.session
	}
	switch cmd {
	case "show":
		var s interpreter.DebugState
		if len(args) != 0 {
			return usageError("show NAME")
		}
		if err := c.Do(http.MethodGet, "/behaviors/"+name+"/debug"+query, nil, &s); err != nil {
			return err
		}
		printDebug(stdout, label, s)
		return nil
	case "break":
		b, err := parseBreak(args)
		if err != nil {
			return err
		}
		req.Breakpoint = &b
	case "clear":
		switch len(args) {
		case 0:
		case 1:
			id, err := strconv.Atoi(args[0])
			if err != nil || id <= 0 {
				return usageError("clear NAME [ID]: ID is a breakpoint's number (seat ctl show lists them)")
			}
			req.ID = id
		default:
			return usageError("clear NAME [ID]")
		}
	case "pause", "continue":
		if len(args) != 0 {
			return usageError(cmd + " NAME")
		}
	case "step":
		if len(args) != 0 {
			return usageError("step [--micro] NAME")
		}
		req.Micro = o.micro
	case "until":
		if len(args) != 1 {
			return usageError("until NAME STATE")
		}
		req.State = args[0]
	case "set":
		if len(args) != 2 {
			return usageError(`set NAME VARIABLE JSON (a string is quoted: '"山田"')`)
		}
		req.Variable, req.Value = args[0], args[1]
	case "send":
		if len(args) != 2 {
			return usageError("send [--json] NAME ADAPTOR TEXT")
		}
		req.Adaptor, req.Text = args[0], args[1]
		if o.asJSON {
			req.Text, req.Message = "", args[1]
		}
	}
	var s interpreter.DebugState
	if err := c.Do(http.MethodPost, "/behaviors/"+name+"/debug/"+op+query, req, &s); err != nil {
		return err
	}
	printDebug(stdout, label, s)
	return nil
}

// debugFlags are seat ctl's flags a debugger command reads.
type debugFlags struct {
	micro, asJSON bool
	session       string
}

// usageError is a command used wrongly.
type usageError string

func (u usageError) Error() string { return "usage: seat ctl " + string(u) }

// parseBreak reads a breakpoint's words.
func parseBreak(args []string) (interpreter.Breakpoint, error) {
	if len(args) < 2 {
		return interpreter.Breakpoint{}, usageError("break NAME state|leave|rule|message|event|when WHAT")
	}
	b := interpreter.Breakpoint{Kind: args[0]}
	what := strings.Join(args[1:], " ")
	switch b.Kind {
	case interpreter.BreakState, interpreter.BreakLeave:
		b.Name = what
	case interpreter.BreakRule:
		file, line, ok := strings.Cut(args[1], ":")
		if !ok {
			file, line = "", args[1]
		}
		n, err := strconv.Atoi(line)
		if err != nil || len(args) != 2 {
			return b, usageError("break NAME rule [FILE:]LINE")
		}
		b.File, b.Line = file, n
	case interpreter.BreakMessage:
		b.Name = args[1]
		b.Pattern = strings.Join(args[2:], " ")
	case interpreter.BreakEvent:
		b.Pattern = what
	case interpreter.BreakWhen:
		b.Cond = what
	default:
		return b, fmt.Errorf("unknown breakpoint kind %q: state, leave, rule, message, event or when", b.Kind)
	}
	return b, nil
}

// printDebug shows what the debugger shows, one thing a line.
func printDebug(w io.Writer, name string, s interpreter.DebugState) {
	switch {
	case s.Paused && s.At == "between events":
		fmt.Fprintf(w, "%s: paused (%s) between events\n", name, s.Why)
	case s.Paused:
		fmt.Fprintf(w, "%s: paused (%s) at %s\n", name, s.Why, s.At)
	default:
		fmt.Fprintf(w, "%s: running\n", name)
	}
	row := func(label, text string) { fmt.Fprintf(w, "%-12s%s\n", label, text) }
	// first labels the first row of a list; the others are indented.
	first := func(i int, label string) string {
		if i == 0 {
			return label
		}
		return ""
	}
	if s.State != "" {
		st := s.State
		if len(s.Active) > 1 {
			st += " (active: " + strings.Join(s.Active, ", ") + ")"
		}
		row("state", st)
	}
	if len(s.Stack) > 0 {
		row("stack", strings.Join(s.Stack, ", "))
	}
	if s.Event != "" {
		row("event", s.Event)
	}
	for i, q := range s.Queue {
		row(first(i, "queue"), q)
	}
	for i, t := range s.Timers {
		row(first(i, "timers"), fmt.Sprintf("%s in %s", t.What, t.In.Round(time.Millisecond)))
	}
	names := make([]string, 0, len(s.Globals))
	for n := range s.Globals {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		v, _ := jsonText(s.Globals[n])
		if t, ok := s.Globals[n].(string); ok && opaque.MatchString(t) {
			v = t // a function or userdata: its type, not a string
		}
		row(first(i, "globals"), n+" = "+v)
	}
	if len(s.Breakpoints) > 0 {
		fmt.Fprintln(w, "breakpoints")
		for _, b := range s.Breakpoints {
			fmt.Fprintf(w, "  %-3d %s (hits %d)\n", b.ID, (&b).String(), b.Hits)
		}
	}
}

// opaque is how the debugger shows a value that is not data: <function>.
var opaque = regexp.MustCompile(`^<[a-z]+>$`)

// jsonText is a value as JSON writes it, on one line, Japanese as it is.
func jsonText(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", errors.New("not JSON")
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
