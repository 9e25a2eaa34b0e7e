package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/width"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/manager"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// DefaultControl is where seat ctl looks for a seat started with --control.
const DefaultControl = "127.0.0.1:7070"

// ctlCommands lists seat ctl's commands, for its usage.
const ctlCommands = `Commands:
  list                    the behaviors, their states and SEATML states
  status NAME             one behavior
  sessions NAME           the sessions of a behavior that opens them (session="peer")
  load [--start] FILE     load a behavior file (and start it)
  start NAME              start a loaded or unloaded behavior
  stop NAME               stop a running behavior
  unload NAME             unload a behavior
  reload [--fresh] [--set A.X=V] NAME
                          load the file again, all or nothing: the new version is
                          checked and its adaptors opened (or kept, with their
                          connections) before the old one stops; it goes on where
                          the old one was (states, stack, timers, plain Lua
                          globals), or from its initial state with --fresh
--control defaults to ` + DefaultControl + `; start seat with: seat run --control 7070 FILE...
`

func ctlCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ctl", stderr)
	addr := fs.String("control", DefaultControl, "Address of the control API of a seat started with --control.")
	start := fs.Bool("start", false, "With load: start the behavior too.")
	fresh := fs.Bool("fresh", false, "With reload: start the new version from its initial state, with fresh Lua globals.")
	session := fs.String("session", "", "With a debugger command: the session of the peer `PEER` (its address, as seat ctl sessions lists it), in a behavior with a session per peer.")
	asJSON := fs.Bool("json", false, "With send: the text is a structured message (a ROS message, an OpenRTM value) as JSON or YAML, given to the behavior as one (event.data, rtc_in_data).")
	micro := fs.Bool("micro", false, "With step: go on to the next thing the behavior does (a state entered or left, a rule fired, a message sent), not the next event.")
	var set []string
	fs.Func("set", "With reload: override an adaptor attribute, as ADAPTOR.ATTRIBUTE=VALUE (--set chat.port=5100), kept for later reloads; repeatable.", func(v string) error {
		if _, err := seatml.ParseOverride(v); err != nil {
			return err
		}
		set = append(set, v)
		return nil
	})
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return flagExit(err)
	}
	c := &manager.Client{Addr: *addr}
	usageErr := func() error {
		printUsage(stderr, fs)
		return exitStatus(2)
	}
	if len(rest) == 0 {
		return usageErr()
	}
	fail := func(err error) error {
		msg := err.Error()
		if *addr != DefaultControl { // the hints name commands to run: with this endpoint
			msg = strings.ReplaceAll(msg, "seat ctl ", "seat ctl --control "+*addr+" ")
		}
		fmt.Fprintln(stderr, "seat ctl:", msg)
		return exitStatus(1)
	}
	cmd := rest[0]
	if cmd == "help" {
		fmt.Fprint(stdout, ctlCommands)
		fmt.Fprint(stdout, debugCommands)
		return nil
	}
	if slices.Contains(debugNames, cmd) && len(rest) >= 2 {
		err := debugCmd(c, cmd, rest[1], rest[2:], debugFlags{micro: *micro, asJSON: *asJSON, session: *session}, stdout)
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintln(stderr, "seat ctl:", err)
			return exitStatus(2)
		}
		if err != nil {
			return fail(err)
		}
		return nil
	}
	if !slices.Contains(ctlNames, cmd) && !slices.Contains(debugNames, cmd) {
		fmt.Fprintf(stderr, "seat ctl: unknown command %q%s\n", cmd, schema.DidYouMean(cmd, ctlNames, "%s"))
		fmt.Fprint(stderr, ctlCommands)
		fmt.Fprint(stderr, debugCommands)
		return exitStatus(2)
	}
	if cmd != "list" && cmd != "load" && len(rest) == 1 {
		// A command on a behavior, without its name: say so, with the names.
		msg := fmt.Sprintf("seat ctl %s: which behavior? give its name: seat ctl %s NAME", cmd, cmd)
		var list []manager.Info
		if c.Do(http.MethodGet, "/behaviors", nil, &list) == nil {
			names := make([]string, len(list))
			for i, b := range list {
				names[i] = b.Name
			}
			if len(names) == 0 {
				msg += " (no behavior is loaded)"
			} else {
				msg += " (the behaviors: " + strings.Join(names, ", ") + ")"
			}
		}
		fmt.Fprintln(stderr, msg)
		return exitStatus(2)
	}
	var info manager.Info
	switch {
	case cmd == "list" && len(rest) == 1:
		var list []manager.Info
		if err := c.Do(http.MethodGet, "/behaviors", nil, &list); err != nil {
			return fail(err)
		}
		printList(stdout, list)
		return nil
	case cmd == "status" && len(rest) == 2:
		if err := c.Do(http.MethodGet, "/behaviors/"+rest[1], nil, &info); err != nil {
			return fail(err)
		}
		printList(stdout, []manager.Info{info})
		if s := info.Sessions; s != nil {
			fmt.Fprintf(stdout, "\nsessions: %d open, %d started, %d ended (seat ctl sessions %s lists them)\n", s.Open, s.Created, s.Ended, info.Name)
		}
		printAdaptors(stdout, info.Adaptors)
		return nil
	case cmd == "sessions" && len(rest) == 2:
		var list []interpreter.SessionInfo
		if err := c.Do(http.MethodGet, "/behaviors/"+rest[1]+"/sessions", nil, &list); err != nil {
			return fail(err)
		}
		rows := [][]string{{"PEER", "STATE", "SINCE"}}
		for _, s := range list {
			rows = append(rows, []string{s.Peer, orDash(s.State), s.Since.Local().Format(time.TimeOnly)})
		}
		writeTable(stdout, rows)
		return nil
	case cmd == "load" && len(rest) == 2:
		file, _ := filepath.Abs(rest[1]) // the server may run elsewhere
		if err := c.Do(http.MethodPost, "/behaviors", map[string]any{"file": file, "start": *start}, &info); err != nil {
			return fail(err)
		}
	case cmd == "reload" && len(rest) == 2:
		var body any
		if len(set) > 0 || *fresh {
			body = map[string]any{"set": set, "fresh": *fresh}
		}
		if err := c.Do(http.MethodPost, "/behaviors/"+rest[1]+"/reload", body, &info); err != nil {
			return fail(err)
		}
		printList(stdout, []manager.Info{info})
		switch {
		case info.Kept && info.Sessions != nil: // a session per peer: each went on in its own states
			fmt.Fprintf(stdout, "\nevery session went on where it was (%d open; seat ctl sessions %s)\n", info.Sessions.Open, info.Name)
		case info.Kept:
			fmt.Fprintf(stdout, "\nwent on where it was (%s)\n", orDash(strings.Join(info.Active, ", ")))
		}
		for _, n := range info.NotKept {
			fmt.Fprintln(stdout, "not carried over:", n)
		}
		return nil
	case (cmd == "start" || cmd == "stop" || cmd == "unload") && len(rest) == 2:
		if err := c.Do(http.MethodPost, "/behaviors/"+rest[1]+"/"+cmd, nil, &info); err != nil {
			return fail(err)
		}
	default:
		return usageErr()
	}
	printList(stdout, []manager.Info{info})
	return nil
}

// ctlNames are seat ctl's commands.
var ctlNames = []string{"list", "status", "sessions", "load", "start", "stop", "unload", "reload"}

// reasonWidth is the widest REASON a list shows; seat ctl status NAME
// shows the whole of it.
const reasonWidth = 40

// printList shows behaviors as a table aligned by display width (a
// Japanese name takes two columns a character). A long reason is cut in
// the table and given whole below it, on a line of its own, without the
// behavior's file name (the FILE column has it).
func printList(w io.Writer, list []manager.Info) {
	rows := [][]string{{"NAME", "STATE", "SEATML STATE", "SINCE", "REASON", "FILE"}}
	var whole []string
	for _, i := range list {
		reason := orDash(strings.ReplaceAll(i.Reason, i.File+":", ""))
		if displayWidth(reason) > reasonWidth {
			whole = append(whole, i.Name+": "+reason)
			reason = cutWidth(reason, reasonWidth-1) + "…"
		}
		rows = append(rows, []string{i.Name, string(i.State), orDash(i.SEATMLState), i.Since.Local().Format(time.TimeOnly), reason, i.File})
	}
	writeTable(w, rows)
	if len(whole) > 0 {
		fmt.Fprintln(w)
		for _, l := range whole {
			fmt.Fprintln(w, l)
		}
	}
}

// writeTable writes rows in columns two spaces apart, padded by display
// width; the last column is not padded.
func writeTable(w io.Writer, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for c, cell := range r {
			if c >= len(widths) {
				widths = append(widths, 0)
			}
			widths[c] = max(widths[c], displayWidth(cell))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for c, cell := range r {
			b.WriteString(cell)
			if c < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[c]-displayWidth(cell)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// displayWidth is how many terminal columns s takes: East Asian wide and
// fullwidth characters take two.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// cutWidth returns the longest start of s that fits in n columns.
func cutWidth(s string, n int) string {
	w := 0
	for i, r := range s {
		if w+runeWidth(r) > n {
			return s[:i]
		}
		w += runeWidth(r)
	}
	return s
}

// printAdaptors shows each open adaptor's connections and what it refused
// (docs/guarantees.md explains each column).
func printAdaptors(w io.Writer, list []interpreter.AdaptorInfo) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintln(w)
	rows := [][]string{{"ADAPTOR", "TYPE", "ADDRESS", "OPEN", "ACCEPTED", "REFUSED", "TOO LONG", "PARTIAL", "REPAIRED", "INVALID", "SLOW", "OTHER"}}
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, a := range list {
		rows = append(rows, []string{a.Name, a.Type, orDash(a.Addr), n(a.Open), n(a.Accepted), n(a.Refused),
			n(a.LineTooLong), n(a.PartialLine), n(a.Repaired), n(a.InvalidFrame), n(a.SlowPeer), ownCounts(a.Stats)})
	}
	writeTable(w, rows)
	// The adaptors that list their connections (OpenRTM ports), one by
	// one.
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	conns := [][]string{{"ADAPTOR", "CONNECTED TO", "HOW", "SENT", "RECEIVED", "DROPPED", "FAILED"}}
	for _, a := range list {
		for _, c := range a.Conns {
			conns = append(conns, []string{a.Name, c.Peer, orDash(c.Detail), u(c.Sent), u(c.Received), u(c.Dropped), u(c.Failed)})
		}
	}
	if len(conns) > 1 {
		fmt.Fprintln(w)
		writeTable(w, conns)
	}
}

// ownCounts shows the counts of one kind of adaptor (MQTT, ROS) that are
// not zero.
func ownCounts(s adaptors.Stats) string {
	var parts []string
	if s.EmptyLevel > 0 {
		parts = append(parts, fmt.Sprintf("empty_level=%d", s.EmptyLevel))
	}
	if s.RetainedAgain > 0 {
		parts = append(parts, fmt.Sprintf("retained_again=%d", s.RetainedAgain))
	}
	if s.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("dropped=%d", s.Dropped))
	}
	if s.WrongType > 0 {
		parts = append(parts, fmt.Sprintf("wrong_type=%d", s.WrongType))
	}
	return orDash(strings.Join(parts, " "))
}

// orDash shows an empty column as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
