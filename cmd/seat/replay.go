package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/manager"
	"github.com/seatml/seat/interpreter/record"
	"github.com/seatml/seat/interpreter/replay"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/seattest"
)

// replayCmd is seat replay FILE.jsonl [BEHAVIOR]: a recording re-run on a
// virtual clock (package interpreter/replay). Exit status 0 when the
// behavior sends what was recorded, 1 at the first divergence, 2 on bad
// input.
func replayCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	name := fs.String("name", "", "The behavior to replay, when the recording holds several.")
	allowShell := fs.Bool("allow-shell", false, "Allow <shell> actions in the behavior.")
	until := fs.String("until", "", "Stop after step `N` of the replay (as seat test --from numbers its steps, from 1), or at the last step at or before a recorded time (12.5s), and show what the debugger shows there: states, queue, timers, Lua variables.")
	control := fs.String("control", "", "With --until: hand the replayed behavior over to the debugger at that step, served on this `ADDR`ess (a port alone listens on 127.0.0.1) for seat ctl --control ADDR show, step, set, send, break and continue; the replay goes on when told to, and ends with its report.")
	files, err := parseFiles(fs, args, stdout, stderr)
	if files == nil {
		return err
	}
	if len(files) > 2 {
		fmt.Fprintln(stderr, "seat replay: want a recording and, optionally, a behavior file")
		return exitStatus(2)
	}
	if *control != "" && *until == "" {
		fmt.Fprintln(stderr, "seat replay: --control hands the behavior over at a step: give --until N too")
		return exitStatus(2)
	}
	opts := replay.Options{Name: *name, AllowShell: *allowShell}
	if len(files) == 2 {
		opts.Behavior = files[1]
	}
	var stop *seattest.Frame
	if *until != "" {
		stopAt, err := untilFrame(*until)
		if err != nil {
			fmt.Fprintf(stderr, "seat replay: --until %s: %v\n", *until, err)
			return exitStatus(2)
		}
		if *control == "" {
			opts.Frame = func(f seattest.Frame) bool {
				if !stopAt(f) {
					return true
				}
				stop = &f
				return false
			}
		} else {
			stopServing, err := handOver(&opts, *control, stopAt, stdout)
			if err != nil {
				fmt.Fprintf(stderr, "seat replay: --control %s: %v\n", *control, err)
				return exitStatus(2)
			}
			defer stopServing() // after the answer to the last seat ctl
		}
	}
	res, err := replay.Run(files[0], opts)
	if err != nil {
		fmt.Fprintf(stderr, "seat replay: %v\n", err)
		return exitStatus(2)
	}
	if res.Warning != "" {
		fmt.Fprintf(stderr, "seat replay: warning: %s\n", res.Warning)
	}
	if *until != "" && *control == "" && !res.Diverged() {
		if stop == nil {
			fmt.Fprintf(stderr, "seat replay: --until %s: the replay has %d steps (%s)\n", *until, len(res.Transcript.Steps), seattest.Summary(res.Transcript))
			return exitStatus(2)
		}
		printFrame(stdout, res.Behavior, *stop)
		return nil
	}
	res.Report(stdout)
	if res.Diverged() {
		return exitStatus(1)
	}
	return nil
}

// handOver makes a replay stop at the step stopAt picks and hand the
// behavior over to its debugger, served on addr: the replay waits while
// it is paused (its steps have no time limit then) and goes on when seat
// ctl says continue or step.
func handOver(opts *replay.Options, addr string, stopAt func(seattest.Frame) bool, stdout io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", manager.ControlAddr(addr))
	if err != nil {
		return nil, err
	}
	d := interpreter.NewDebugger(nil)
	var prog atomic.Pointer[seatml.Program]
	opts.Debugger, opts.StepTimeout = d, 365*24*time.Hour
	opts.Loaded = func(p *seatml.Program) { prog.Store(p) }
	find := func(name, session string) (*interpreter.Debugger, error) {
		p := prog.Load()
		switch {
		case p == nil:
			return nil, fmt.Errorf("%w: %q: the replay has not loaded its behavior yet", manager.ErrUnknown, name)
		case name != p.Name || session != "":
			return nil, fmt.Errorf("%w: %q (the replay's behavior is %q)", manager.ErrUnknown, name, p.Name)
		}
		return d, nil
	}
	srv := &http.Server{Handler: manager.DebugAPI(find), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	opts.Frame = func(f seattest.Frame) bool {
		if stopAt(f) {
			p := prog.Load()
			printFrame(stdout, p.File, f)
			fmt.Fprintf(stdout, "handed over to the debugger: seat ctl --control %s show|step|set|send|break|continue %s\n", ln.Addr(), p.Name)
			if err := d.PauseFor(fmt.Sprintf("seat replay --until: step %d", f.Step)); err != nil {
				fmt.Fprintf(stdout, "the debugger could not pause it: %v\n", err)
			}
		}
		return true
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// untilFrame reads --until: a step's number, or a recorded time. It
// returns whether a frame is the one to stop at.
func untilFrame(v string) (func(seattest.Frame) bool, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return nil, errors.New("a step's number is 0 (the start) or more")
		}
		return func(f seattest.Frame) bool { return f.Step == n }, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return nil, errors.New("want a step's number (12) or a recorded time (12.5s)")
	}
	// The last step recorded at or before d: the next one is later (a
	// step the recording does not time, a state check, goes with the
	// one before it).
	return func(f seattest.Frame) bool {
		if f.Recorded != nil && f.Recorded.T > d {
			return false
		}
		return f.Next == nil || f.Next.Recorded != nil && f.Next.Recorded.T > d
	}, nil
}

// printFrame shows where a replay stopped and what the debugger shows
// there.
func printFrame(w io.Writer, behavior string, f seattest.Frame) {
	where := fmt.Sprintf("step %d of %d", f.Step, f.Steps)
	if f.Recorded != nil {
		where += fmt.Sprintf(" (recording line %d, %v)", f.Recorded.Line, f.Recorded.T.Round(time.Millisecond))
	}
	s := f.Show
	s.Paused, s.Why, s.At = true, "seat replay --until: "+where, f.Line
	printDebug(w, behavior, s)
	for i, said := range f.Said {
		label := ""
		if i == 0 {
			label = "said"
		}
		fmt.Fprintf(w, "%-12s%s\n", label, said)
	}
}

// fromRecording is seat test --from FILE.jsonl: the recording printed as
// a transcript.
func fromRecording(file, name string, stdout, stderr io.Writer) error {
	lines, warning, err := record.ReadFile(file)
	if warning != "" {
		fmt.Fprintf(stderr, "seat test: warning: %s\n", warning)
	}
	if err == nil {
		var t *seattest.Transcript
		if t, err = seattest.FromRecording(file, lines, name); err == nil {
			header := []string{"made by seat test --from " + file + " (" + seattest.Summary(t) + ")"}
			if t.SkippedDevices > 0 {
				header = append(header, fmt.Sprintf("%d device events left out: the simulated robot makes its own", t.SkippedDevices))
			}
			header = append(header, "the behavior file is as recorded, relative to where seat ran; edit the line below if this file lives elsewhere")
			fmt.Fprint(stdout, seattest.Format(t, header...))
			return nil
		}
	}
	var bad *seattest.BadInputError
	if errors.As(err, &bad) {
		fmt.Fprintln(stderr, bad)
	} else {
		fmt.Fprintf(stderr, "seat test: %v\n", err)
	}
	return exitStatus(2)
}
