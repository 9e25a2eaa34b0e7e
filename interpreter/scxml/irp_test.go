package scxml

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatml/seat/interpreter/scxml/irptest"
	"github.com/seatml/seat/interpreter/statechart"
)

var writeTable = flag.String("irp-table", "", "write the IRP pass table into this markdown file, between its markers")

// TestMain says, on standard error, that TestIRP will be skipped when the
// W3C SCXML IRP tests are missing and not required (irptest.Note): a
// skip is silent without -v.
func TestMain(m *testing.M) {
	flag.Parse()
	irptest.Note(os.Stderr, "interpreter/scxml TestIRP")
	os.Exit(m.Run())
}

// irpDir is where the W3C SCXML IRP tests (Lua datamodel) live
// (irptest.Find): $SEAT_SCXML_IRP, or ../shared/scxml-irp beside the
// repository. Missing, they fail the test when required ($SEAT_SCXML_IRP
// set, CI=true or SEAT_REQUIRE_TOOLS=1) and skip it elsewhere.
func irpDir(t *testing.T) string {
	t.Helper()
	return irptest.Find(t)
}

type irpTest struct {
	file, id, conformance, needs string
	manual                       bool
}

func irpTests(t *testing.T, dir string) []irpTest {
	f, err := os.Open(filepath.Join(dir, "tests.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var l []irpTest
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) < 4 || fs[0] == "file" {
			continue
		}
		tc := irpTest{file: fs[0], id: fs[1], conformance: fs[2], manual: fs[3] == "true"}
		if len(fs) > 4 {
			tc.needs = fs[4]
		}
		l = append(l, tc)
	}
	if len(l) == 0 {
		t.Fatal("tests.tsv lists no tests")
	}
	return l
}

// expectedFailures reads testdata/irp-expected-failures.txt: id -> why.
func expectedFailures(t *testing.T) map[string]string {
	b, err := os.ReadFile(filepath.Join("testdata", "irp-expected-failures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		id, why, _ := strings.Cut(line, " ")
		if strings.TrimSpace(why) == "" {
			t.Fatalf("irp-expected-failures.txt: %s has no reason", id)
		}
		m[id] = why
	}
	return m
}

// irpResult is how one test document ran.
type irpResult struct {
	final    string // the top-level final state reached
	rejected string // why the document was refused at load
	errors   []string
	wall     time.Duration
}

// runIRP runs a test document on a virtual clock, for at most 10 s of
// its time (delayed events fire without waiting).
func runIRP(path string, trace bool) irpResult {
	start := time.Now()
	doc, diags := Load(path)
	if doc == nil {
		return irpResult{rejected: diags.Error(), wall: time.Since(start)}
	}
	var r irpResult
	sys := NewSystem()
	sys.Log = func(s *Session, label, text string) {
		if label == "error" {
			r.errors = append(r.errors, text)
		}
		if trace {
			fmt.Printf("session %s: %s %s\n", s.ID, label, text)
		}
	}
	if trace {
		sys.Trace = func(s *Session, ev *statechart.Event) { fmt.Printf("session %s: event %s\n", s.ID, ev.Name) }
	}
	s := sys.Start(doc)
	if err := sys.Run(s, 10*time.Second); err != nil {
		r.errors = append(r.errors, err.Error())
	}
	r.final = s.Final
	r.wall = time.Since(start)
	return r
}

// TestIRP runs the W3C SCXML IRP tests: each mandatory and optional
// automatic test must end in its final state "pass", unless it is on the
// expected-failures list, and then it must still fail. Of the manual
// tests, 301 must be refused at load and 313 and 314 refused or passed
// (they pass when the illegal expression raises error.execution).
// SEAT_IRP_TRACE=ID prints one test's events and logs.
func TestIRP(t *testing.T) {
	dir := irpDir(t)
	expected := expectedFailures(t)
	tests := irpTests(t, dir)
	var mu sync.Mutex
	results := map[string]irpResult{}
	t.Run("tests", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.id, func(t *testing.T) {
				t.Parallel()
				if tc.manual && tc.id != "301" && tc.id != "313" && tc.id != "314" {
					t.Skipf("%s is a manual test: a person reads its log", tc.file)
				}
				done := make(chan irpResult, 1)
				go func() { done <- runIRP(filepath.Join(dir, "lua", tc.file), os.Getenv("SEAT_IRP_TRACE") == tc.id) }()
				var r irpResult
				select {
				case r = <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: still running after 10 s of real time", tc.file)
				}
				mu.Lock()
				results[tc.id] = r
				mu.Unlock()
				why := r.rejected
				if why == "" && r.final != "pass" {
					why = fmt.Sprintf("ended in %q", r.final)
					if r.final == "" {
						why = "reached no final state"
					}
					if len(r.errors) > 0 {
						why += "; errors: " + strings.Join(r.errors, "; ")
					}
				}
				switch {
				case tc.id == "301":
					if r.rejected == "" {
						t.Errorf("%s: the document was run (ending in %q); it must be refused at load, as its script cannot be read", tc.file, r.final)
					}
				case tc.id == "313" || tc.id == "314":
					if r.rejected == "" && r.final != "pass" {
						t.Errorf("%s: %s", tc.file, why)
					}
				case expected[tc.id] != "":
					if r.final == "pass" {
						t.Errorf("%s passes now: remove it from testdata/irp-expected-failures.txt", tc.file)
					}
				default:
					if r.final != "pass" {
						t.Errorf("%s: %s", tc.file, why)
					}
				}
			})
		}
	})
	for id := range expected {
		if _, ok := results[id]; !ok && !t.Failed() {
			t.Errorf("irp-expected-failures.txt lists %s, which tests.tsv does not", id)
		}
	}
	if *writeTable != "" {
		if err := writeIRPTable(*writeTable, tests, results, expected); err != nil {
			t.Fatal(err)
		}
	}
}

const tableBegin, tableEnd = "<!-- irp-table: begin (go test ./interpreter/scxml -run TestIRP -irp-table FILE) -->", "<!-- irp-table: end -->"

// writeIRPTable replaces the text between the table markers in file.
func writeIRPTable(file string, tests []irpTest, results map[string]irpResult, expected map[string]string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	i, j := strings.Index(string(b), tableBegin), strings.Index(string(b), tableEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q ... %q markers", file, tableBegin, tableEnd)
	}
	type group struct {
		pass, total int
		why         map[string][]string // reason -> ids
		reasons     []string
	}
	groups := map[string]*group{}
	var order []string
	var wall time.Duration
	for _, tc := range tests {
		kind := tc.conformance
		if tc.manual {
			kind += ", manual"
		}
		g := groups[kind]
		if g == nil {
			g = &group{why: map[string][]string{}}
			groups[kind] = g
			order = append(order, kind)
		}
		r, ran := results[tc.id]
		wall += r.wall
		g.total++
		if ran && (r.final == "pass" || tc.id == "301" && r.rejected != "") {
			g.pass++
			continue
		}
		why := strings.TrimSpace(expected[tc.id])
		if why == "" {
			why = "manual: a person reads its log"
		}
		if g.why[why] == nil {
			g.reasons = append(g.reasons, why)
		}
		g.why[why] = append(g.why[why], tc.id)
	}
	sort.Strings(order)
	var out strings.Builder
	out.WriteString(tableBegin + "\n\n| tests | pass | of | not passed, and why |\n|---|---:|---:|---|\n")
	for _, k := range order {
		g := groups[k]
		var notes []string
		for _, why := range g.reasons {
			notes = append(notes, fmt.Sprintf("%s: %s", strings.Join(g.why[why], ", "), why))
		}
		fmt.Fprintf(&out, "| %s | %d | %d | %s |\n", k, g.pass, g.total, strings.Join(notes, "; "))
	}
	fmt.Fprintf(&out, "\nThe %d documents run took %.2f s together, each on a virtual clock.\n\n", len(results), wall.Seconds())
	return os.WriteFile(file, []byte(string(b[:i])+out.String()+string(b[j:])), 0o644)
}
