package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestCheckGolden runs "seat check" on every file of testdata/check and
// compares what it prints, and its exit status, with the .golden file.
// Files named warn-* and eseat-* must pass; every other one must fail.
func TestCheckGolden(t *testing.T) {
	dir, err := filepath.Abs("../../testdata/check")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.seatml"))
	if len(files) < 25 {
		t.Fatalf("only %d files in the corpus", len(files))
	}
	t.Chdir(dir)
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".seatml"), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"check", name}, nil, &stdout, &stderr)
			code := exitCode(err, &stderr)
			got := fmt.Sprintf("%sexit %d\n", stderr.String(), code)
			golden(t, strings.TrimSuffix(name, ".seatml")+".golden", got)
			passes := strings.HasPrefix(name, "warn-") || strings.HasPrefix(name, "eseat-")
			if passes != (code == 0) {
				t.Errorf("exit %d; files named warn-* and eseat-* must pass, others must fail", code)
			}
			if stdout.Len() != 0 {
				t.Errorf("check wrote to standard output: %q", stdout.String())
			}
		})
	}
}

// TestCheckGoldenCountInDocs keeps the figures docs/guarantees.md gives
// for the corpus of TestCheckGolden true: how many of its files are
// broken (every file but warn-* and eseat-*), and how many of those are
// written in Japanese.
func TestCheckGoldenCountInDocs(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/check/*.seatml")
	broken, japanese := 0, 0
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasPrefix(name, "warn-") || strings.HasPrefix(name, "eseat-") {
			continue
		}
		broken++
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsFunc(string(b), func(r rune) bool { return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) }) {
			japanese++
		}
	}
	doc, err := os.ReadFile("../../docs/guarantees.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`TestCheckGolden` \\((\\d+) broken files, (\\d+) of them in Japanese,").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/guarantees.md no longer says how many broken files TestCheckGolden checks")
	}
	if got := fmt.Sprintf("%s %s", m[1], m[2]); got != fmt.Sprintf("%d %d", broken, japanese) {
		t.Errorf("docs/guarantees.md says %s broken files, %s of them in Japanese; testdata/check has %d, %d in Japanese", m[1], m[2], broken, japanese)
	}
}
