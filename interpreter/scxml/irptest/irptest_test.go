package irptest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeT records how Find ended a test.
type fakeT struct{ fatal, skip string }

func (f *fakeT) Helper()                           {}
func (f *fakeT) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }
func (f *fakeT) Skipf(format string, args ...any)  { f.skip = fmt.Sprintf(format, args...) }

// TestMissingSuite: a suite missing where SEAT_SCXML_IRP names it fails
// the test, as under CI=true or SEAT_REQUIRE_TOOLS=1; else the test is
// skipped and Note says so on its own line (before, a SEAT_SCXML_IRP
// naming a missing directory skipped the tests without a word unless CI
// was set too). A suite that is there is found, and no note is written.
func TestMissingSuite(t *testing.T) {
	for _, v := range []string{"CI", "SEAT_REQUIRE_TOOLS"} {
		t.Setenv(v, "")
	}
	gone := filepath.Join(t.TempDir(), "スイート")
	t.Setenv(Env, gone)
	var f fakeT
	if dir := Find(&f); dir != "" || f.skip != "" || !strings.Contains(f.fatal, "missing") || !strings.Contains(f.fatal, "required (SEAT_SCXML_IRP names it)") || !strings.Contains(f.fatal, gone) {
		t.Errorf("SEAT_SCXML_IRP naming a missing directory: dir %q, fatal %q, skip %q", dir, f.fatal, f.skip)
	}
	var note strings.Builder
	Note(&note, "TestIRP")
	if note.Len() != 0 {
		t.Errorf("a note where the test fails anyway: %s", note.String())
	}

	// Unset, away from any repository: skipped, and the note says so.
	t.Setenv(Env, "")
	t.Chdir(t.TempDir())
	f = fakeT{}
	if dir := Find(&f); dir != "" || f.fatal != "" || !strings.Contains(f.skip, "not here") {
		t.Errorf("no suite: dir %q, fatal %q, skip %q", dir, f.fatal, f.skip)
	}
	Note(&note, "TestIRP")
	if got := note.String(); !strings.HasPrefix(got, "NOTE: TestIRP skipped: the W3C SCXML IRP tests are not here (") || !strings.HasSuffix(got, "set SEAT_SCXML_IRP to their directory to run them (with it set, a missing suite fails)\n") {
		t.Errorf("note: %q", got)
	}
	t.Setenv("CI", "true")
	f = fakeT{}
	if Find(&f); !strings.Contains(f.fatal, "required (CI=true)") {
		t.Errorf("under CI=true: fatal %q, skip %q", f.fatal, f.skip)
	}

	// A suite that is there.
	here := t.TempDir()
	os.WriteFile(filepath.Join(here, "tests.tsv"), []byte("file\tid\n"), 0o644)
	os.Mkdir(filepath.Join(here, "lua"), 0o755)
	t.Setenv(Env, here)
	f = fakeT{}
	note.Reset()
	if dir := Find(&f); dir != here || f.fatal != "" || f.skip != "" {
		t.Errorf("a suite there: dir %q, fatal %q, skip %q", dir, f.fatal, f.skip)
	}
	if Note(&note, "TestIRP"); note.Len() != 0 {
		t.Errorf("a note with the suite there: %s", note.String())
	}
}
