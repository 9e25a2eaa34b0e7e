// Package irptest finds the W3C SCXML IRP tests (the Lua-datamodel
// documents uSCXML generates, with their tests.tsv) for seat's tests:
// $SEAT_SCXML_IRP, else ../shared/scxml-irp beside the repository. It is
// used by tests only.
//
// A missing suite fails the tests that need it when it is required
// ($SEAT_SCXML_IRP names it, CI=true or SEAT_REQUIRE_TOOLS=1) and skips
// them otherwise. A skip is silent in go test's output without -v, so a
// package's TestMain calls Note, which says so on standard error; go test
// ./... shows a passing package's output only with -v, which is why CI
// names the suite with SEAT_SCXML_IRP: then it cannot be missing unseen.
package irptest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Env names the suite's directory.
const Env = "SEAT_SCXML_IRP"

// Dir is where the suite is looked for: $SEAT_SCXML_IRP when set
// (explicit), else ../shared/scxml-irp beside the repository holding the
// working directory (the directory of its go.mod), else that path from
// the working directory two levels down.
func Dir() (dir string, explicit bool) {
	if d := os.Getenv(Env); d != "" {
		return d, true
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.Join(filepath.Dir(d), "shared", "scxml-irp"), false
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return filepath.Join("..", "..", "..", "shared", "scxml-irp"), false
}

// Missing says why dir holds no suite (no tests.tsv, or no lua
// directory of documents), or returns nil.
func Missing(dir string) error {
	for _, f := range []string{"tests.tsv", "lua"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	return nil
}

// Required says why a missing suite fails the tests rather than skipping
// them ("" when it skips them).
func Required() string {
	switch {
	case os.Getenv(Env) != "":
		return Env + " names it"
	case os.Getenv("CI") == "true":
		return "CI=true"
	case os.Getenv("SEAT_REQUIRE_TOOLS") == "1":
		return "SEAT_REQUIRE_TOOLS=1"
	}
	return ""
}

// T is what Find needs of a test.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Find returns the suite's directory. When it is missing, the test fails
// if the suite is required, and is skipped otherwise.
func Find(t T) string {
	t.Helper()
	dir, _ := Dir()
	err := Missing(dir)
	if err == nil {
		return dir
	}
	if why := Required(); why != "" {
		t.Fatalf("the W3C SCXML IRP tests are missing (%v), and they are required (%s); set %s to their directory", err, why, Env)
		return ""
	}
	t.Skipf("the W3C SCXML IRP tests are not here (%v); set %s to their directory", err, Env)
	return ""
}

// Note writes to w, for a package's TestMain, that the tests named
// (TestIRP) will be skipped because the suite is missing; nothing when
// the suite is there or required (the tests then fail, and say why).
func Note(w io.Writer, tests string) {
	dir, _ := Dir()
	err := Missing(dir)
	if err == nil || Required() != "" {
		return
	}
	fmt.Fprintf(w, "NOTE: %s skipped: the W3C SCXML IRP tests are not here (%v); set %s to their directory to run them (with it set, a missing suite fails)\n", tests, err, Env)
}
