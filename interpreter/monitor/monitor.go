// Package monitor serves the live monitor: a page that shows every
// behavior of the process as its graph with the current state
// highlighted, the last events, messages and rules fired, the timers
// armed, the adaptors' counters, and what its voices said and its
// recognizers heard, updated over a WebSocket. It is
// mounted on the control API's address under /monitor/ (seat run
// --control). The graph is laid out in the page by Graphviz compiled to
// WebAssembly (Viz.js), served from the binary: no network at run time.
// docs/tools.md describes it.
package monitor

import (
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/graph"
	"github.com/seatml/seat/interpreter/manager"
	"github.com/seatml/seat/interpreter/record"
	"github.com/seatml/seat/interpreter/replay"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/seattest"
)

//go:embed assets
var assets embed.FS

// Sizes and periods.
const (
	// RecentLen is how many lines of each behavior a page gets when it
	// opens, and the most it gets of each behavior per frame: a behavior
	// busier than that is summarized (its last RecentLen lines, how many
	// were skipped, and exact counts).
	RecentLen = 200
	// clientBuffer is how many frames a page may fall behind; a page
	// further behind is sent everything again from the recent lines
	// (hello) instead of the frames it missed.
	clientBuffer = 64
	// pumpEvery is how often pages get what the behaviors did, and
	// statusEvery the states, timers and counters.
	pumpEvery   = 100 * time.Millisecond
	statusEvery = 500 * time.Millisecond
	writeWait   = 10 * time.Second
)

// Monitor collects what the behaviors do and serves it to pages. It
// watches only while a page is open: with none open, a machine builds no
// records for it (interpreter.Watcher). A machine hands its records to its
// behavior's observer, under a lock only the monitor's pump goroutine
// also takes, and the pump formats them, keeps the last RecentLen of each
// behavior and sends them to every page, a frame per tick.
type Monitor struct {
	log   *zap.Logger
	start time.Time
	pages atomic.Int32  // open pages; machines report while > 0
	every time.Duration // pumpEvery; tests shorten it
	// writeWait bounds every write to a page, the first one included: a
	// page that does not read is cut off after it (tests shorten it).
	writeWait time.Duration

	mu      sync.Mutex // never taken by a machine, never held while calling out
	order   []string
	behs    map[string]*behavior
	sources map[string]bool // the files the source view may show
	clients map[*client]struct{}
	pumping chan struct{} // closed to stop the pump
	status  []byte        // the last status frame
	// replaying is held while a timeline is made: one at a time.
	replaying sync.Mutex
}

type behavior struct {
	Name   string        `json:"name"`
	File   string        `json:"file"`
	DOT    string        `json:"dot"`
	Recent []record.Line `json:"recent"`
	// Kinds are its adaptors' kinds, by name: the page shows what asr
	// adaptors heard and tts adaptors said.
	Kinds  map[string]string `json:"kinds"`
	next   int               // where the ring's next line goes, once full
	obs    *observer
	counts map[string]*Count // counted while pages were open
}

// frame is what a page receives.
type frame struct {
	Type      string         `json:"type"` // hello, behavior, lines, status
	Behaviors []*behavior    `json:"behaviors,omitempty"`
	Behavior  *behavior      `json:"behavior,omitempty"`
	Lines     []record.Line  `json:"lines,omitempty"`
	Now       *time.Time     `json:"now,omitempty"`
	Status    []manager.Info `json:"status,omitempty"`
	// Skipped is, by behavior, how many lines were not sent because more
	// than RecentLen came in one tick.
	Skipped map[string]int64 `json:"skipped,omitempty"`
	// Counts are events in and messages out by behavior and adaptor,
	// counted while a page was open.
	Counts map[string]map[string]*Count `json:"counts,omitempty"`
	Start  *time.Time                   `json:"start,omitempty"`
}

// Count is how many events an adaptor brought and messages it was given.
type Count struct {
	In  int64 `json:"in"`
	Out int64 `json:"out"`
}

type client struct {
	ch     chan []byte
	behind atomic.Bool // frames were dropped: send everything again
}

// New returns a monitor; times in it count from now.
func New(log *zap.Logger) *Monitor {
	return &Monitor{log: log, start: time.Now(), every: pumpEvery, writeWait: writeWait, behs: map[string]*behavior{}, sources: map[string]bool{}, clients: map[*client]struct{}{}}
}

// Observe gives a behavior's machine its observer (manager.Options.Observe):
// its graph is drawn, and what it does while a page is open is kept and
// sent.
func (m *Monitor) Observe(p *seatml.Program) interpreter.Observer {
	var dot strings.Builder
	graph.New(p).DOT(&dot)
	o := &observer{m: m, counts: map[string]*Count{}}
	b := &behavior{Name: p.Name, File: p.File, DOT: dot.String(), Recent: make([]record.Line, 0, RecentLen), obs: o, counts: map[string]*Count{},
		Kinds: map[string]string{}}
	for _, d := range p.Adaptors {
		b.Kinds[d.Name] = d.Type
	}
	m.mu.Lock()
	old, ok := m.behs[p.Name]
	if !ok {
		m.order = append(m.order, p.Name)
	} else {
		b.counts = old.counts // a reload draws the new file and keeps counting
	}
	m.behs[p.Name] = b
	for _, f := range p.Sources {
		m.sources[f] = true
	}
	data := encode(frame{Type: "behavior", Behavior: b})
	m.broadcastLocked(data)
	m.mu.Unlock()
	return o
}

// observer is one machine's: it keeps the last RecentLen records and the
// counts since the pump last took them.
type observer struct {
	m  *Monitor
	mu sync.Mutex // the machine and the pump
	// ring holds the last records; n is how many came since the last take.
	ring   [RecentLen]interpreter.Record
	n      int64
	counts map[string]*Count
	// lastSrc's count is last: the one the next record most likely needs.
	lastSrc string
	last    *Count
	// used counts the records kept in this window while no page is open;
	// window is the window's number, calls the Watching calls since the
	// budget was spent.
	used   atomic.Int64
	window atomic.Int64
	calls  atomic.Uint32
}

// While no page is open, the monitor keeps at most historyBudget records
// of a behavior per historyWindow: a conversation's whole history, and a
// sample of a behavior that handles thousands of events a second, whose
// records would cost it more than the work itself (the pipelined figures
// of bench/README.md).
const (
	historyBudget = 200
	historyWindow = 100 * time.Millisecond
)

// Watching reports whether the machine should make records for the
// monitor (interpreter.Watcher): always while a page is open, else while
// the history's budget for this window lasts. The clock is read on one
// call in 64 once the budget is spent.
func (o *observer) Watching() bool {
	if o.m.pages.Load() > 0 || o.used.Load() < historyBudget {
		return true
	}
	if o.calls.Add(1)&63 == 0 {
		if w := time.Now().UnixNano() / int64(historyWindow); o.window.Swap(w) != w {
			o.used.Store(0)
			return true
		}
	}
	return false
}

// Observe keeps r for the pump: a copy and a count, no formatting.
func (o *observer) Observe(r interpreter.Record) {
	if r.Kind.Detail() { // a trace's, not the page's
		return
	}
	if o.m.pages.Load() == 0 {
		o.used.Add(1)
	}
	o.mu.Lock()
	o.ring[o.n%RecentLen] = r
	o.n++
	if r.Kind == interpreter.RecIn || r.Kind == interpreter.RecOut {
		c := o.last
		if r.Source != o.lastSrc || c == nil { // most records are one adaptor's, in and out
			c = o.counts[r.Source]
			if c == nil {
				c = &Count{}
				o.counts[r.Source] = c
			}
			o.lastSrc, o.last = r.Source, c
		}
		if r.Kind == interpreter.RecIn {
			c.In++
		} else {
			c.Out++
		}
	}
	o.mu.Unlock()
}

// take appends the records since the last take to dst, at most the last
// RecentLen in order, and adds the counts to into; it returns how many
// records were left out.
func (o *observer) take(dst []interpreter.Record, into map[string]*Count) ([]interpreter.Record, int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := min(o.n, RecentLen)
	for i := o.n - n; i < o.n; i++ {
		dst = append(dst, o.ring[i%RecentLen])
	}
	skipped := o.n - n
	o.n = 0
	clear(o.ring[:])
	for src, c := range o.counts {
		t := into[src]
		if t == nil {
			t = &Count{}
			into[src] = t
		}
		t.In += c.In
		t.Out += c.Out
		*c = Count{}
	}
	return dst, skipped
}

// pump runs while pages are open: every pumpEvery it takes what the
// behaviors did, keeps it and sends it as one frame to every page; every
// statusEvery it sends the states, timers and counters.
func (m *Monitor) pump(mg *manager.Manager, stop <-chan struct{}) {
	tick := time.NewTicker(m.every)
	defer tick.Stop()
	var recs []interpreter.Record
	lastStatus := time.Time{}
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		m.mu.Lock()
		f := frame{Type: "lines"}
		for _, name := range m.order {
			b := m.behs[name]
			var skipped int64
			recs, skipped = b.obs.take(recs[:0], b.counts)
			for _, r := range recs {
				l := record.LineOf(b.Name, m.start, r)
				b.add(l)
				f.Lines = append(f.Lines, l)
			}
			clear(recs)
			if skipped > 0 {
				if f.Skipped == nil {
					f.Skipped = map[string]int64{}
				}
				f.Skipped[name] = skipped
			}
		}
		if len(f.Lines) > 0 {
			m.broadcastLocked(encode(f))
		}
		m.mu.Unlock()
		if now := time.Now(); now.Sub(lastStatus) >= statusEvery {
			lastStatus = now
			m.sendStatus(mg, now)
		}
	}
}

// sendStatus sends the states, timers and counters to every page. The
// manager is asked without holding m.mu: the manager may wait for a
// machine, and a machine never waits for the monitor.
func (m *Monitor) sendStatus(mg *manager.Manager, now time.Time) {
	list := mg.List()
	m.mu.Lock()
	counts := map[string]map[string]*Count{}
	for name, b := range m.behs {
		counts[name] = b.counts
	}
	data := encode(frame{Type: "status", Now: &now, Status: list, Counts: counts})
	m.status = data
	m.broadcastLocked(data)
	m.mu.Unlock()
}

// add keeps a line in the behavior's ring. m.mu is held.
func (b *behavior) add(l record.Line) {
	if len(b.Recent) < RecentLen {
		b.Recent = append(b.Recent, l)
		return
	}
	b.Recent[b.next] = l
	b.next = (b.next + 1) % RecentLen
}

func encode(f frame) []byte {
	data, err := json.Marshal(f)
	if err != nil {
		panic(err) // frames are plain data
	}
	return data
}

// broadcastLocked queues a frame for every page; a page too far behind
// is marked to be sent everything again instead. m.mu is held.
func (m *Monitor) broadcastLocked(data []byte) {
	for c := range m.clients {
		select {
		case c.ch <- data:
		default:
			c.behind.Store(true)
		}
	}
}

// ordered returns a copy of a behavior with its ring in order. m.mu is
// held.
func (b *behavior) ordered() *behavior {
	c := *b
	c.Recent = append(append([]record.Line(nil), b.Recent[b.next:]...), b.Recent[:b.next]...)
	return &c
}

// hello is what a page gets first, and again after falling behind:
// every behavior with its recent lines, and the last status.
func (m *Monitor) hello() (hello, status []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := frame{Type: "hello", Start: &m.start}
	for _, name := range m.order {
		f.Behaviors = append(f.Behaviors, m.behs[name].ordered())
	}
	return encode(f), m.status
}

// join adds a page, starting the pump and the machines' reports with the
// first.
func (m *Monitor) join(c *client, mg *manager.Manager) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clients[c] = struct{}{}
	if m.pages.Add(1) == 1 {
		// The last page's pump may still be finishing a tick: two for a
		// moment take turns at the same observers, which is harmless.
		m.pumping = make(chan struct{})
		go m.pump(mg, m.pumping)
	}
}

// leave removes a page, stopping the pump and the reports with the last.
func (m *Monitor) leave(c *client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.clients, c)
	if m.pages.Add(-1) == 0 {
		close(m.pumping)
	}
}

// Handler serves the monitor under /monitor/: the page, its scripts, the
// WebSocket and the source view. Like the control API it answers only
// requests whose Host names this machine when it listens on loopback, and
// a page of another origin is refused.
func (m *Monitor) Handler(mg *manager.Manager) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /monitor/{$}", func(w http.ResponseWriter, r *http.Request) { m.asset(w, "index.html") })
	mux.HandleFunc("GET /monitor/{file}", func(w http.ResponseWriter, r *http.Request) {
		switch f := r.PathValue("file"); f {
		case "monitor.js", "debugger.js", "timeline.js", "monitor.css", "viz-global.js":
			m.asset(w, f)
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("GET /monitor/ws", func(w http.ResponseWriter, r *http.Request) { m.serveWS(w, r, mg) })
	mux.HandleFunc("GET /monitor/source", m.serveSource)
	// The debugger (docs/tools.md, "The debugger"), for the page's own requests:
	// guard refuses another origin's, and an operation must be sent as
	// JSON, which a form of another page cannot do without an Origin.
	show, op := manager.DebugHandlers(mg)
	mux.HandleFunc("GET /monitor/debug/{name}", show)
	mux.HandleFunc("POST /monitor/debug/{name}/{op}", func(w http.ResponseWriter, r *http.Request) {
		if mt := r.Header.Get("Content-Type"); !strings.HasPrefix(mt, "application/json") {
			http.Error(w, "an operation is sent as application/json", http.StatusUnsupportedMediaType)
			return
		}
		op(w, r)
	})
	mux.HandleFunc("POST /monitor/timeline", m.serveTimeline)
	return guard(mux)
}

func (m *Monitor) asset(w http.ResponseWriter, name string) {
	data, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	types := map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	w.Header().Set("Content-Type", types[name[strings.LastIndexByte(name, '.'):]])
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(data)
}

// guard refuses a foreign Host on loopback (DNS rebinding) and requests
// from pages of other origins.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			host, _, _ := net.SplitHostPort(local.String())
			if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() && !manager.LoopbackHost(r.Host) {
				http.Error(w, "unexpected Host header", http.StatusForbidden)
				return
			}
		}
		if !sameOrigin(r) {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin accepts requests without an Origin (a page load) and those
// from the monitor's own page.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == r.Host
}

var upgrader = websocket.Upgrader{CheckOrigin: sameOrigin}

func (m *Monitor) serveWS(w http.ResponseWriter, r *http.Request, mg *manager.Manager) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer conn.Close()
	c := &client{ch: make(chan []byte, clientBuffer)}
	hello, _ := m.hello()
	m.join(c, mg)
	defer m.leave(c)
	send := func(data []byte) bool {
		conn.SetWriteDeadline(time.Now().Add(m.writeWait))
		return conn.WriteMessage(websocket.TextMessage, data) == nil
	}
	if !send(hello) {
		return
	}
	closed := make(chan struct{})
	go func() { // the page sends nothing; reading notices that it left
		defer close(closed)
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	go m.sendStatus(mg, time.Now()) // the first status at once
	for {
		select {
		case <-closed:
			return
		case data := <-c.ch:
			if !send(data) {
				return
			}
		}
		if c.behind.Swap(false) {
			// Too far behind: what is queued is stale; everything again.
			for len(c.ch) > 0 {
				<-c.ch
			}
			hello, status := m.hello()
			m.log.Debug("monitor page fell behind; sent the recent lines again", zap.String("peer", r.RemoteAddr))
			if !send(hello) || (status != nil && !send(status)) {
				return
			}
		}
	}
}

// Secrets in a behavior file: a password attribute's value, and the
// password of a URL's user information (tcp://alice:secret@host).
var (
	passwordAttr = regexp.MustCompile(`(password\s*=\s*)("[^"]*"|'[^']*')`)
	urlPassword  = regexp.MustCompile(`(://[^:/@\s"']*:)[^@/\s"']*@`)
)

// redact hides the secrets of a line of a behavior file.
func redact(line string) string {
	line = passwordAttr.ReplaceAllString(line, `${1}"xxxxx"`)
	return urlPassword.ReplaceAllString(line, "${1}xxxxx@")
}

// serveSource shows a behavior file with numbered lines, #L49 marked: the
// links of the rules fired. Only the files of loaded behaviors are shown.
func (m *Monitor) serveSource(w http.ResponseWriter, r *http.Request) {
	file := r.URL.Query().Get("file")
	m.mu.Lock()
	ok := m.sources[file]
	m.mu.Unlock()
	if !ok {
		http.Error(w, "not a file of a loaded behavior", http.StatusNotFound)
		return
	}
	data, err := os.ReadFile(file)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><meta charset="utf-8"><title>%s</title><link rel="stylesheet" href="monitor.css"><body class="source"><h1>%s</h1><pre>`,
		html.EscapeString(file), html.EscapeString(file))
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		fmt.Fprintf(&b, `<span id="L%d"><a href="#L%d">%5d</a>  %s</span>`+"\n", i+1, i+1, i+1, html.EscapeString(redact(line)))
	}
	b.WriteString("</pre></body>")
	w.Write([]byte(b.String()))
}

// Timelines: the page sends a recording (seat run --record), the monitor
// replays it on a virtual clock against the recorded behavior, a file of
// a loaded behavior, and answers what the behavior was like after each
// step (docs/tools.md, "Time travel").
const (
	maxRecording = 32 << 20
	maxFrames    = 5000
)

// Timeline is the answer to POST /monitor/timeline.
type Timeline struct {
	Recording string `json:"recording"`
	Behavior  string `json:"behavior"` // its file
	Name      string `json:"name"`
	DOT       string `json:"dot"`
	// Frames are the start and each step, at most maxFrames; Truncated
	// says there were more.
	Frames    []seattest.Frame `json:"frames"`
	Truncated bool             `json:"truncated,omitempty"`
	// Diverged is the replay's report when the behavior did not do what
	// was recorded (the last frame is where).
	Diverged string `json:"diverged,omitempty"`
	Warning  string `json:"warning,omitempty"`
}

func (m *Monitor) serveTimeline(w http.ResponseWriter, r *http.Request) {
	if mt := r.Header.Get("Content-Type"); !strings.HasPrefix(mt, "application/x-ndjson") {
		http.Error(w, "a recording is sent as application/x-ndjson", http.StatusUnsupportedMediaType)
		return
	}
	if !m.replaying.TryLock() {
		http.Error(w, "a timeline is being made; try again when it is done", http.StatusServiceUnavailable)
		return
	}
	defer m.replaying.Unlock()
	name := r.URL.Query().Get("file")
	if name == "" {
		name = "recording.jsonl"
	}
	lines, warning, err := record.Read(name, http.MaxBytesReader(w, r.Body, maxRecording))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	tl := Timeline{Recording: name, Warning: warning}
	opts := replay.Options{Name: r.URL.Query().Get("name"), Allowed: m.loaded, Frame: func(f seattest.Frame) bool {
		if len(tl.Frames) == maxFrames {
			tl.Truncated = true
			return false
		}
		tl.Frames = append(tl.Frames, f)
		return true
	}}
	res, err := replay.RunLines(name, lines, warning, opts)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err)
		return
	}
	tl.Behavior, tl.Name = res.Behavior, res.Program.Name
	var dot strings.Builder
	graph.New(res.Program).DOT(&dot)
	tl.DOT = dot.String()
	if res.Diverged() {
		var b strings.Builder
		res.Report(&b)
		tl.Diverged = b.String()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(tl)
}

// loaded reports whether file is a file of a loaded behavior: the only
// files a timeline runs.
func (m *Monitor) loaded(file string) bool {
	abs, err := filepath.Abs(file)
	if err != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for f := range m.sources {
		if a, err := filepath.Abs(f); err == nil && a == abs {
			return true
		}
	}
	return false
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"message": err.Error()})
}
