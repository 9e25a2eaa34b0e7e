package main

import (
	"strings"
	"testing"
)

// TestHelpForEveryCommand: seat help CMD, seat CMD -h and seat CMD --help
// print that command's usage, with a sentence per flag, on standard output,
// and exit 0 (issue 12).
func TestHelpForEveryCommand(t *testing.T) {
	for _, c := range commands {
		words := strings.Fields(c.name)
		for _, args := range [][]string{
			append([]string{"help"}, words...),
			append(append([]string{}, words...), "-h"),
			append(append([]string{}, words...), "--help"),
		} {
			stdout, stderr, code := runSeat(args...)
			if code != 0 || stderr != "" {
				t.Errorf("seat %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
				continue
			}
			if !strings.HasPrefix(stdout, "Usage: seat "+c.name) || !strings.Contains(stdout, c.summary) {
				t.Errorf("seat %s printed:\n%s", strings.Join(args, " "), stdout)
			}
			// Every flag's text is a sentence.
			lines := strings.Split(stdout, "\n")
			for i, l := range lines {
				if strings.HasPrefix(l, "  -") && i+1 < len(lines) {
					text := strings.TrimSpace(lines[i+1])
					if text == "" || !strings.Contains(text, ".") {
						t.Errorf("seat %s: flag %s has no sentence: %q", c.name, strings.TrimSpace(l), text)
					}
				}
			}
		}
	}
	if stdout, _, code := runSeat("help"); code != 0 || !strings.Contains(stdout, "seat help [COMMAND]") {
		t.Errorf("seat help: exit %d\n%s", code, stdout)
	}
	if _, stderr, code := runSeat("help", "fly"); code != 2 || !strings.Contains(stderr, `unknown command "fly"`) {
		t.Errorf("seat help fly: exit %d\n%s", code, stderr)
	}
}

// TestFlagsAfterFiles: flags are accepted before and after file names, as
// Go's tools accept them; "--" ends the flags; a bad flag exits 2 and
// points at seat help.
func TestFlagsAfterFiles(t *testing.T) {
	const shell = "../../testdata/check/shell-disabled.seatml"
	_, stderr, code := runSeat("check", shell)
	if code != 1 {
		t.Fatalf("check without --allow-shell: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"check", "--allow-shell", shell},
		{"check", shell, "--allow-shell"},
		{"check", shell, "-allow-shell=true"},
	} {
		if _, stderr, code := runSeat(args...); code != 0 {
			t.Errorf("seat %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	// After "--", a name that looks like a flag is a file.
	if _, stderr, code := runSeat("check", "--", "--allow-shell"); code != 1 || !strings.Contains(stderr, "--allow-shell") {
		t.Errorf("seat check -- --allow-shell: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runSeat("run", "greeter.seatml", "--log-levle=debug")
	if code != 2 || !strings.Contains(stderr, "flag provided but not defined: -log-levle") || !strings.Contains(stderr, `Run "seat help run" for usage.`) {
		t.Errorf("a misspelled flag after a file: exit %d\n%s", code, stderr)
	}
}
