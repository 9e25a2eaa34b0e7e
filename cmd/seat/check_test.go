package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
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
