package seattest

import (
	"fmt"
	"io"
	"time"
)

// Report writes a result as go test does: one "ok" line, or the failing
// step with what was expected, what came, the state and the conversation
// before it, then a "FAIL" line.
func (res *Result) Report(w io.Writer) {
	took := res.Elapsed.Round(100 * time.Microsecond)
	if res.Failure == nil {
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
	if len(f.Before) > 0 {
		fmt.Fprintf(w, "        before:\n")
		for _, l := range f.Before {
			fmt.Fprintf(w, "            %s\n", l)
		}
	}
	if len(res.Log) > 0 {
		fmt.Fprintf(w, "        the behavior logged:\n")
		for _, l := range res.Log {
			fmt.Fprintf(w, "            %s\n", l)
		}
	}
	fmt.Fprintf(w, "FAIL %s  %d steps  %v\n", res.File, res.Steps, took)
}
