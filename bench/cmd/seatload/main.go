// Command seatload measures a running seat against the loopback floor: a
// bare line-echo server (and a bare WebSocket echo server) that does no
// work. It starts both, runs them in turns (A B A B) in one invocation, and
// prints every figure beside its floor with the ratio seat/floor:
//
//	go run ./bench/cmd/seatload                      # every workload
//	go run ./bench/cmd/seatload -workload message -n 200000 -c 8
//
// Stop-and-wait sends one request and waits for its answer; pipelined keeps
// -window requests in flight on each of -c connections. seat also reports
// its idle memory and its 100 Hz control loop's jitter under the pipelined
// load. The behaviors are bench/*.seatml, run with --log-level warn.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/gorilla/websocket"

	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/interpreter/manager"
)

var (
	nFlag      = flag.Int("n", 200000, "requests per pipelined run")
	swFlag     = flag.Int("stopwait", 20000, "requests per stop-and-wait run")
	cFlag      = flag.Int("c", 8, "connections of the pipelined run (at most 8)")
	window     = flag.Int("window", 64, "requests in flight per connection in the pipelined run")
	warmup     = flag.Int("warmup", 5000, "requests before each measured run")
	workloads  = flag.String("workload", "all", "message, lua, transition, or all")
	wsFlag     = flag.Bool("ws", true, "also measure the WebSocket adaptor")
	rounds     = flag.Int("rounds", 2, "rounds of floor then seat")
	seatBin    = flag.String("seat", "", "seat binary (default: go build ./cmd/seat)")
	benchDir   = flag.String("dir", "bench", "directory of the benchmark behaviors")
	cpuprofile = flag.String("seat-cpuprofile", "", "write seat's CPU profile of the last workload here (its first mode)")
	seatEnv    = flag.String("seat-env", "", "extra environment for seat, e.g. \"GOMAXPROCS=3 GOGC=200\"")
	modesFlag  = flag.String("modes", "auto", "how seat runs, measured in turns: plain (no --control), control (--control, no monitor page), "+
		"page (--control with a monitor page open), record (--record); auto: all four for the message workload, plain and control for the others")
	onelineN = flag.Int("oneline", 20000, "requests of the one-line-at-a-time runs (seat as server and as client, CPU per event); 0: none")
	idleFor  = flag.Duration("idle", 5*time.Second, "how long seat's idle CPU is measured before the one-line runs")
	jsonOut  = flag.String("json", "", "also write every figure, each round's, to this file as JSON")
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-serve-echo" {
		serveEcho()
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "-dial-echo" {
		dialEcho(os.Args[2])
		return
	}
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "seatload:", err)
		os.Exit(1)
	}
}

func run() error {
	if *cFlag < 1 || *cFlag > 8 {
		return errors.New("-c must be 1 to 8 (the behaviors have eight adaptors)")
	}
	bin := *seatBin
	if bin == "" {
		dir, err := os.MkdirTemp("", "seatload-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "seat")
		build := exec.Command("go", "build", "-o", bin, "./cmd/seat")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building seat: %w", err)
		}
	}
	echo, err := startEcho()
	if err != nil {
		return err
	}
	defer echo.stop()
	fmt.Printf("seatload: %s, %d CPUs, GOMAXPROCS %d; stop-and-wait %d requests, pipelined %d over %d connections x %d in flight, warm-up %d, %d rounds (floor, seat, floor, seat ...)\n\n",
		runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), *swFlag, *nFlag, *cFlag, *window, *warmup, *rounds)
	list := []string{"message", "lua", "transition"}
	if *workloads != "all" {
		list = strings.Split(*workloads, ",")
	}
	for i, w := range list {
		profile := ""
		if i == len(list)-1 {
			profile = *cpuprofile
		}
		if err := workload(bin, w, echo, profile); err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
	}
	if *wsFlag {
		if err := webWorkload(bin, echo); err != nil {
			return fmt.Errorf("web: %w", err)
		}
	}
	if *onelineN > 0 {
		if err := oneline(bin, echo); err != nil {
			return fmt.Errorf("one line at a time: %w", err)
		}
	}
	if *jsonOut != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(*jsonOut, append(data, '\n'), 0o644)
	}
	return nil
}

// Results is what -json writes: every figure of every round, by workload
// and by how seat ran ("floor" for the floor).
type Results struct {
	Workloads map[string]map[string][]Figures `json:"workloads"`
	// Jitter is the device loop's jitter during the control runs, by
	// workload.
	Jitter  map[string]Jitter  `json:"jitter"`
	Oneline map[string]Oneline `json:"oneline,omitempty"`
	// RecordBytes is the size of the message workload's recording.
	RecordBytes int64 `json:"record_bytes,omitempty"`
}

// Figures are one run's.
type Figures struct {
	P50us     float64 `json:"p50_us"`
	P99us     float64 `json:"p99_us"`
	StopWait  float64 `json:"stopwait_per_s"`
	Pipelined float64 `json:"pipelined_per_s"`
	// PipeCPUus is the serving process's CPU time per event in the
	// pipelined run (its threads' schedstat): steadier than throughput
	// while the load generator shares the cores.
	PipeCPUus  float64 `json:"pipelined_cpu_us"`
	IdleRSSkiB int     `json:"idle_rss_kib,omitempty"`
}

// Jitter is the device loop's, in microseconds.
type Jitter struct {
	Cycles uint64  `json:"cycles"`
	P50us  float64 `json:"p50_us"`
	P99us  float64 `json:"p99_us"`
	MaxUs  float64 `json:"max_us"`
}

// Oneline is a one-line-at-a-time comparison: per round, the floor's
// and seat's CPU per event and throughput, and seat's idle CPU.
type Oneline struct {
	FloorCPUus  []float64 `json:"floor_cpu_us"`
	SeatCPUus   []float64 `json:"seat_cpu_us"`
	FloorPerS   []float64 `json:"floor_per_s"`
	SeatPerS    []float64 `json:"seat_per_s"`
	IdlePercent float64   `json:"idle_percent"`
}

var results = Results{Workloads: map[string]map[string][]Figures{}, Jitter: map[string]Jitter{}, Oneline: map[string]Oneline{}}

func (r result) figures() Figures {
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	return Figures{P50us: us(r.p50), P99us: us(r.p99), StopWait: r.stopWait, Pipelined: r.pipelined, PipeCPUus: us(r.pipeCPU)}
}

func keep(workload, mode string, r result, rss int) {
	if results.Workloads[workload] == nil {
		results.Workloads[workload] = map[string][]Figures{}
	}
	f := r.figures()
	f.IdleRSSkiB = rss
	results.Workloads[workload][mode] = append(results.Workloads[workload][mode], f)
}

// modesOf is how seat runs for a workload.
func modesOf(workload string) []string {
	if *modesFlag != "auto" {
		return strings.Split(*modesFlag, ",")
	}
	if workload == "message" {
		return []string{"plain", "control", "page", "record"}
	}
	return []string{"plain", "control"}
}

// --- the floor ---------------------------------------------------------

type echoProc struct {
	cmd      *exec.Cmd
	tcp, ws  string
	stdin    io.WriteCloser
	rssIdleK int
}

func (e *echoProc) stop() { e.stdin.Close(); e.cmd.Wait() }

func startEcho() (*echoProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-serve-echo")
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e := &echoProc{cmd: cmd, stdin: stdin}
	r := bufio.NewReader(out)
	for e.tcp == "" || e.ws == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("echo server: %w", err)
		}
		kind, addr, _ := strings.Cut(strings.TrimSpace(line), " ")
		if kind == "tcp" {
			e.tcp = addr
		} else {
			e.ws = addr
		}
	}
	time.Sleep(500 * time.Millisecond)
	e.rssIdleK = rssKiB(cmd.Process.Pid)
	return e, nil
}

// serveEcho is the floor: TCP lines and WebSocket frames sent straight back.
func serveEcho() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go echoLines(c)
		}
	}()
	wsln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	go http.Serve(wsln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			kind, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if ws.WriteMessage(kind, data) != nil {
				return
			}
		}
	}))
	fmt.Printf("tcp %s\nws %s\n", ln.Addr(), wsln.Addr())
	io.Copy(io.Discard, os.Stdin) // until seatload exits
}

// echoLines sends every line read from c straight back, a batch read
// together with one write, as seat does, until c ends.
func echoLines(c net.Conn) {
	defer c.Close()
	r, w := bufio.NewReaderSize(c, 32<<10), bufio.NewWriterSize(c, 32<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		w.Write(line)
		if r.Buffered() == 0 && w.Flush() != nil {
			return
		}
	}
}

// --- seat ----------------------------------------------------------------

type seatProc struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has ended
	ports   []string
	control string
	rssK    int
	record  string          // the recording, in record mode
	page    *websocket.Conn // the monitor page, in page mode
	frames  atomic.Int64    // frames the page received
}

func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

var adaptorName = regexp.MustCompile(`<adaptor name="([^"]+)"`)

// startSeat runs seat on a bench behavior in a mode (modesOf). With
// --control its adaptors are on ports seat picks itself (port="0"; ports
// chosen here and handed over could be taken in between by a client
// connection's local port) and learnt from the control API; without it,
// free ports are handed over with --set. Extra arguments go before the
// file. A port chosen here can still be taken by another program before
// seat binds it (the control port in every mode, the adaptors' without
// --control): seat then exits at once, and is started again on fresh
// ports, up to five times.
func startSeat(bin, file, mode, cpuprofile string, extra ...string) (*seatProc, error) {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var s *seatProc
		if s, err = startSeatOnce(bin, file, mode, cpuprofile, extra...); !errors.Is(err, errExitedEarly) {
			return s, err
		}
		fmt.Fprintf(os.Stderr, "seatload: seat (%s) exited while starting; trying again on fresh ports\n", mode)
	}
	return nil, err
}

var errExitedEarly = errors.New("seat exited while starting")

func startSeatOnce(bin, file, mode, cpuprofile string, extra ...string) (*seatProc, error) {
	path := filepath.Join(*benchDir, file)
	s := &seatProc{}
	args := []string{"run", "--log-level", "warn", "--device-loop", "on"}
	args = append(args, extra...)
	control := mode == "control" || mode == "page"
	if control {
		s.control = "127.0.0.1:" + freePort()
		args = append(args, "--control", s.control)
	} else if mode != "client" {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for _, m := range adaptorName.FindAllSubmatch(src, -1) {
			p := freePort()
			s.ports = append(s.ports, p)
			args = append(args, "--set", string(m[1])+".port="+p)
		}
	}
	if mode == "record" {
		f, err := os.CreateTemp("", "seatload-*.jsonl")
		if err != nil {
			return nil, err
		}
		f.Close()
		s.record = f.Name()
		args = append(args, "--record", s.record)
	}
	if cpuprofile != "" {
		args = append(args, "--cpuprofile", cpuprofile)
	}
	s.cmd = exec.Command(bin, append(args, path)...)
	s.cmd.Stderr = os.Stderr
	if *seatEnv != "" {
		s.cmd.Env = append(os.Environ(), strings.Fields(*seatEnv)...)
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.exited = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-s.exited:
			s.stop()
			return nil, fmt.Errorf("seat (%s): %w", mode, errExitedEarly)
		default:
		}
		if control {
			var list []manager.Info
			if err := (&manager.Client{Addr: s.control}).Do(http.MethodGet, "/behaviors", nil, &list); err == nil && len(list) == 1 && len(list[0].Adaptors) > 0 {
				for _, a := range list[0].Adaptors {
					_, p, _ := net.SplitHostPort(a.Addr)
					s.ports = append(s.ports, p)
				}
				break
			}
		} else if mode == "client" || listening(s.ports) {
			break
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("seat (%s) did not listen on its adaptors' ports", mode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if mode == "page" {
		h := http.Header{"Origin": {"http://" + s.control}}
		ws, _, err := websocket.DefaultDialer.Dial("ws://"+s.control+"/monitor/ws", h)
		if err != nil {
			s.stop()
			return nil, fmt.Errorf("opening the monitor page: %w", err)
		}
		s.page = ws
		go func() { // a page that keeps up, as a browser would
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
				s.frames.Add(1)
			}
		}()
	}
	time.Sleep(time.Second) // settle, then the idle footprint
	s.rssK = rssKiB(s.cmd.Process.Pid)
	return s, nil
}

// listening reports whether every port accepts a connection.
func listening(ports []string) bool {
	for _, p := range ports {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second)
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

func (s *seatProc) stop() {
	if s.page != nil {
		s.page.Close()
	}
	if s.record != "" {
		defer os.Remove(s.record)
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *seatProc) engine() (manager.EngineStats, error) {
	var st manager.EngineStats
	resp, err := http.Get("http://" + s.control + "/engine")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

func rssKiB(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			k, _ := strconv.Atoi(f[1])
			return k
		}
	}
	return 0
}

// --- clients -------------------------------------------------------------

// conn is one client connection speaking lines or frames.
type conn interface {
	send(n int) error // queue n requests and flush
	recv() error      // read one answer
	close()
}

type tcpConn struct {
	c    net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	want []byte // every answer, so that a wrong one is never counted
}

// dialTCP connects to a line server whose answer to "ping" is want.
func dialTCP(addr, want string) (conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &tcpConn{c: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 64<<10), want: []byte(want + "\n")}, nil
}

func (t *tcpConn) send(n int) error {
	for range n {
		t.w.WriteString("ping\n")
	}
	return t.w.Flush()
}

func (t *tcpConn) recv() error {
	line, err := t.r.ReadSlice('\n')
	if err == nil && !bytes.Equal(line, t.want) {
		err = fmt.Errorf("%s answered %q, want %q", t.c.RemoteAddr(), line, t.want)
	}
	return err
}

func (t *tcpConn) close() { t.c.Close() }

type wsConn struct {
	ws   *websocket.Conn
	mu   sync.Mutex
	msg  []byte
	want []byte // in every answer
}

var wsRequest = []byte(`{"type":"event","text":"ping"}`)

// dialWS connects to a WebSocket server whose answers to an event frame
// contain want, skipping its first skip frames.
func dialWS(url string, skip int, want string) (conn, error) {
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		return nil, err
	}
	for range skip { // seat's state and panel frames on connect
		if _, _, err := ws.ReadMessage(); err != nil {
			return nil, err
		}
	}
	return &wsConn{ws: ws, want: []byte(want)}, nil
}

func (w *wsConn) send(n int) error {
	for range n {
		if err := w.ws.WriteMessage(websocket.TextMessage, wsRequest); err != nil {
			return err
		}
	}
	return nil
}

func (w *wsConn) recv() error {
	_, msg, err := w.ws.ReadMessage()
	if err == nil && !bytes.Contains(msg, w.want) {
		err = fmt.Errorf("%s answered %q, want a frame with %q", w.ws.RemoteAddr(), msg, w.want)
	}
	return err
}

func (w *wsConn) close() { w.ws.Close() }

// --- measurements ----------------------------------------------------------

type result struct {
	p50, p90, p99, max time.Duration
	stopWait           float64       // requests/s, one connection
	pipelined          float64       // requests/s, c connections
	pipeCPU            time.Duration // the server's CPU per request, pipelined
}

func stopAndWait(c conn, n int) (result, error) {
	for range *warmup {
		if err := c.send(1); err != nil {
			return result{}, err
		}
		if err := c.recv(); err != nil {
			return result{}, err
		}
	}
	lat := make([]time.Duration, n)
	start := time.Now()
	for i := range n {
		t0 := time.Now()
		if err := c.send(1); err != nil {
			return result{}, err
		}
		if err := c.recv(); err != nil {
			return result{}, err
		}
		lat[i] = time.Since(t0)
	}
	total := time.Since(start)
	slices.Sort(lat)
	q := func(f float64) time.Duration { return lat[min(int(f*float64(n)), n-1)] }
	return result{p50: q(0.5), p90: q(0.9), p99: q(0.99), max: lat[n-1], stopWait: float64(n) / total.Seconds()}, nil
}

// pipelined runs n requests over the connections, window in flight each.
func pipelined(conns []conn, n int) (float64, error) {
	per := n / len(conns)
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(conns))
	start := time.Now()
	for _, c := range conns {
		sem := make(chan struct{}, *window)
		wg.Add(2)
		go func() { // writer: keep the window full, a batch per write
			defer wg.Done()
			for sent := 0; sent < per; {
				k := 0
				sem <- struct{}{}
				k++
			fill:
				for sent+k < per {
					select {
					case sem <- struct{}{}:
						k++
					default:
						break fill
					}
				}
				if err := c.send(k); err != nil {
					errs <- err
					return
				}
				sent += k
			}
		}()
		go func() {
			defer wg.Done()
			for range per {
				if err := c.recv(); err != nil {
					errs <- err
					return
				}
				<-sem
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(per*len(conns)) / elapsed.Seconds(), nil
}

// measure runs the stop-and-wait and pipelined runs against the server
// process pid, whose CPU time it reads around the pipelined run.
func measure(pid int, dial func(i int) (conn, error), n int) (result, error) {
	one, err := dial(0)
	if err != nil {
		return result{}, err
	}
	r, err := stopAndWait(one, max(*swFlag*n / *nFlag, 100))
	one.close()
	if err != nil {
		return r, err
	}
	var conns []conn
	for i := range *cFlag {
		c, err := dial(i)
		if err != nil {
			return r, err
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	if _, err := pipelined(conns, *warmup*len(conns)); err != nil {
		return r, err
	}
	before, cerr := cpuTime(pid)
	r.pipelined, err = pipelined(conns, n)
	if after, aerr := cpuTime(pid); err == nil && cerr == nil && aerr == nil {
		r.pipeCPU = (after - before) / time.Duration(n)
	}
	return r, err
}

// --- reports ---------------------------------------------------------------

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// report prints a table: the floor, then seat in each mode with its
// ratio to the floor, each the median over the rounds.
func report(title string, floor []result, modes []string, seat map[string][]result, extra []string) {
	fmt.Printf("%s\n", title)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\tfloor\t"
	for _, m := range modes {
		head += "seat " + m + "\t/floor\t"
	}
	fmt.Fprintln(tw, head)
	row := func(name string, get func(result) float64, unit string) {
		med := func(rs []result) float64 {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, get(r))
			}
			return median(xs)
		}
		format := func(v float64) string {
			if unit == "µs" {
				if v < 10 {
					return fmt.Sprintf("%.2f µs", v)
				}
				return fmt.Sprintf("%.1f µs", v)
			}
			return fmt.Sprintf("%.0f/s", v)
		}
		mf := med(floor)
		line := name + "\t" + format(mf) + "\t"
		for _, m := range modes {
			ms := med(seat[m])
			line += fmt.Sprintf("%s\t%.2f\t", format(ms), ms/mf)
		}
		fmt.Fprintln(tw, line)
	}
	row("stop-and-wait p50", func(r result) float64 { return us(r.p50) }, "µs")
	row("stop-and-wait p90", func(r result) float64 { return us(r.p90) }, "µs")
	row("stop-and-wait p99", func(r result) float64 { return us(r.p99) }, "µs")
	row("stop-and-wait max", func(r result) float64 { return us(r.max) }, "µs")
	row("stop-and-wait throughput", func(r result) float64 { return r.stopWait }, "/s")
	row(fmt.Sprintf("pipelined throughput, %d conns", *cFlag), func(r result) float64 { return r.pipelined }, "/s")
	row("pipelined, server CPU per request", func(r result) float64 { return us(r.pipeCPU) }, "µs")
	tw.Flush()
	for _, e := range extra {
		fmt.Println("  " + e)
	}
	fmt.Println()
}

func workload(bin, name string, echo *echoProc, cpuprofile string) error {
	modes := modesOf(name)
	procs := map[string]*seatProc{}
	for i, mode := range modes {
		profile := ""
		if i == 0 {
			profile = cpuprofile
		}
		p, err := startSeat(bin, name+".seatml", mode, profile)
		if err != nil {
			return err
		}
		defer p.stop()
		procs[mode] = p
	}
	var floor []result
	seatRes := map[string][]result{}
	var jitter []uint64
	for range *rounds {
		f, err := measure(echo.cmd.Process.Pid, func(int) (conn, error) { return dialTCP(echo.tcp, "ping") }, *nFlag)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		floor = append(floor, f)
		keep(name, "floor", f, echo.rssIdleK)
		for _, mode := range modes {
			p := procs[mode]
			var before manager.EngineStats
			if mode == "control" {
				if before, err = p.engine(); err != nil {
					return err
				}
			}
			s, err := measure(p.cmd.Process.Pid, func(i int) (conn, error) { return dialTCP("127.0.0.1:"+p.ports[i], "pong") }, *nFlag)
			if err != nil {
				return fmt.Errorf("seat (%s): %w", mode, err)
			}
			seatRes[mode] = append(seatRes[mode], s)
			keep(name, mode, s, p.rssK)
			if mode != "control" {
				continue
			}
			after, err := p.engine()
			if err != nil {
				return err
			}
			if jitter == nil {
				jitter = make([]uint64, len(after.JitterHistogram))
			}
			for i := range after.JitterHistogram {
				jitter[i] += after.JitterHistogram[i] - before.JitterHistogram[i]
			}
		}
	}
	var extra []string
	for _, mode := range modes {
		extra = append(extra, fmt.Sprintf("idle RSS: seat %s %.1f MB, floor %.1f MB", mode, float64(procs[mode].rssK)/1024, float64(echo.rssIdleK)/1024))
	}
	if jitter != nil {
		var cycles uint64
		for _, c := range jitter {
			cycles += c
		}
		j := Jitter{Cycles: cycles, P50us: us(hal.Quantile(jitter, 0.5)), P99us: us(hal.Quantile(jitter, 0.99)), MaxUs: us(hal.Quantile(jitter, 1))}
		results.Jitter[name] = j
		extra = append(extra, fmt.Sprintf("seat's 100 Hz device loop during the control runs (%d cycles): jitter p50 %v, p99 %v, max %v",
			cycles, hal.Quantile(jitter, 0.5), hal.Quantile(jitter, 0.99), hal.Quantile(jitter, 1)))
	}
	if p := procs["page"]; p != nil {
		extra = append(extra, fmt.Sprintf("the monitor page received %d frames", p.frames.Load()))
	}
	if p := procs["record"]; p != nil {
		p.stop() // the recording is complete once seat stops
		if st, err := os.Stat(p.record); err == nil {
			results.RecordBytes = st.Size()
			extra = append(extra, fmt.Sprintf("the recording: %.1f MB", float64(st.Size())/(1<<20)))
		}
	}
	report(fmt.Sprintf("workload %q over TCP (%s)", name, name+".seatml"), floor, modes, seatRes, extra)
	return nil
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

func webWorkload(bin string, echo *echoProc) error {
	seat, err := startSeat(bin, "web.seatml", "plain", "")
	if err != nil {
		return err
	}
	defer seat.stop()
	var floor []result
	seatRes := map[string][]result{}
	for range *rounds {
		f, err := measure(echo.cmd.Process.Pid, func(int) (conn, error) { return dialWS("ws://"+echo.ws+"/", 0, string(wsRequest)) }, *nFlag/5)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		s, err := measure(seat.cmd.Process.Pid, func(int) (conn, error) { return dialWS("ws://127.0.0.1:"+seat.ports[0]+"/ws", 2, `"pong"`) }, *nFlag/5)
		if err != nil {
			return fmt.Errorf("seat: %w", err)
		}
		floor, seatRes["plain"] = append(floor, f), append(seatRes["plain"], s)
		keep("web", "floor", f, 0)
		keep("web", "plain", s, seat.rssK)
	}
	report("WebSocket: a Lua reply to each event frame (web.seatml), n/5 requests", floor, []string{"plain"}, seatRes,
		[]string{fmt.Sprintf("idle RSS: seat %.1f MB", float64(seat.rssK)/1024)})
	return nil
}
