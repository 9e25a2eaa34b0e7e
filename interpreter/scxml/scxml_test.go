package scxml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runText runs a document given as text on a fresh system's virtual
// clock and returns the session and the errors it logged.
func runText(t *testing.T, text string, setup func(*System)) (*Session, []string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "doc.scxml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, diags := Load(file)
	if doc == nil {
		t.Fatalf("load: %v", diags.Err())
	}
	sys := NewSystem()
	var errs []string
	sys.Log = func(s *Session, label, text string) {
		if label == "error" {
			errs = append(errs, text)
		}
	}
	if setup != nil {
		setup(sys)
	}
	s := sys.Start(doc)
	sys.Run(s, 10*time.Second)
	return s, errs
}

// TestRunawayScriptStops: a script that never ends is stopped at the
// script time limit and raises error.execution; the document goes on.
func TestRunawayScriptStops(t *testing.T) {
	s, errs := runText(t, `<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua">
  <state id="s">
    <onentry><script>while true do end</script></onentry>
    <transition event="error.execution" target="pass"/>
  </state>
  <final id="pass"/>
</scxml>`, func(sys *System) { sys.ScriptTimeout = 50 * time.Millisecond })
	if s.Final != "pass" || len(errs) != 1 || !strings.Contains(errs[0], "time limit of 50ms") {
		t.Errorf("final %q, errors %q", s.Final, errs)
	}
}
