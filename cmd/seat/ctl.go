package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/manager"
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
  reload [--set A.X=V] NAME
                          load the file again, all or nothing: the new version is
                          checked and its adaptors opened (or kept, with their
                          connections) before the old one stops
--control defaults to ` + DefaultControl + `; start seat with: seat run --control 7070 FILE...
`

func ctlCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ctl", stderr)
	addr := fs.String("control", DefaultControl, "Address of the control API of a seat started with --control.")
	start := fs.Bool("start", false, "With load: start the behavior too.")
	var set []string
	fs.Func("set", "With reload: override an adaptor attribute, as ADAPTOR.ATTRIBUTE=VALUE (--set chat.port=5100), kept for later reloads; repeatable.", func(v string) error {
		if _, err := interpreter.ParseOverride(v); err != nil {
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
	var info manager.Info
	switch cmd := rest[0]; {
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
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PEER\tSTATE\tSINCE")
		for _, s := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Peer, orDash(s.State), s.Since.Local().Format(time.TimeOnly))
		}
		tw.Flush()
		return nil
	case cmd == "load" && len(rest) == 2:
		file, _ := filepath.Abs(rest[1]) // the server may run elsewhere
		if err := c.Do(http.MethodPost, "/behaviors", map[string]any{"file": file, "start": *start}, &info); err != nil {
			return fail(err)
		}
	case cmd == "reload" && len(rest) == 2:
		var body any
		if len(set) > 0 {
			body = map[string]any{"set": set}
		}
		if err := c.Do(http.MethodPost, "/behaviors/"+rest[1]+"/reload", body, &info); err != nil {
			return fail(err)
		}
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

func printList(w io.Writer, list []manager.Info) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tSEATML STATE\tSINCE\tREASON\tFILE")
	for _, i := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", i.Name, i.State, orDash(i.SEATMLState), i.Since.Local().Format(time.TimeOnly), orDash(i.Reason), i.File)
	}
	tw.Flush()
}

// printAdaptors shows each open adaptor's connections and what it refused
// (docs/guarantees.md explains each column).
func printAdaptors(w io.Writer, list []interpreter.AdaptorInfo) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ADAPTOR\tTYPE\tADDRESS\tOPEN\tACCEPTED\tREFUSED\tTOO LONG\tPARTIAL\tREPAIRED\tINVALID\tSLOW\tMQTT")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", a.Name, a.Type, orDash(a.Addr),
			a.Open, a.Accepted, a.Refused, a.LineTooLong, a.PartialLine, a.Repaired, a.InvalidFrame, a.SlowPeer, mqttCounts(a.Stats))
	}
	tw.Flush()
}

// mqttCounts shows the MQTT adaptor's own counts that are not zero.
func mqttCounts(s adaptors.Stats) string {
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
	return orDash(strings.Join(parts, " "))
}

// orDash shows an empty column as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
