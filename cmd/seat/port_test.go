package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPortGolden runs seat port on each file of testdata/port and compares
// what it prints (NAME.ported), what it lists and its exit status
// (NAME.notes) with the golden files (go test ./cmd/seat -update rewrites
// them). Every ported file passes seat check.
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
			// The result checks clean (warnings aside), beside the original.
			ported := filepath.Join(t.TempDir(), name+".seatml")
			os.WriteFile(ported, []byte(stdout), 0o644)
			if _, stderr, code := runSeat("check", ported); code != 0 {
				t.Errorf("seat check of the ported %s: exit %d\n%s", name, code, stderr)
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
