// Package monitor serves the live monitor: a page that shows every
// behavior of the process as its graph with the current state
// highlighted, the last events, messages and rules fired, the timers
// armed and the adaptors' counters, updated over a WebSocket. It is
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
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/graph"
	"github.com/seatml/seat/interpreter/manager"
	"github.com/seatml/seat/interpreter/record"
)

//go:embed assets
var assets embed.FS

// Sizes and periods.
const (
	// RecentLen is how many lines of each behavior a page gets when it
	// opens.
	RecentLen = 200
	// clientBuffer is how many frames a page may fall behind before it is
	// cut off (it reconnects and starts again from the recent lines).
	clientBuffer = 4096
	// statusEvery is how often pages get the states, timers and counters.
	statusEvery = 500 * time.Millisecond
	writeWait   = 10 * time.Second
)

// Monitor collects what the behaviors do and serves it to pages.
type Monitor struct {
	log   *zap.Logger
	start time.Time

	mu      sync.Mutex
	order   []string
	behs    map[string]*behavior
	sources map[string]bool // the files the source view may show
	clients map[*client]struct{}
	counts  map[string]map[string]*Count
}

type behavior struct {
	Name   string        `json:"name"`
	File   string        `json:"file"`
	DOT    string        `json:"dot"`
	Recent []record.Line `json:"recent"`
	next   int           // where the ring's next line goes, once full
}

// frame is what a page receives.
type frame struct {
	Type      string         `json:"type"` // hello, behavior, line, status
	Behaviors []*behavior    `json:"behaviors,omitempty"`
	Behavior  *behavior      `json:"behavior,omitempty"`
	Line      *record.Line   `json:"line,omitempty"`
	Now       *time.Time     `json:"now,omitempty"`
	Status    []manager.Info `json:"status,omitempty"`
	// Counts are events in and messages out by behavior and adaptor.
	Counts map[string]map[string]*Count `json:"counts,omitempty"`
	Start  *time.Time                   `json:"start,omitempty"`
}

// Count is how many events an adaptor brought and messages it was given.
type Count struct {
	In  int64 `json:"in"`
	Out int64 `json:"out"`
}

type client struct {
	ch   chan []byte
	gone bool
}

// New returns a monitor; times in it count from now.
func New(log *zap.Logger) *Monitor {
	return &Monitor{log: log, start: time.Now(), behs: map[string]*behavior{}, sources: map[string]bool{}, clients: map[*client]struct{}{},
		counts: map[string]map[string]*Count{}}
}

// Observe gives a behavior's machine its observer (manager.Options.Observe):
// its graph is drawn, and what it does from now on is kept and sent.
func (m *Monitor) Observe(p *interpreter.Program) interpreter.Observer {
	var dot strings.Builder
	graph.New(p).DOT(&dot)
	b := &behavior{Name: p.Name, File: p.File, DOT: dot.String(), Recent: make([]record.Line, 0, RecentLen)}
	m.mu.Lock()
	if _, ok := m.behs[p.Name]; !ok {
		m.order = append(m.order, p.Name)
	}
	m.behs[p.Name] = b // a reload draws the new file
	if m.counts[p.Name] == nil {
		m.counts[p.Name] = map[string]*Count{}
	}
	for _, f := range p.Sources {
		m.sources[f] = true
	}
	m.broadcast(frame{Type: "behavior", Behavior: b})
	m.mu.Unlock()
	return &observer{m: m, b: b}
}

type observer struct {
	m *Monitor
	b *behavior
}

func (o *observer) Observe(r interpreter.Record) {
	l := record.LineOf(o.b.Name, o.m.start, r)
	m := o.m
	m.mu.Lock()
	b := o.b
	if len(b.Recent) < RecentLen {
		b.Recent = append(b.Recent, l)
	} else {
		b.Recent[b.next] = l
		b.next = (b.next + 1) % RecentLen
	}
	if r.Kind == interpreter.RecIn || r.Kind == interpreter.RecOut {
		c := m.counts[b.Name][r.Source]
		if c == nil {
			c = &Count{}
			m.counts[b.Name][r.Source] = c
		}
		if r.Kind == interpreter.RecIn {
			c.In++
		} else {
			c.Out++
		}
	}
	if len(m.clients) > 0 {
		m.broadcast(frame{Type: "line", Line: &l})
	}
	m.mu.Unlock()
}

// broadcast queues a frame for every page; a page too far behind is cut
// off. m.mu is held.
func (m *Monitor) broadcast(f frame) {
	if len(m.clients) == 0 {
		return
	}
	data, err := json.Marshal(f)
	if err != nil {
		return
	}
	for c := range m.clients {
		select {
		case c.ch <- data:
		default:
			m.drop(c)
		}
	}
}

func (m *Monitor) drop(c *client) {
	if !c.gone {
		c.gone = true
		close(c.ch)
		delete(m.clients, c)
	}
}

// ordered returns a copy of a behavior with its ring in order. m.mu is
// held.
func (b *behavior) ordered() *behavior {
	c := *b
	c.Recent = append(append([]record.Line(nil), b.Recent[b.next:]...), b.Recent[:b.next]...)
	return &c
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
		case "monitor.js", "monitor.css", "viz-global.js":
			m.asset(w, f)
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("GET /monitor/ws", func(w http.ResponseWriter, r *http.Request) { m.serveWS(w, r, mg) })
	mux.HandleFunc("GET /monitor/source", m.serveSource)
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
	m.mu.Lock()
	hello := frame{Type: "hello", Start: &m.start}
	for _, name := range m.order {
		hello.Behaviors = append(hello.Behaviors, m.behs[name].ordered())
	}
	data, err := json.Marshal(hello)
	m.clients[c] = struct{}{}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.drop(c)
		m.mu.Unlock()
	}()
	if err != nil || conn.WriteMessage(websocket.TextMessage, data) != nil {
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
	tick := time.NewTicker(statusEvery)
	defer tick.Stop()
	send := func(data []byte) bool {
		conn.SetWriteDeadline(time.Now().Add(writeWait))
		return conn.WriteMessage(websocket.TextMessage, data) == nil
	}
	status := func() bool {
		now := time.Now()
		m.mu.Lock()
		data, _ := json.Marshal(frame{Type: "status", Now: &now, Status: mg.List(), Counts: m.counts})
		m.mu.Unlock()
		return send(data)
	}
	if !status() {
		return
	}
	for {
		select {
		case <-closed:
			return
		case data, ok := <-c.ch:
			if !ok {
				m.log.Warn("monitor page fell behind; cut off (it reconnects)", zap.String("peer", r.RemoteAddr))
				return
			}
			if !send(data) {
				return
			}
		case <-tick.C:
			if !status() {
				return
			}
		}
	}
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
		fmt.Fprintf(&b, `<span id="L%d"><a href="#L%d">%5d</a>  %s</span>`+"\n", i+1, i+1, i+1, html.EscapeString(line))
	}
	b.WriteString("</pre></body>")
	w.Write([]byte(b.String()))
}
