package all

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seatml/seat/adaptors"
)

// TestNoTypeNameComparedOutsideAdaptors: outside adaptors/, code asks a
// kind what it can do (adaptors.Kind's capabilities) instead of
// comparing an adaptor's type name; seat port's translation table of
// eSEAT's types is the one exception. Before issue 34 there were 16 such
// comparisons.
func TestNoTypeNameComparedOutsideAdaptors(t *testing.T) {
	var names []string
	for _, n := range append(adaptors.KindsWith(0), "provider", "consumer") {
		names = append(names, regexp.QuoteMeta(n))
	}
	if len(names) < 5 {
		t.Fatalf("kinds %q: the standard list did not register them", names)
	}
	cmp := regexp.MustCompile(`(==|!=|case)\s*"(` + strings.Join(names, "|") + `)"`)
	root := filepath.Join("..", "..")
	scanned := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "adaptors" || rel == filepath.Join("interpreter", "port") || rel != "." && strings.HasPrefix(d.Name(), ".") || rel == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := cmp.FindString(line); m != "" {
				t.Errorf("%s:%d: %s: ask the kind (adaptors.LookupKind(...).Has(...)) instead of comparing its name", rel, i+1, m)
			}
		}
		scanned++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("only %d files scanned: the walk is broken", scanned)
	}
}
