package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
					if _, same, ok := strings.Cut(l, "\t"); ok { // a one-letter flag: on its line
						text = strings.TrimSpace(same)
					}
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

// TestSetOverridesAPortAndAddressInUseSaysHow: a taken port names the
// adaptor, the address and --set; --set moves the port without editing
// the file; a --set naming no adaptor is refused with a suggestion.
func TestSetOverridesAPortAndAddressInUseSaysHow(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, port, _ := net.SplitHostPort(taken.Addr().String())
	file := filepath.Join(t.TempDir(), "chat.seatml")
	os.WriteFile(file, []byte(`<seatml><general name="chat"><adaptor name="chat" type="socket" role="server" port="`+port+`"/></general>
<state name="s"><rule><key>ping</key><script>seat.reply("pong")</script></rule></state></seatml>`), 0o644)

	_, stderr, code := runSeat("run", file)
	want := `seat run: start "chat": ` + file + `:1:30: adaptor "chat": 127.0.0.1:` + port + ` is already in use (another seat, or another program, listens there); free it, or choose another port with --set chat.port=PORT`
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("port in use: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runSeat("check", file, "--set", "chta.port=0"); code != 1 || !strings.Contains(stderr, `--set chta.port=0: no behavior has an adaptor "chta"; did you mean "chat"?`) {
		t.Errorf("unknown adaptor: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runSeat("check", file, "--set", "chat.port=99999"); code != 1 || !strings.Contains(stderr, `attribute "port" of <adaptor>: "99999" is not a port number`) {
		t.Errorf("a bad value is checked like one in the file: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runSeat("check", file, "--set", "chat"); code != 2 || !strings.Contains(stderr, "want ADAPTOR.ATTRIBUTE=VALUE") {
		t.Errorf("malformed --set: exit %d\n%s", code, stderr)
	}
	// With --set the same file runs on a free port and answers there.
	free := freePort(t)
	_, freePortNum, _ := net.SplitHostPort(free)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"run", file, "--set", "chat.port=" + freePortNum}, strings.NewReader(""), &bytes.Buffer{}, &syncBuffer{})
	}()
	var c net.Conn
	waitFor(t, func() bool { c, err = net.Dial("tcp", free); return err == nil })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("ping\n"))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "pong\n" {
		t.Errorf("on the --set port: %q (%v)", line, err)
	}
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

// TestMisspellingsGetSuggestions: a misspelt command or flag gets a
// suggestion, and seat ctl help prints ctl's commands (issue 33: seat
// chek said only "unknown command", seat run --recrod only "flag
// provided but not defined", and seat ctl help "unknown command").
func TestMisspellingsGetSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string // in standard error, or standard output for code 0
	}{
		{[]string{"chek", "x.seatml"}, 2, `seat: unknown command "chek"; did you mean "check"?`},
		{[]string{"run", "--recrod", "x.jsonl", "y.seatml"}, 2, `Did you mean --record?`},
		{[]string{"check", "-scirpts", "d", "x.seatml"}, 2, `Did you mean --scripts?`},
		{[]string{"ctl", "help"}, 0, "Commands:"},
	} {
		stdout, stderr, code := runSeat(c.args...)
		got := stderr
		if c.code == 0 {
			got = stdout
		}
		if code != c.code || !strings.Contains(got, c.out) {
			t.Errorf("seat %s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stdout, stderr, c.code, c.out)
		}
	}
}
