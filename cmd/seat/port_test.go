package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPortGolden runs seat port on each file of testdata/port and compares
// what it prints (NAME.ported), what it lists and its exit status
// (NAME.notes) with the golden files (go test ./cmd/seat -update rewrites
// them). Every ported file passes seat check, and seat port run on it
// changes nothing: it reads the Lua it wrote as Lua. A file named broken-*
// has what seat port cannot mend: its result fails seat check, seat port
// exits 1, and each error seat check reports in it comes right after a
// "seat port: seat check fails" comment.
func TestPortGolden(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/port/*.seatml")
	if len(files) < 3 {
		t.Fatalf("%d files in testdata/port", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".seatml")
		t.Run(name, func(t *testing.T) {
			dir := filepath.Dir(file)
			stdout, stderr, code := runSeat("port", file)
			notes := strings.ReplaceAll(stderr, dir+string(filepath.Separator), "") + fmt.Sprintf("exit %d\n", code)
			golden(t, strings.TrimSuffix(file, ".seatml")+".ported", stdout)
			golden(t, strings.TrimSuffix(file, ".seatml")+".notes", notes)
			// The result checks clean (warnings aside), in place of the
			// original: beside a copy of the files it includes.
			tmp := t.TempDir()
			if err := os.CopyFS(filepath.Join(tmp, "lib"), os.DirFS(filepath.Join(dir, "lib"))); err != nil {
				t.Fatal(err)
			}
			ported := filepath.Join(tmp, name+".seatml")
			os.WriteFile(ported, []byte(stdout), 0o644)
			_, checked, ccode := runSeat("check", ported)
			if broken := strings.HasPrefix(name, "broken-"); !broken && ccode != 0 {
				t.Errorf("seat check of the ported %s: exit %d\n%s", name, ccode, checked)
			} else if broken {
				if ccode != 1 || code != 1 {
					t.Errorf("seat port exit %d, seat check of its result exit %d; want 1 and 1", code, ccode)
				}
				lines := strings.Split(stdout, "\n")
				for _, l := range strings.Split(checked, "\n") {
					var line, col int
					if n, _ := fmt.Sscanf(strings.TrimPrefix(l, ported), ":%d:%d:", &line, &col); n != 2 || strings.Contains(l, ": warning: ") || !strings.HasPrefix(l, ported) {
						continue
					}
					if line < 2 || !strings.Contains(lines[line-2], "<!-- seat port: seat check fails") {
						t.Errorf("no seat port comment before the error %s", l)
					}
				}
			}
			if diff, stderr, _ := runSeat("port", "-d", ported); diff != "" {
				t.Errorf("seat port changes its own output:\n%s%s", diff, stderr)
			}
		})
	}
}

// TestPortWriteAndDiff: -d prints a diff and leaves the file; -w rewrites
// it, after which seat port has nothing left to change; bad input exits 2.
func TestPortWriteAndDiff(t *testing.T) {
	src, err := os.ReadFile("../../testdata/port/constructs.seatml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "c.seatml")
	os.WriteFile(file, src, 0o644)
	stdout, _, code := runSeat("port", "-d", file)
	if code != 0 || !strings.Contains(stdout, "-    <agent name=\"chat\"") || !strings.Contains(stdout, "+    <adaptor name=\"chat\"") {
		t.Fatalf("-d: exit %d\n%s", code, stdout)
	}
	if after, _ := os.ReadFile(file); string(after) != string(src) {
		t.Fatal("-d changed the file")
	}
	if _, stderr, code := runSeat("port", "-w", file); code != 0 {
		t.Fatalf("-w: exit %d\n%s", code, stderr)
	}
	if stdout, _, _ := runSeat("port", "-d", file); stdout != "" {
		t.Errorf("a ported file ports again with changes:\n%s", stdout)
	}
	bad := filepath.Join(t.TempDir(), "bad.seatml")
	os.WriteFile(bad, []byte("<seatml><general>"), 0o644)
	if _, stderr, code := runSeat("port", bad); code != 2 || !strings.Contains(stderr, "malformed XML") {
		t.Errorf("bad input: exit %d\n%s", code, stderr)
	}
}

// TestPortEquivalenceOnTheRealBinary: each Python body of
// testdata/port/equivalence, as the script of an eSEAT file, through the
// real binary: seat port, then seat run of what it wrote, prints what
// python3 prints, with exit status 0; a body marked "# hand: REASON" makes
// seat port list REASON and exit 1 instead (issue 32 #13: integers past
// 2^53, print of a call that returns nothing, max(1.0, 2) and a body that
// also parses as Lua printed otherwise, with exit status 0).
func TestPortEquivalenceOnTheRealBinary(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("SEAT_REQUIRE_TOOLS") != "" {
			t.Fatal("python3 is not installed and SEAT_REQUIRE_TOOLS is set (apt-get install python3)")
		}
		t.Skip("python3 is not installed")
	}
	bodies, _ := filepath.Glob("../../testdata/port/equivalence/*.py")
	if len(bodies) < 15 {
		t.Fatalf("%d bodies in testdata/port/equivalence", len(bodies))
	}
	for _, f := range bodies {
		name := strings.TrimSuffix(filepath.Base(f), ".py")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			body := string(src)
			dir := t.TempDir()
			file := filepath.Join(dir, name+".seatml")
			os.WriteFile(file, []byte(`<seatml><general name="equiv"><adaptor name="io" type="stdio"/></general>
<state name="s"><onentry><script><![CDATA[`+body+`]]></script><script>seat.exit()</script></onentry></state></seatml>
`), 0o644)
			ported, notes, code := runBinaryIO(t, "", "port", file)
			if first, _, _ := strings.Cut(body, "\n"); strings.HasPrefix(first, "# hand: ") {
				if want := strings.TrimPrefix(first, "# hand: "); code != 1 || !strings.Contains(notes, want) {
					t.Errorf("seat port: exit %d, want 1 and hand work %q:\n%s%s", code, want, notes, ported)
				}
				return
			}
			if code != 0 || notes != "" {
				t.Fatalf("seat port: exit %d\n%s%s", code, notes, ported)
			}
			cmd := exec.Command(py, "-")
			cmd.Stdin = strings.NewReader(body)
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("python3: %v", err)
			}
			os.WriteFile(file, []byte(ported), 0o644)
			_, log, code := runBinaryIO(t, "", "run", "--log-format", "json", file)
			var got strings.Builder
			for _, line := range strings.Split(log, "\n") {
				var e struct{ Level, Msg, From string }
				if json.Unmarshal([]byte(line), &e) != nil {
					continue
				}
				if e.From == "print" {
					got.WriteString(e.Msg + "\n")
				}
				if e.Level == "error" {
					t.Errorf("seat run logged an error: %s", line)
				}
			}
			if code != 0 || got.String() != string(want) {
				t.Errorf("seat run: exit %d; python3 printed:\n%s\nseat printed:\n%s\nthe port:\n%s", code, want, got.String(), ported)
			}
		})
	}
}
