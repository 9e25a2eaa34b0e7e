package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

//go:noinline
func cgSpin(n int) int {
	s := 0
	for i := range n {
		s += i * i
	}
	return s
}

var cgSink int

// BenchmarkCGSpin is a benchmark for the gate's own test: some work per
// iteration, inside cgSpin.
func BenchmarkCGSpin(b *testing.B) {
	for range b.N {
		cgSink += cgSpin(100)
	}
}

// TestCallgrindRefusesABenchmarkThatDidNotRun: a path whose benchmark
// pattern matches nothing (a benchmark renamed, a sub-benchmark dropped)
// must fail the gate, not pass it. The whole-program count of two runs
// that both measured start-up alone differs by nothing: 0 instructions
// per event, far under any threshold, and the gate passed.
func TestCallgrindRefusesABenchmarkThatDidNotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs valgrind")
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind is not installed")
	}
	// This package's test binary has BenchmarkCGSpin; built with -c, as
	// the gate's is, it keeps the symbols a toggle needs (go test strips
	// them from the binary it runs).
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "seatreport.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Chdir("../../..") // the gate runs from the repository's root
	for _, p := range []cgPath{
		{Key: "whole", Bench: "^BenchmarkCGSpin$", N: 600},
		{Key: "toggle", Bench: "^BenchmarkCGSpin$", Toggle: "*seatreport.cgSpin", N: 600},
	} {
		n, err := p.measure(bin, tmp)
		if err != nil || n < 100 {
			t.Errorf("%s: %v instructions per iteration (%v), want a few hundred", p.Key, n, err)
		}
		p.Bench = "^BenchmarkCGSpinRenamed$"
		if n, err := p.measure(bin, tmp); err == nil {
			t.Errorf("%s: a benchmark that did not run measured %v instructions per event, and no error", p.Key, n)
		} else if !strings.Contains(err.Error(), "did not run") {
			t.Errorf("%s: %v", p.Key, err)
		}
	}
}
