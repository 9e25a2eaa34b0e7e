// Command seatreport takes the performance figures that the docs show and
// that CI gates, in one run on this machine, each as a ratio to its peer
// or floor measured in the same run, the median of several rounds:
//
//	go run ./bench/cmd/seatreport -write   # run, then rewrite the tables in README.md and bench/README.md
//	go run ./bench/cmd/seatreport -gate    # a short run; exit 1 if a figure passes its threshold
//	go run ./bench/cmd/seatreport -check   # only check that the tables in the docs parse
//	go run ./bench/cmd/seatreport -callgrind -gate   # only the event paths' instruction counts, against bench/callgrind.json
//
// The tables sit between <!-- seatreport:begin NAME --> and
// <!-- seatreport:end NAME --> markers; nothing else in the files is
// touched. Each table says the commit, the date and the machine.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	gate   = flag.Bool("gate", false, "a short run that checks every gated figure against its threshold")
	write  = flag.Bool("write", false, "rewrite the generated tables in README.md and bench/README.md")
	check  = flag.Bool("check", false, "only check that the generated tables parse")
	rounds = flag.Int("rounds", 5, "rounds of each measurement")
	seat   = flag.String("seat", "", "the seat binary to measure (default: built from this tree)")
	cgOnly = flag.Bool("callgrind", false, "only the instruction counts of the event paths (with -gate: check them; with -write: rewrite bench/callgrind.json alone)")
	cgKeys = flag.String("paths", "", "with -callgrind: only the paths whose key matches this regular expression (not with -write)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "seatreport:", err)
		os.Exit(1)
	}
}

// docs are the files with generated tables.
var docs = []string{"README.md", "bench/README.md"}

func run() error {
	if *check {
		return checkDocs()
	}
	if *rounds < 3 {
		return errors.New("-rounds must be at least 3: figures are medians")
	}
	measured = commit() // the code measured, before any table is rewritten
	measureAll := measure
	if *cgOnly {
		measureAll = callgrindFigures // with -write, bench/callgrind.json alone
	}
	figs, err := measureAll()
	if err != nil {
		return err
	}
	printFigures(figs)
	if *gate {
		return gateFigures(figs)
	}
	if *write && !*cgOnly {
		return writeDocs(figs)
	}
	return nil
}

// Figure is one reported figure: its rounds, their median, and the
// threshold CI holds it to, if it is gated.
type Figure struct {
	Key    string // names it in the tables
	What   string
	Rounds []float64
	Unit   string // "x" for a ratio
	// Min or Max is the gate's threshold (0: not gated on that side);
	// Target is the goal it is measured against, as written.
	Min, Max float64
	Target   string
}

func (f *Figure) Median() float64 {
	s := slices.Clone(f.Rounds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Spread is the rounds' range.
func (f *Figure) Spread() (lo, hi float64) { return slices.Min(f.Rounds), slices.Max(f.Rounds) }

// --- measuring ---------------------------------------------------------------

type benchLine struct {
	name    string
	metrics map[string]float64 // by unit
}

var benchRe = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+(.*)$`)

// goBench runs Go benchmarks of ./bench and returns their lines.
func goBench(pattern string, count int, extra ...string) ([]benchLine, error) {
	return goBenchIn("./bench/", pattern, count, extra...)
}

// goBenchIn is goBench for the benchmarks of another package.
func goBenchIn(pkg, pattern string, count int, extra ...string) ([]benchLine, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-count", strconv.Itoa(count)}, extra...)
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go test -bench %s: %w\n%s", pattern, err, out)
	}
	var lines []benchLine
	for _, l := range strings.Split(string(out), "\n") {
		m := benchRe.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		f := strings.Fields(m[3])
		bl := benchLine{name: m[1], metrics: map[string]float64{}}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				bl.metrics[f[i+1]] = v
			}
		}
		lines = append(lines, bl)
	}
	return lines, nil
}

func collect(lines []benchLine, name, unit string) []float64 {
	var out []float64
	for _, l := range lines {
		if l.name == name {
			if v, ok := l.metrics[unit]; ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// ratios divides each round's figure by the same round's in den.
func ratios(num, den []float64) []float64 {
	var out []float64
	for i := range min(len(num), len(den)) {
		if den[i] > 0 {
			out = append(out, num[i]/den[i])
		}
	}
	return out
}

// seatload's -json output (bench/cmd/seatload).
type loadResults struct {
	Workloads map[string]map[string][]struct {
		P50us     float64 `json:"p50_us"`
		Pipelined float64 `json:"pipelined_per_s"`
		PipeCPUus float64 `json:"pipelined_cpu_us"`
	} `json:"workloads"`
	Jitter map[string]struct {
		P99us float64 `json:"p99_us"`
	} `json:"jitter"`
	Oneline map[string]struct {
		FloorCPUus  []float64 `json:"floor_cpu_us"`
		SeatCPUus   []float64 `json:"seat_cpu_us"`
		FloorPerS   []float64 `json:"floor_per_s"`
		SeatPerS    []float64 `json:"seat_per_s"`
		IdlePercent float64   `json:"idle_percent"`
	} `json:"oneline"`
}

func measure() ([]*Figure, error) {
	var figs []*Figure
	add := func(f *Figure) { figs = append(figs, f) }
	cg, err := callgrindFigures()
	if err != nil {
		return nil, err
	}
	figs = append(figs, cg...)
	fmt.Fprintln(os.Stderr, "seatreport: Go benchmarks ...")
	lines, err := goBench("^(BenchmarkPingPongRatio|BenchmarkPingPongLua|BenchmarkLoad10000Rules|BenchmarkDeepTransitionRatio|BenchmarkDeepTransition)$", *rounds)
	if err != nil {
		return nil, err
	}
	add(&Figure{Key: "pingpong", What: "keyed match + transition, no Lua: seat / qmuntal/stateless", Unit: "x",
		Rounds: collect(lines, "BenchmarkPingPongRatio", "seat/stateless"), Max: 0.6, Target: "≤ 0.35"})
	add(&Figure{Key: "pingpong-ns", What: "keyed match + transition, no Lua", Unit: "ns", Rounds: collect(lines, "BenchmarkPingPongRatio", "seat-ns/event")})
	add(&Figure{Key: "pingpong-allocs", What: "keyed match + transition: allocations per event", Unit: "allocs",
		Rounds: collect(lines, "BenchmarkPingPongRatio", "allocs/op"), Max: 0.5, Target: "0"})
	add(&Figure{Key: "deep", What: "statechart engine: transition between leaves 4 levels deep, across a 3-region parallel state / qmuntal/stateless (SubstateOf)", Unit: "x",
		Rounds: collect(lines, "BenchmarkDeepTransitionRatio", "engine/stateless"), Max: 1, Target: "≤ 0.75"})
	add(&Figure{Key: "deep-allocs", What: "the same: allocations per two transitions", Unit: "allocs",
		Rounds: collect(lines, "BenchmarkDeepTransition/engine", "allocs/op"), Max: 0.5, Target: "0"})
	add(&Figure{Key: "lua-ns", What: "the same with a small Lua action", Unit: "ns", Rounds: collect(lines, "BenchmarkPingPongLua", "ns/op"), Target: "≤ 700 ns"})
	add(&Figure{Key: "load", What: "load + check a 10,000-rule, 1,000-state file: seat / floor (encoding/xml tokens + gopher-lua compiling each chunk)",
		Unit: "x", Rounds: collect(lines, "BenchmarkLoad10000Rules", "load/floor"), Max: 0.9, Target: "≤ 2"})
	var loadMs []float64
	for _, ns := range collect(lines, "BenchmarkLoad10000Rules", "ns/op") {
		loadMs = append(loadMs, ns/1e6)
	}
	add(&Figure{Key: "load-ms", What: "load + check a 10,000-rule file", Unit: "ms", Rounds: loadMs, Target: "≤ 100 ms"})

	if !*gate {
		fmt.Fprintln(os.Stderr, "seatreport: sessions ...")
		start, err := goBench("^BenchmarkSessionStart$", *rounds, "-benchtime", "5000x")
		if err != nil {
			return nil, err
		}
		var us []float64
		for _, ns := range collect(start, "BenchmarkSessionStart", "ns/op") {
			us = append(us, ns/1000)
		}
		add(&Figure{Key: "session-start", What: "start a session (its Lua state, general script, onentry, onconnect)", Unit: "µs", Rounds: us, Target: "≤ 200 µs"})
		add(&Figure{Key: "session-kb", What: "memory per idle session with its Lua state", Unit: "KB", Rounds: collect(start, "BenchmarkSessionStart", "KB/session"), Target: "≤ 100 KB"})
		topics, err := goBench("^BenchmarkTopicSessionStart$", *rounds, "-benchtime", "3000x")
		if err != nil {
			return nil, err
		}
		add(&Figure{Key: "topic-session-kb", What: "memory per idle MQTT topic session (3,000 robots through a real mosquitto)", Unit: "KB", Rounds: collect(topics, "BenchmarkTopicSessionStart", "KB/session"), Target: "≤ 100 KB"})
		events, err := goBench("^BenchmarkSessionEvents$", *rounds, "-benchtime", "1000000x")
		if err != nil {
			return nil, err
		}
		add(&Figure{Key: "session-events", What: "events over 10,000 concurrent sessions, every reply checked in order", Unit: "/s",
			Rounds: collect(events, "BenchmarkSessionEvents", "events/s"), Target: "≥ 0.25 M/s"})
		hour, err := goBench("^BenchmarkSeatTestHour$", *rounds, "-benchtime", "1x")
		if err != nil {
			return nil, err
		}
		var secs []float64
		for _, ns := range collect(hour, "BenchmarkSeatTestHour", "ns/op") {
			secs = append(secs, ns/1e9)
		}
		add(&Figure{Key: "seattest-hour", What: "seat test: a +1h step with an onexec at 1000 Hz (3.6 M ticks, each run)", Unit: "s", Rounds: secs, Target: "≤ 5 s"})
	}
	if !*gate {
		fmt.Fprintln(os.Stderr, "seatreport: ROS ...")
		ros, err := goBench("^BenchmarkROSEchoRatio$", *rounds, "-benchtime", "3000x")
		if err != nil {
			return nil, err
		}
		add(&Figure{Key: "ros-w1", What: "ROS std_msgs/String round trips through Debian's master, one at a time, seat echoing (Lua) / a rospy echo node, in the same run", Unit: "x",
			Rounds: collect(ros, "BenchmarkROSEchoRatio", "w1-seat/rospy"), Target: "≥ 5"})
		add(&Figure{Key: "ros-w1-floor", What: "the same, seat / a goroslib echo node in Go", Unit: "x",
			Rounds: collect(ros, "BenchmarkROSEchoRatio", "w1-seat/goroslib")})
		add(&Figure{Key: "ros-w16", What: "the same with 16 in flight, seat / rospy", Unit: "x",
			Rounds: collect(ros, "BenchmarkROSEchoRatio", "w16-seat/rospy"), Target: "≥ 5"})
		add(&Figure{Key: "ros-w16-floor", What: "the same with 16 in flight, seat / goroslib", Unit: "x",
			Rounds: collect(ros, "BenchmarkROSEchoRatio", "w16-seat/goroslib")})
		add(&Figure{Key: "ros-w16-rate", What: "the same with 16 in flight, seat", Unit: "/s",
			Rounds: collect(ros, "BenchmarkROSEchoRatio", "w16-seat-rt/s")})

		fmt.Fprintln(os.Stderr, "seatreport: OpenRTM ...")
		rtm, err := goBench("^BenchmarkOpenRTMEchoRatio$", *rounds, "-benchtime", "3000x")
		if err != nil {
			return nil, err
		}
		for _, pl := range []struct{ name, what string }{
			{"split", "the drivers pinned to one processor, the echoes to the other"},
			{"shared", "all pinned to one processor"},
		} {
			add(&Figure{Key: "openrtm-" + pl.name + "-w1", What: "OpenRTM TimedString round trips (corba_cdr push) from an omniORB C++ driver, one at a time, seat echoing (a keyed rule's <message>) / a C++ echo component writing back inside its put, in the same run, " + pl.what, Unit: "x",
				Rounds: collect(rtm, "BenchmarkOpenRTMEchoRatio", pl.name+"-w1-seat/cxx"), Target: "≥ 0.8"})
			add(&Figure{Key: "openrtm-" + pl.name + "-w1-rate", What: "the same, seat", Unit: "/s",
				Rounds: collect(rtm, "BenchmarkOpenRTMEchoRatio", pl.name+"-w1-seat-rt/s")})
			add(&Figure{Key: "openrtm-" + pl.name + "-w1-cpu", What: "the same, processor time per round trip, seat's process / the C++ echo's", Unit: "x",
				Rounds: ratios(collect(rtm, "BenchmarkOpenRTMEchoRatio", pl.name+"-w1-seat-cpu-µs/rt"), collect(rtm, "BenchmarkOpenRTMEchoRatio", pl.name+"-w1-cxx-cpu-µs/rt"))})
			add(&Figure{Key: "openrtm-" + pl.name + "-w16", What: "the same with 16 in flight, seat / the C++ echo", Unit: "x",
				Rounds: collect(rtm, "BenchmarkOpenRTMEchoRatio", pl.name+"-w16-seat/cxx"), Target: "≥ 0.8"})
		}
		fmt.Fprintln(os.Stderr, "seatreport: speech ...")
		asr, err := goBenchIn("./adaptors/speech", "^BenchmarkRecognition$", 1, "-benchtime", "1x")
		if err != nil {
			return nil, err
		}
		add(&Figure{Key: "asr-keys", What: "pocketsphinx hearing espeak-ng's speech of a kiosk's 15 phrases in three voices, the keys as its grammar: phrases heard right (a rejection counts as wrong)", Unit: "%",
			Rounds: collect(asr, "BenchmarkRecognition", "keys-right-%"), Target: "≥ 95 %"})
		add(&Figure{Key: "asr-rejected", What: "the same: phrases outside the keys rejected (3 phrases, three voices)", Unit: "%",
			Rounds: collect(asr, "BenchmarkRecognition", "outside-rejected-%"), Target: "≥ 67 %"})
		add(&Figure{Key: "asr-decision", What: "the same: the longest time from a whole WAV file to the decision", Unit: "ms",
			Rounds: collect(asr, "BenchmarkRecognition", "keys-decision-max-ms"), Target: "≤ 300 ms"})
		add(&Figure{Key: "asr-lm", What: "the same phrases with pocketsphinx's general language model instead of the keys: words heard right", Unit: "%",
			Rounds: collect(asr, "BenchmarkRecognition", "lm-words-right-%")})
	}
	fmt.Fprintln(os.Stderr, "seatreport: seatload ...")
	tmp, err := os.MkdirTemp("", "seatreport-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := *seat
	if bin == "" {
		bin = filepath.Join(tmp, "seat")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/seat").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building seat: %v\n%s", err, out)
		}
	}
	loadBin := filepath.Join(tmp, "seatload")
	if out, err := exec.Command("go", "build", "-o", loadBin, "./bench/cmd/seatload").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building seatload: %v\n%s", err, out)
	}
	jsonFile := filepath.Join(tmp, "load.json")
	args := []string{"-seat", bin, "-json", jsonFile, "-rounds", strconv.Itoa(*rounds), "-workload", "message,lua"}
	if *gate {
		args = append(args, "-n", "100000", "-stopwait", "3000", "-warmup", "2000", "-ws=false", "-oneline", "20000", "-idle", "0",
			"-modes", "plain,control")
	} else {
		args = append(args, "-n", "200000", "-stopwait", "10000", "-idle", "10s")
	}
	cmd := exec.Command(loadBin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("seatload: %w", err)
	}
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		return nil, err
	}
	var lr loadResults
	if err := json.Unmarshal(data, &lr); err != nil {
		return nil, err
	}
	ratio := func(workload, mode string, get func(p50, pipe float64) float64) []float64 {
		f, s := lr.Workloads[workload]["floor"], lr.Workloads[workload][mode]
		var out []float64
		for i := range min(len(f), len(s)) {
			out = append(out, get(s[i].P50us, s[i].Pipelined)/get(f[i].P50us, f[i].Pipelined))
		}
		return out
	}
	pipeCPU := func(workload, mode string) []float64 {
		f, s := lr.Workloads[workload]["floor"], lr.Workloads[workload][mode]
		var out []float64
		for i := range min(len(f), len(s)) {
			if f[i].PipeCPUus > 0 {
				out = append(out, s[i].PipeCPUus/f[i].PipeCPUus)
			}
		}
		return out
	}
	pipe := func(_, p float64) float64 { return p }
	p50 := func(l, _ float64) float64 { return l }
	perS := func(workload, mode string) []float64 {
		var out []float64
		for _, r := range lr.Workloads[workload][mode] {
			out = append(out, r.Pipelined)
		}
		return out
	}
	add(&Figure{Key: "pipe-control", What: "pipelined, 8 TCP connections, message reply, seat --control / bare echo server", Unit: "x",
		Rounds: ratio("message", "control", pipe), Min: 0.25, Target: "≥ 0.55"})
	add(&Figure{Key: "pipe-plain", What: "the same, seat without --control / bare echo server", Unit: "x", Rounds: ratio("message", "plain", pipe), Min: 0.25, Target: "≥ 0.55"})
	add(&Figure{Key: "pipe-control-cpu", What: "the same: seat --control's CPU per event / the bare echo server's", Unit: "x", Rounds: pipeCPU("message", "control"), Max: 4, Target: "≤ 2"})
	ctlVsPlain := &Figure{Key: "pipe-control-vs-plain", What: "the same, seat --control / seat without it", Unit: "x", Min: 0.6, Target: "= 1"}
	for i, c := range perS("message", "control") {
		if p := perS("message", "plain"); i < len(p) {
			ctlVsPlain.Rounds = append(ctlVsPlain.Rounds, c/p[i])
		}
	}
	add(ctlVsPlain)
	add(&Figure{Key: "pipe-control-per-s", What: "pipelined, message reply, seat --control", Unit: "/s", Rounds: perS("message", "control")})
	if _, ok := lr.Workloads["message"]["page"]; ok {
		add(&Figure{Key: "pipe-page", What: "the same with a monitor page open / bare echo server", Unit: "x", Rounds: ratio("message", "page", pipe), Target: "≥ 0.5"})
	}
	if _, ok := lr.Workloads["message"]["record"]; ok {
		add(&Figure{Key: "pipe-record", What: "the same with --record / without", Unit: "x", Rounds: func() []float64 {
			var out []float64
			r, p := perS("message", "record"), perS("message", "plain")
			for i := range min(len(r), len(p)) {
				out = append(out, r[i]/p[i])
			}
			return out
		}(), Target: "≥ 0.85"})
	}
	add(&Figure{Key: "pipe-lua", What: "pipelined, Lua-script reply, seat --control / bare echo server", Unit: "x", Rounds: ratio("lua", "control", pipe), Min: 0.1, Target: "≥ 0.4"})
	if _, ok := lr.Workloads["web"]["plain"]; ok {
		add(&Figure{Key: "pipe-web", What: "pipelined, WebSocket, a Lua reply to each event frame, seat / bare WebSocket echo server", Unit: "x",
			Rounds: ratio("web", "plain", pipe), Target: "≥ 0.8"})
	}
	add(&Figure{Key: "sw-p50", What: "stop-and-wait p50 latency, message reply, seat --control / bare echo server", Unit: "x", Rounds: ratio("message", "control", p50), Target: "≤ 1.2"})
	add(&Figure{Key: "sw-p50-plain", What: "the same, seat without --control", Unit: "x", Rounds: ratio("message", "plain", p50), Target: "≤ 1.2"})
	for _, side := range []string{"server", "client"} {
		o, ok := lr.Oneline[side]
		if !ok {
			continue
		}
		var cpu, thr []float64
		for i := range o.SeatCPUus {
			cpu = append(cpu, o.SeatCPUus[i]/o.FloorCPUus[i])
			thr = append(thr, o.SeatPerS[i]/o.FloorPerS[i])
		}
		add(&Figure{Key: "oneline-" + side + "-cpu", What: "one line at a time, seat as a socket " + side + ": CPU per event, seat / bare Go " + side, Unit: "x",
			Rounds: cpu, Max: 1.8, Target: "≤ 1.1"})
		add(&Figure{Key: "oneline-" + side + "-throughput", What: "the same: throughput, seat / bare Go " + side, Unit: "x", Rounds: thr, Min: 0.5, Target: "≥ 0.9"})
		if side == "server" && !*gate {
			add(&Figure{Key: "idle", What: "seat idle, a one-rule socket behavior, % of a core over 10 s", Unit: "%", Rounds: []float64{o.IdlePercent}, Target: "≤ 0.3 %"})
		}
	}
	if j, ok := lr.Jitter["message"]; ok {
		add(&Figure{Key: "jitter", What: "100 Hz device loop jitter p99 during the message runs with --control", Unit: "µs", Rounds: []float64{j.P99us}, Target: "≤ 500 µs"})
	}
	return figs, nil
}

// --- output --------------------------------------------------------------------

func format(v float64, unit string) string {
	switch unit {
	case "x":
		return fmt.Sprintf("%.2f", v)
	case "/s":
		if v < 1e5 {
			return fmt.Sprintf("%.1f k/s", v/1e3)
		}
		return fmt.Sprintf("%.2f M/s", v/1e6)
	case "s":
		return fmt.Sprintf("%.2f s", v)
	case "instr":
		return fmt.Sprintf("%.0f instr", v)
	case "ns", "µs", "ms", "%", "allocs", "KB":
		if v >= 100 || unit == "allocs" {
			return fmt.Sprintf("%.0f %s", v, unit)
		}
		return fmt.Sprintf("%.2g %s", v, unit)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

func (f *Figure) cell() string {
	lo, hi := f.Spread()
	if len(f.Rounds) == 1 || lo == hi {
		return "**" + format(f.Median(), f.Unit) + "**"
	}
	return fmt.Sprintf("**%s** (%s–%s)", format(f.Median(), f.Unit), format(lo, f.Unit), format(hi, f.Unit))
}

func (f *Figure) gateText() string {
	switch {
	case f.Min > 0:
		return "≥ " + format(f.Min, f.Unit)
	case f.Max > 0:
		return "≤ " + format(f.Max, f.Unit)
	}
	return ""
}

func printFigures(figs []*Figure) {
	for _, f := range figs {
		fmt.Printf("%-28s %-28s gate %-8s target %-9s %s\n", f.Key, f.cell(), f.gateText(), f.Target, f.What)
	}
}

func gateFigures(figs []*Figure) error {
	failed := 0
	for _, f := range figs {
		if len(f.Rounds) == 0 {
			if f.Min > 0 || f.Max > 0 {
				fmt.Printf("FAIL %s: no rounds were measured\n", f.Key)
				failed++
			}
			continue
		}
		m := f.Median()
		if (f.Min > 0 && m < f.Min) || (f.Max > 0 && m > f.Max) {
			var ls []string
			for _, v := range f.Rounds {
				ls = append(ls, format(v, f.Unit))
			}
			fmt.Printf("FAIL %s (%s): median %s, threshold %s; rounds: %s\n", f.Key, f.What, format(m, f.Unit), f.gateText(), strings.Join(ls, ", "))
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d figures failed the performance gate", failed)
	}
	fmt.Println("performance gate: every gated figure is within its threshold")
	return nil
}

// cpuModel is this machine's processor, as /proc/cpuinfo names it.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// machine describes this machine for the tables.
func machine() string {
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(string(data))
		if len(f) > 1 {
			kb, _ := strconv.Atoi(f[1])
			mem = fmt.Sprintf(", %d GiB", (kb+(1<<19))>>20)
		}
	}
	return fmt.Sprintf("%d CPUs (%s)%s, %s, %s/%s", runtime.NumCPU(), cpuModel(), mem, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// measured names the commit the figures are of.
var measured string

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " with uncommitted changes"
	}
	return c
}

const tableHead = "| figure | median (spread over the rounds) | goal | CI gate |\n|---|---|---|---|\n"

func table(figs []*Figure, keys []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Written by `go run ./bench/cmd/seatreport -write` at commit %s on %s, %s; medians of %d rounds, each ratio taken against its reference in the same round.\n\n",
		measured, time.Now().UTC().Format("2006-01-02"), machine(), *rounds)
	b.WriteString(tableHead)
	for _, f := range figs {
		if keys != nil && !slices.Contains(keys, f.Key) {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.What, f.cell(), f.Target, f.gateText())
	}
	return b.String()
}

var markerRe = regexp.MustCompile(`(?s)(<!-- seatreport:begin (\S+) -->\n)(.*?)(<!-- seatreport:end (\S+) -->)`)

// readmeKeys are the figures the README shows; bench/README.md shows all.
var readmeKeys = []string{"pingpong", "pingpong-ns", "lua-ns", "load-ms", "pipe-control", "pipe-control-per-s", "pipe-page", "pipe-record", "sw-p50",
	"oneline-server-cpu", "oneline-server-throughput", "idle", "jitter", "session-start", "session-events"}

func writeDocs(figs []*Figure) error {
	for _, file := range docs {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		n := 0
		out := markerRe.ReplaceAllStringFunc(string(data), func(s string) string {
			m := markerRe.FindStringSubmatch(s)
			n++
			var keys []string
			if m[2] == "summary" {
				keys = readmeKeys
			}
			return m[1] + table(figs, keys) + m[4]
		})
		if n == 0 {
			return fmt.Errorf("%s: no <!-- seatreport:begin NAME --> marker", file)
		}
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "seatreport: rewrote %d table(s) in %s\n", n, file)
	}
	return checkDocs()
}

// checkDocs checks that every generated table parses: its markers pair
// up, it says where it comes from, and every row has four cells with a
// number in the figure's.
func checkDocs() error {
	var errs []error
	for _, file := range docs {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		ms := markerRe.FindAllStringSubmatch(string(data), -1)
		if len(ms) == 0 {
			errs = append(errs, fmt.Errorf("%s: no generated table", file))
		}
		if b, e := strings.Count(string(data), "<!-- seatreport:begin"), strings.Count(string(data), "<!-- seatreport:end"); b != len(ms) || e != len(ms) {
			errs = append(errs, fmt.Errorf("%s: %d begin and %d end markers, %d pairs", file, b, e, len(ms)))
		}
		for _, m := range ms {
			if m[2] != m[5] {
				errs = append(errs, fmt.Errorf("%s: table %q ends as %q", file, m[2], m[5]))
			}
			body := m[3]
			if !strings.Contains(body, "Written by `go run ./bench/cmd/seatreport -write` at commit ") {
				errs = append(errs, fmt.Errorf("%s: table %q does not say where it comes from", file, m[2]))
			}
			i := strings.Index(body, tableHead)
			if i < 0 {
				errs = append(errs, fmt.Errorf("%s: table %q has no header", file, m[2]))
				continue
			}
			rows := strings.Split(strings.TrimSpace(body[i+len(tableHead):]), "\n")
			for _, r := range rows {
				cells := strings.Split(strings.Trim(r, "|"), " | ")
				if len(cells) != 4 || !regexp.MustCompile(`\*\*-?[0-9.]+`).MatchString(cells[1]) {
					errs = append(errs, fmt.Errorf("%s: table %q: a row that does not parse: %s", file, m[2], r))
				}
			}
			if len(rows) < 3 {
				errs = append(errs, fmt.Errorf("%s: table %q has %d rows", file, m[2], len(rows)))
			}
		}
	}
	return errors.Join(errs...)
}
