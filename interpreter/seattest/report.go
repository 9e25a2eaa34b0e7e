package seattest

import (
	"fmt"
	"io"
	"time"
)

// WriteContext writes what led to a failure, at indent: the conversation
// before it and what the behavior logged. seat replay's report has it too.
func WriteContext(w io.Writer, indent string, f *Failure, log []string) {
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(w, "%s%s:\n", indent, title)
		for _, l := range lines {
			fmt.Fprintf(w, "%s    %s\n", indent, l)
		}
	}
	section("before", f.Before)
	section("the behavior logged", log)
}

// Report writes a result as go test does: one "ok" line, or the failing
// step with what was expected, what came, the state and the conversation
// before it, then a "FAIL" line. A pass during which the behavior logged
// warnings or errors (a Lua error that raised error.execution) says how
// many on its "ok" line and lists them.
func (res *Result) Report(w io.Writer) {
	took := res.Elapsed.Round(100 * time.Microsecond)
	if res.Failure == nil {
		if n := len(res.Log); n > 0 {
			fmt.Fprintf(w, "ok   %s  %d steps  %v  (%s)\n", res.File, res.Steps, took, plural(n, "warning"))
			WriteContext(w, "    ", &Failure{}, res.Log)
			return
		}
		fmt.Fprintf(w, "ok   %s  %d steps  %v\n", res.File, res.Steps, took)
		return
	}
	f := res.Failure
	fmt.Fprintf(w, "--- FAIL: %s (behavior %s)\n", res.File, res.Behavior)
	fmt.Fprintf(w, "    %s: %s\n", f.Step.At(), f.Step.Line)
	fmt.Fprintf(w, "        %s\n", f.What)
	if f.Want != "" {
		fmt.Fprintf(w, "        want:  %s\n", f.Want)
	}
	if f.Want != "" || f.Got != "" {
		got := f.Got
		if got == "" {
			got = "(nothing)"
		}
		fmt.Fprintf(w, "        got:   %s\n", got)
	}
	fmt.Fprintf(w, "        state: %s\n", f.State)
	WriteContext(w, "        ", f, res.Log)
	fmt.Fprintf(w, "FAIL %s  %d steps  %v\n", res.File, res.Steps, took)
}

// plural is "1 warning", "2 warnings".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
