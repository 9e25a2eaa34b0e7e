package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDirectory: seat check DIR checks every .seatml file under DIR,
// as seat test finds transcripts: hidden directories and testdata are
// skipped unless named, other files ignored. Each file is reported as
// when named alone; exit 1 if any has errors; a directory with no behavior
// file is an error naming it (issue 21 #13: seat check examples said "is a
// directory"). On the real binary.
func TestCheckDirectory(t *testing.T) {
	// Every shipped example passes, found under examples/ and examples/fleet/.
	if stdout, stderr, code := seatProcess(t, "", "check", "../../examples"); code != 0 || stdout != "" || stderr != "" {
		t.Errorf("seat check ../../examples: exit %d\n%s%s", code, stdout, stderr)
	}
	// ... and a mistake planted among them would be found: the walk reaches them all.
	examples := filepath.Join(t.TempDir(), "examples")
	if err := os.CopyFS(examples, os.DirFS("../../examples")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"greeter.seatml", "fleet/robot.seatml"} {
		path := filepath.Join(examples, f)
		data, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(data), "</seatml>", "<bogus/></seatml>", 1)), 0o644)
	}
	_, stderr, code := seatProcess(t, "", "check", examples)
	if code != 1 || strings.Count(stderr, "<bogus>") != 2 ||
		!strings.Contains(stderr, filepath.Join(examples, "greeter.seatml")+":") || !strings.Contains(stderr, filepath.Join(examples, "fleet", "robot.seatml")+":") {
		t.Errorf("two bad files among the examples: exit %d\n%s", code, stderr)
	}

	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const bad = "<seatml>\n<general name=\"受付\"/>\n<state name=\"受付\">\n  <rule><key>こんにちは</key><statetransition>待機</statetransition></rule>\n</state>\n</seatml>\n"
	write("good.seatml", `<seatml><general name="ok"><adaptor name="c" type="stdio"/></general><state name="s"><rule><key>hi</key><message sendto="c">hello</message></rule></state></seatml>`)
	write("受付/壊れた.seatml", bad)
	write(".hidden/bad.seatml", bad)  // skipped, as go and seat test skip them
	write("testdata/bad.seatml", bad) // skipped unless named
	write("notes.txt", "not a behavior")
	write("devices.xml", "<devices/>") // a device file is no behavior file

	// Run from dir, so that paths are printed as found under ".".
	_, stderr, code = seatProcess(t, dir, "check", ".")
	// Column 42 counts characters: 待 is the 42nd of its line.
	want := filepath.Join("受付", "壊れた.seatml") + `:4:42: statetransition target "待機" is not a declared state (the states: 受付)` + "\n"
	if code != 1 || stderr != want {
		t.Errorf("seat check .: exit %d\n%s\nwant exit 1\n%s", code, stderr, want)
	}
	// Named, testdata is checked; a file and a directory mix.
	_, stderr, code = seatProcess(t, dir, "check", "testdata", "good.seatml")
	if want := filepath.Join("testdata", "bad.seatml") + ":4:42:"; code != 1 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("seat check testdata good.seatml: exit %d\n%s", code, stderr)
	}
	// A directory with no behavior file is an error naming it; the other paths are still checked.
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	_, stderr, code = seatProcess(t, dir, "check", "empty", "受付")
	want = "empty: no behavior file (*.seatml or *.scxml) in this directory or under it\n" +
		filepath.Join("受付", "壊れた.seatml") + `:4:42: statetransition target "待機" is not a declared state (the states: 受付)` + "\n"
	if code != 1 || stderr != want {
		t.Errorf("seat check empty 受付: exit %d\n%s\nwant\n%s", code, stderr, want)
	}
	if _, stderr, code := seatProcess(t, dir, "check", "empty"); code != 1 || stderr != "empty: no behavior file (*.seatml or *.scxml) in this directory or under it\n" {
		t.Errorf("seat check empty: exit %d\n%s", code, stderr)
	}
}
