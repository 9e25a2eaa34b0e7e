package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameRealTests keeps docs/guarantees.md (and every other page)
// honest: each test or fuzz target a page names as proof must exist.
func TestDocsNameRealTests(t *testing.T) {
	root := filepath.Join("..", "..")
	var sources strings.Builder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sources.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "bench", "README.md"))
	named := regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)`")
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(b), -1) {
			checked++
			if !strings.Contains(sources.String(), "func "+m[1]+"(") {
				t.Errorf("%s names %s, which no test file defines", page, m[1])
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d test names found in the docs: is the pattern right?", checked)
	}
}
