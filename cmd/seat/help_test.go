package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seatProcess runs seat as its own process (this test binary runs main
// when SEAT_TEST_MAIN is set) in dir, the package directory when dir is
// "", and returns what it printed and its exit status.
func seatProcess(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return seatProcessIn(t, dir, "", args...)
}

// seatProcessIn is seatProcess with stdin as the process's input.
func seatProcessIn(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	exe, err := os.Executable() // absolute: dir may be elsewhere
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("seat %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// helpPaths reads the commands seat help lists ("  seat motion play
// SCRIPT    play a motion script..." gives motion play), with the groups of those that have
// subcommands (motion), in the order listed.
func helpPaths(usage string) [][]string {
	word := regexp.MustCompile(`^[a-z]+$`)
	var paths [][]string
	add := func(p []string) {
		if !slices.ContainsFunc(paths, func(q []string) bool { return slices.Equal(p, q) }) {
			paths = append(paths, p)
		}
	}
	for _, line := range strings.Split(usage, "\n") {
		rest, ok := strings.CutPrefix(line, "  seat ")
		if !ok {
			continue
		}
		rest, _, _ = strings.Cut(rest, "  ") // the sentence follows a wide gap
		var p []string
		for _, w := range strings.Fields(rest) {
			if !word.MatchString(w) {
				break
			}
			p = append(p, w)
		}
		if len(p) > 1 {
			add(p[:1])
		}
		add(p)
	}
	return paths
}

// realFlags returns the names of the flags seat PATH defines: the flag set
// the command itself builds and parses (read through flagsDefined while it
// runs with -h), not what its usage says. A command that parses no flags
// (a group such as motion) defines none.
func realFlags(t *testing.T, path []string) []string {
	t.Helper()
	name := strings.Join(path, " ")
	var names []string
	seen := false
	hook := func(fs *flag.FlagSet) {
		if fs.Name() == name {
			seen = true
			names = names[:0]
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		}
	}
	flagsDefined.Store(&hook)
	defer flagsDefined.Store(nil)
	err := run(context.Background(), append(slices.Clone(path), "-h"), strings.NewReader(""), io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("seat %s -h: %v", name, err)
	}
	if !seen && len(path) == 1 && slices.ContainsFunc(commands, func(c command) bool { return c.name == name }) {
		t.Fatalf("seat %s -h parsed no flag set named %q", name, name)
	}
	slices.Sort(names)
	return names
}

// shownFlags returns the flags a usage text lists ("  -scripts string").
func shownFlags(usage string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  -([^\s=]+)`).FindAllStringSubmatch(usage, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return names
}

// TestHelpIsTheCommandsOwnUsage: every command and group of commands that
// seat help lists (read from its output, not from a list kept here): seat
// help X [Y] exits 0 and prints exactly what seat X [Y] -h, --help and
// -help print, on the real binary, and the flags it lists are the ones the
// command's own flag set defines, every one and no other (issue 21 #12:
// seat help motion was an unknown command, seat help motion play listed
// no flags).
func TestHelpIsTheCommandsOwnUsage(t *testing.T) {
	usage, stderr, code := seatProcess(t, "", "help")
	if code != 0 || stderr != "" {
		t.Fatalf("seat help: exit %d\n%s", code, stderr)
	}
	paths := helpPaths(usage)
	for _, want := range [][]string{{"check"}, {"run"}, {"motion"}, {"motion", "play"}, {"version"}, {"help"}} {
		if !slices.ContainsFunc(paths, func(p []string) bool { return slices.Equal(p, want) }) {
			t.Fatalf("seat help lists %v, without %v: is the parsing right?\n%s", paths, want, usage)
		}
	}
	for _, path := range paths {
		name := strings.Join(path, " ")
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			help, stderr, code := seatProcess(t, "", append([]string{"help"}, path...)...)
			if code != 0 || stderr != "" || help == "" {
				t.Fatalf("seat help %s: exit %d, stderr %q, stdout %q", name, code, stderr, help)
			}
			for _, h := range []string{"-h", "--help", "-help"} {
				out, stderr, code := seatProcess(t, "", append(slices.Clone(path), h)...)
				if code != 0 || stderr != "" {
					t.Errorf("seat %s %s: exit %d, stderr %q", name, h, code, stderr)
				}
				if diff := cmp.Diff(help, out); diff != "" {
					t.Errorf("seat help %s and seat %s %s differ (-help +%s):\n%s", name, name, h, h, diff)
				}
			}
			if diff := cmp.Diff(realFlags(t, path), shownFlags(help)); diff != "" {
				t.Errorf("seat help %s lists other flags than the command defines (-defined +listed):\n%s\n%s", name, diff, help)
			}
		})
	}
	// A misspelled command is refused with a suggestion, subcommands too.
	for args, want := range map[string]string{
		"help moton":      `seat help: unknown command "moton"; did you mean "motion"?`,
		"help motion ply": `seat help: unknown command "motion ply"; did you mean "motion play"?`,
	} {
		if _, stderr, code := seatProcess(t, "", strings.Fields(args)...); code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("seat %s: exit %d\n%s", args, code, stderr)
		}
	}
}
