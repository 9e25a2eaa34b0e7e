package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
			golden := strings.TrimSuffix(name, ".seatml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/seat -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("seat check %s (-want +got):\n%s", name, diff)
			}
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
