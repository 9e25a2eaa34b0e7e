package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// Timings on this shared two-core machine spread by ±50 % and more; the
// instructions an event path executes do not. Each path below is run
// under valgrind's callgrind and its instructions per event compared with
// bench/callgrind.json, the counts of the last -write: a loss of more
// than cgSlack fails the gate, whatever the machine's load.

// cgPath is one event path measured by instruction count.
type cgPath struct {
	Key, What string
	Bench     string // -test.bench pattern, run from bench/
	// Toggle, if set, counts only inside the functions it matches (one
	// event each); else the whole program is counted for two run lengths
	// and the difference divided by theirs, which leaves out start-up.
	Toggle string
	N      int    // events (the longer run's, for a whole-program path)
	Per    string // what N counts, if not events
}

var cgPaths = []cgPath{
	{Key: "cg-pingpong", What: "keyed match + transition, no Lua", Bench: "^BenchmarkPingPong$/^seat$", Toggle: "*Machine).handleEvent", N: 20000},
	{Key: "cg-nested", What: "the same in a nested behavior (a parallel state, entry and exit lists)", Bench: "^BenchmarkNestedPingPong$", Toggle: "*Machine).handleEvent", N: 20000},
	{Key: "cg-lua", What: "the same with a small Lua action", Bench: "^BenchmarkPingPongLua$", Toggle: "*Machine).handleEvent", N: 20000},
	{Key: "cg-scxml", What: "an SCXML document's ping-pong (every other transition with a Lua cond on _event)", Bench: "^BenchmarkSCXMLPingPong$", Toggle: "*Machine).handleEvent", N: 20000},
	{Key: "cg-scxml-nocond", What: "the SCXML ping-pong without the cond: no Lua run, the counterpart of cg-pingpong", Bench: "^BenchmarkSCXMLPingPongNoCond$", Toggle: "*Machine).handleEvent", N: 20000},
	{Key: "cg-socket-oneline", What: "a socket round trip, one line in flight (reader runs the behavior), whole program with the client", Bench: "^BenchmarkSocketOneLine$", N: 12000},
	{Key: "cg-socket-pipelined", What: "a socket round trip, 64 lines in flight, whole program with the client", Bench: "^BenchmarkSocketPipelined$/^message$", N: 42000},
	{Key: "cg-socket-monitored", What: "the same with the monitor on (seat run --control) and no page open: its history of each behavior's last lines", Bench: "^BenchmarkSocketPipelined$/^monitored$", N: 42000},
	{Key: "cg-sessions", What: "an event to one of 10,000 peer sessions, 8 producers, every reply checked, whole program", Bench: "^BenchmarkSessionEvents$", N: 60000},
	{Key: "cg-deep", What: "the statechart engine alone: a transition between leaves 4 levels deep across a 3-region parallel state", Bench: "^BenchmarkDeepTransition$/^engine$", N: 20000},
	{Key: "cg-scxml-delayed", What: "an SCXML delayed <send> to itself: a line, its transition, the timer's event and the transition back, per op", Bench: "^BenchmarkSCXMLDelayedSend$", N: 12000},
	{Key: "cg-load10000", What: "load + check a 10,000-rule, 1,000-state file", Per: "load", Bench: "^BenchmarkLoad10000Rules$", N: 6},
	{Key: "cg-web-oneframe", What: "a WebSocket round trip with a Lua reply, one frame in flight, whole program with the client", Bench: "^BenchmarkWebOneFrame$", N: 12000},
	{Key: "cg-web-pipelined", What: "a WebSocket round trip with a Lua reply, 16 frames in flight, whole program with the client", Bench: "^BenchmarkWebPipelined$", N: 24000},
}

// cgSlack is how much more than its baseline a path may take.
const cgSlack = 1.10

// cgBaselineFile holds the counts the gate compares with.
const cgBaselineFile = "bench/callgrind.json"

type cgBaseline struct {
	Go     string             `json:"go"`
	CPU    string             `json:"cpu"`
	Commit string             `json:"commit"`
	Counts map[string]float64 `json:"instructions_per_event"`
}

// cgOtherCPUSlack replaces cgSlack when the baseline was taken on another
// kind of processor: the runtime picks some routines (memmove, hashing)
// by CPU feature, so counts may differ a little between vendors. A
// baseline rewritten on the machine that gates keeps the 10 %.
const cgOtherCPUSlack = 1.25

// callgrindFigures measures every path. Under -gate each is held to its
// baseline; under -write the measured counts become the baseline.
func callgrindFigures() ([]*Figure, error) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		return nil, errors.New("valgrind is not installed (apt-get install valgrind): the gate counts the event paths' instructions with callgrind")
	}
	var base cgBaseline
	if data, err := os.ReadFile(cgBaselineFile); err == nil {
		if err := json.Unmarshal(data, &base); err != nil {
			return nil, fmt.Errorf("%s: %w", cgBaselineFile, err)
		}
	} else if *gate {
		return nil, fmt.Errorf("%s: %w (seatreport -write makes it)", cgBaselineFile, err)
	}
	if *gate && base.Go != runtime.Version() {
		fmt.Fprintf(os.Stderr, "seatreport: the callgrind baseline was taken with %s, this is %s: counts may differ a little\n", base.Go, runtime.Version())
	}
	slack := cgSlack
	if *gate && base.CPU != cpuModel() {
		slack = cgOtherCPUSlack
		fmt.Fprintf(os.Stderr, "seatreport: the callgrind baseline was taken on %q, this is %q: the gate allows %.0f %% more instead of %.0f %%\n",
			base.CPU, cpuModel(), (cgOtherCPUSlack-1)*100, (cgSlack-1)*100)
	}
	tmp, err := os.MkdirTemp("", "seatreport-cg-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin, err := filepath.Abs(filepath.Join(tmp, "bench.test"))
	if err != nil {
		return nil, err
	}
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "./bench/").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the benchmarks: %v\n%s", err, out)
	}
	keys, err := regexp.Compile(*cgKeys)
	if err != nil {
		return nil, fmt.Errorf("-paths: %w", err)
	}
	if *cgKeys != "" && *write {
		return nil, errors.New("-paths measures some paths; -write rewrites the baseline of all of them")
	}
	var figs []*Figure
	counts := map[string]float64{}
	for _, p := range cgPaths {
		if !keys.MatchString(p.Key) {
			continue
		}
		fmt.Fprintf(os.Stderr, "seatreport: callgrind %s ...\n", p.Key)
		n, err := p.measure(bin, tmp)
		if err != nil {
			return nil, fmt.Errorf("callgrind %s: %w", p.Key, err)
		}
		counts[p.Key] = n
		per := p.Per
		if per == "" {
			per = "event"
		}
		f := &Figure{Key: p.Key, What: "callgrind, instructions per " + per + ": " + p.What, Unit: "instr", Rounds: []float64{n}}
		switch b, ok := base.Counts[p.Key]; {
		case *write:
			f.Max = n * cgSlack
		case ok:
			f.Max = b * slack
		case *gate:
			return nil, fmt.Errorf("%s has no count for %s (seatreport -write makes it)", cgBaselineFile, p.Key)
		}
		figs = append(figs, f)
	}
	if *write {
		data, err := json.MarshalIndent(cgBaseline{Go: runtime.Version(), CPU: cpuModel(), Commit: measured, Counts: counts}, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(cgBaselineFile, append(data, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	return figs, nil
}

// measure returns the path's instructions per event.
func (p cgPath) measure(bin, tmp string) (float64, error) {
	if p.Toggle != "" {
		// The benchmark runs once with b.N = 1, then with N.
		total, err := callgrind(bin, tmp, p.Bench, p.N, "--toggle-collect="+p.Toggle)
		return total / float64(p.N+1), err
	}
	short := p.N / 6
	a, err := callgrind(bin, tmp, p.Bench, short)
	if err != nil {
		return 0, err
	}
	b, err := callgrind(bin, tmp, p.Bench, p.N)
	if err != nil {
		return 0, err
	}
	return (b - a) / float64(p.N-short), nil
}

var (
	cgTotals = regexp.MustCompile(`(?m)^(?:summary|totals): (\d+)`)
	// cgResult is a benchmark's result line, with its iterations.
	cgResult = regexp.MustCompile(`(?m)^Benchmark\S*\s+(\d+)\s+\d[\d.]* ns/op`)
)

// callgrind runs one benchmark under callgrind and returns the
// instructions it counted. One processor and no preemption signals make
// the count repeatable (the goroutines take turns the same way each run);
// GOGC=off leaves the collector out.
func callgrind(bin, tmp, bench string, n int, extra ...string) (float64, error) {
	out := filepath.Join(tmp, "callgrind.out")
	args := append([]string{"--tool=callgrind", "--callgrind-out-file=" + out}, extra...)
	args = append(args, bin, "-test.run", "^$", "-test.bench", bench, "-test.benchtime", strconv.Itoa(n)+"x")
	cmd := exec.Command("valgrind", args...)
	cmd.Dir = "bench"
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GOGC=off", "GODEBUG=asyncpreemptoff=1")
	o, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v\n%s", err, o)
	}
	// A pattern that matches no benchmark (one renamed, a sub-benchmark
	// dropped) runs nothing and still passes: the count would be start-up
	// alone, and a whole-program path's difference of two such runs about
	// zero instructions per event, under any threshold.
	ran := cgResult.FindAllSubmatch(o, -1)
	if len(ran) != 1 || string(ran[0][1]) != strconv.Itoa(n) {
		return 0, fmt.Errorf("the benchmark %s did not run once with %d iterations (%d result lines)\n%s", bench, n, len(ran), o)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return 0, err
	}
	os.Remove(out)
	var total float64
	for _, m := range cgTotals.FindAllStringSubmatch(string(data), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		total = max(total, v)
	}
	if total == 0 || !strings.Contains(string(data), "events: Ir") {
		return 0, errors.New("no instruction count in callgrind's output")
	}
	return total, nil
}
