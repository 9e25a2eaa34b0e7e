// Package replay re-runs a recording (seat run --record) against a
// behavior on a virtual clock and compares what it sends with what the
// recording says it sent: seat replay. The recording becomes a transcript
// (seattest.FromRecording) and runs as seat test would run it.
package replay

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/record"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/seattest"
)

// Options configure a replay.
type Options struct {
	// Behavior is the behavior file to replay against; the recorded one
	// if empty.
	Behavior string
	// Name picks a behavior of a recording that holds several.
	Name       string
	AllowShell bool
	// Frame, if set, is given the behavior after each step
	// (seattest.Options.Frame): the timeline, seat replay --until.
	Frame func(seattest.Frame) bool
	// Allowed, if set, says whether the behavior file may be run (the
	// monitor runs only the files of loaded behaviors).
	Allowed func(file string) bool
	// Debugger, if set, debugs the replayed behavior; StepTimeout bounds
	// a step in real time (seattest.Options), pauses included.
	Debugger    *interpreter.Debugger
	StepTimeout time.Duration
	// Loaded, if set, is told the behavior before it runs.
	Loaded func(*seatml.Program)
}

// Result is a replay's outcome.
type Result struct {
	Recording  string
	Behavior   string // the file replayed against
	Transcript *seattest.Transcript
	Run        *seattest.Result
	// Program is the behavior as loaded for the replay.
	Program *seatml.Program
	// Warning, if set, says the recording's last line was cut short: it
	// was left out, and what came after it was not expected.
	Warning string
}

// Diverged reports whether the behavior did not do what was recorded.
func (r *Result) Diverged() bool { return r.Run.Failure != nil }

// Run replays a recording file. An error is bad input: a recording that
// cannot be read or a behavior that does not load.
func Run(file string, opts Options) (*Result, error) {
	lines, warning, err := record.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return RunLines(file, lines, warning, opts)
}

// RunLines replays a recording read already (record.Read): file names
// it, warning is what reading it warned of.
func RunLines(file string, lines []record.Line, warning string, opts Options) (*Result, error) {
	t, err := seattest.FromRecording(file, lines, opts.Name)
	if err != nil {
		return nil, err
	}
	if warning != "" {
		// The behavior may have sent more than the cut recording kept.
		t.Steps = append(t.Steps, seattest.Step{Kind: seattest.Skip, Line: "..."})
	}
	beh := opts.Behavior
	if beh == "" {
		beh = findRecorded(file, t.Behavior)
	}
	if opts.Allowed != nil && !opts.Allowed(beh) {
		return nil, fmt.Errorf("%s: the recorded behavior %s is not a file of a loaded behavior", file, beh)
	}
	prog, diags := seatml.Load(beh, seatml.LoadOptions{AllowShell: opts.AllowShell})
	if prog == nil || diags.HasErrors() {
		return nil, &seattest.BadInputError{Diags: diags}
	}
	if opts.Loaded != nil {
		opts.Loaded(prog)
	}
	res, err := seattest.RunProgram(t, prog, seattest.Options{AllowShell: opts.AllowShell, Frame: opts.Frame, Debugger: opts.Debugger, StepTimeout: opts.StepTimeout})
	if err != nil {
		return nil, err
	}
	return &Result{Recording: file, Behavior: beh, Transcript: t, Run: res, Program: prog, Warning: warning}, nil
}

// findRecorded finds the recorded behavior file: as recorded (relative to
// where seat ran), else beside the recording.
func findRecorded(recording, behavior string) string {
	if _, err := os.Stat(behavior); err == nil || filepath.IsAbs(behavior) {
		return behavior
	}
	if alt := filepath.Join(filepath.Dir(recording), filepath.Base(behavior)); fileExists(alt) {
		return alt
	}
	return behavior
}

func fileExists(f string) bool {
	_, err := os.Stat(f)
	return err == nil
}

// Report writes the outcome: a line when the replay matches; else the
// first divergence: when, what was recorded and by which rule, what came
// instead and from which rule, the state and the conversation before.
func (r *Result) Report(w io.Writer) {
	if !r.Diverged() {
		fmt.Fprintf(w, "ok   %s against %s: %s match (%v)\n", r.Recording, r.Behavior, seattest.Summary(r.Transcript),
			r.Run.Elapsed.Round(100*time.Microsecond))
		if n := r.Transcript.SkippedDevices; n > 0 {
			fmt.Fprintf(w, "     (%d device events of the recording were made again by the simulated robot, not replayed)\n", n)
		}
		return
	}
	f := r.Run.Failure
	at := f.At
	where := ""
	if rec := f.Step.Recorded; rec != nil {
		at = rec.T
		where = fmt.Sprintf(" (recording line %d)", rec.Line)
	}
	fmt.Fprintf(w, "--- DIVERGED: %s against %s at %v%s\n", r.Recording, r.Behavior, at.Round(time.Microsecond), where)
	fmt.Fprintf(w, "    %s\n", f.What)
	if f.Want != "" {
		rule := ""
		if rec := f.Step.Recorded; rec != nil && rec.Rule != "" {
			rule = "   (sent by the rule at " + rec.Rule + ")"
		}
		fmt.Fprintf(w, "    recorded: %s%s\n", f.Want, rule)
	}
	got := f.Got
	if got == "" {
		got = "(nothing)"
	}
	if f.GotRule != "" {
		got += "   (sent by the rule at " + f.GotRule + ")"
	}
	if f.Want != "" || f.Got != "" {
		fmt.Fprintf(w, "    replayed: %s\n", got)
	}
	fmt.Fprintf(w, "    state:    %s\n", f.State)
	seattest.WriteContext(w, "    ", f, r.Run.Log)
}
