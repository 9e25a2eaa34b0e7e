package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/seatml/seat/interpreter/seattest"
)

// testCmd is seat test [-v] [-run REGEXP] [PATH...]: transcripts run
// against their behaviors on a virtual clock (package
// interpreter/seattest). Exit status 0 when all pass, 1 when one fails, 2
// on bad input.
func testCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("test", stderr)
	verbose := fs.Bool("v", false, "Print every step as it runs, and every message the behavior sends.")
	runRe := fs.String("run", "", "Run only the transcripts whose path matches this regular expression.")
	allowShell := fs.Bool("allow-shell", false, "Allow <shell> actions in the behaviors under test.")
	from := fs.String("from", "", "Print the recording FILE.jsonl (seat run --record) as a transcript, instead of running transcripts.")
	name := fs.String("name", "", "With --from: the behavior to take, when the recording holds several.")
	paths, err := parseFlags(fs, args, stdout)
	if err != nil {
		return flagExit(err)
	}
	if *from != "" {
		if len(paths) > 0 {
			fmt.Fprintln(stderr, "seat test: --from takes no other files")
			return exitStatus(2)
		}
		return fromRecording(*from, *name, stdout, stderr)
	}
	var sel *regexp.Regexp
	if *runRe != "" {
		if sel, err = regexp.Compile(*runRe); err != nil {
			fmt.Fprintf(stderr, "seat test: -run: %v\n", err)
			return exitStatus(2)
		}
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	files, err := transcripts(paths)
	if err != nil {
		fmt.Fprintf(stderr, "seat test: %v\n", err)
		return exitStatus(2)
	}
	// Ctrl-C or SIGTERM ends the transcript under way (its step fails as
	// interrupted) and skips the rest.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := seattest.Options{AllowShell: *allowShell, Context: ctx}
	if *verbose {
		opts.Verbose = stdout
	}
	status, ran := 0, 0
	for _, f := range files {
		if sel != nil && !sel.MatchString(f) {
			continue
		}
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "seat test: interrupted; %s and the rest not run\n", f)
			status = 1
			break
		}
		ran++
		if *verbose {
			fmt.Fprintf(stdout, "=== RUN   %s\n", f)
		}
		res, err := seattest.RunFile(f, opts)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 2
			continue
		}
		res.Report(stdout)
		if res.Failure != nil && status == 0 {
			status = 1
		}
	}
	if ran == 0 {
		fmt.Fprintf(stderr, "seat test: no %s files in %s\n", seattest.Ext, strings.Join(paths, " "))
		return exitStatus(2)
	}
	if status != 0 {
		return exitStatus(status)
	}
	return nil
}

// transcripts lists the files named, and the transcripts under the
// directories named, in order. As with go test, directories named testdata
// and hidden ones are skipped unless named.
func transcripts(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, seattest.Ext) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err // a PathError: it names the path
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

const testSteps = `Steps, one per line (# starts a comment; a first line "behavior: FILE" names the behavior):
  > TEXT          input from the behavior's first adaptor
  NAME> TEXT      input from the adaptor NAME
  < TEXT          the next message, to any adaptor, is TEXT
  NAME< TEXT      the next message is TEXT, sent to NAME
  <~ REGEXP       the next message matches REGEXP
  = STATE         the current state is STATE (active at any level)
  == A, B, C      the active states are exactly A, B and C, in any order
  +10s, +250ms    advance the virtual clock; due timers fire
  @connect NAME [PEER], @disconnect NAME [PEER]
                  a peer connects to or leaves the adaptor NAME
  @event NAME [JSON]
                  an SCXML document gets the external event NAME, with
                  JSON as its _event.data
  gui:ID> TEXT    submit an input of the page; gui:LABEL> presses a button
  @set NAME JSON  the Lua variable NAME (or name.field) is given the value
  memory> KEY=VALUE
                  set a memory key or press a simulated sensor
  ...             skip the messages not yet expected; at the end, allow more`
