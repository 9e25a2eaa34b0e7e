package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/seatml/seat/interpreter/record"
	"github.com/seatml/seat/interpreter/replay"
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
	files, err := parseFiles(fs, args, stdout, stderr)
	if files == nil {
		return err
	}
	if len(files) > 2 {
		fmt.Fprintln(stderr, "seat replay: want a recording and, optionally, a behavior file")
		return exitStatus(2)
	}
	opts := replay.Options{Name: *name, AllowShell: *allowShell}
	if len(files) == 2 {
		opts.Behavior = files[1]
	}
	res, err := replay.Run(files[0], opts)
	if err != nil {
		fmt.Fprintf(stderr, "seat replay: %v\n", err)
		return exitStatus(2)
	}
	if res.Warning != "" {
		fmt.Fprintf(stderr, "seat replay: warning: %s\n", res.Warning)
	}
	res.Report(stdout)
	if res.Diverged() {
		return exitStatus(1)
	}
	return nil
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
