// Package web is the "web" adaptor (SEATML §10.3): an operator page that
// shows the active states' widgets and switches panels live, a WebSocket
// endpoint speaking JSON frames for pages and agents, eSEAT's
// POST /rtc_processResult, and static files from a directory.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/schema"
)

func init() {
	adaptors.RegisterKind(adaptors.Kind{Name: "web", New: New, Max: 1, Caps: adaptors.Connections | adaptors.Page | adaptors.UTF8,
		Attrs: map[string]schema.AttrSpec{
			"host":          {},
			"port":          {Required: true, Kind: schema.Port},
			"dir":           {},
			"allow":         {},
			"maxconns":      {Kind: schema.PosInt},
			"session":       {Kind: schema.Enum, Enum: []string{"peer"}},
			"maxsessions":   {Kind: schema.PosInt},
			"document_root": {Alias: "dir"},
			"show":          {},
		},
		Check: adaptors.Check{Decl: checkDecl, Refs: map[string]string{"show": adaptors.AnyAdaptors}}})
}

// checkDecl warns when dir (or eSEAT's document_root) is not a directory:
// the page is served, other paths are 404, as in eSEAT.
func checkDecl(d adaptors.Decl) []adaptors.Problem {
	dir := d.Attrs["dir"]
	attr := "dir"
	if dir == "" {
		dir, attr = d.Attrs["document_root"], "document_root"
	}
	if dir == "" {
		return nil
	}
	path := dir
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.Dir, dir)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return []adaptors.Problem{{Attr: attr, Warning: true, Whole: true,
			Msg: fmt.Sprintf("web adaptor %q: directory %q does not exist; its built-in page is served and other paths are 404, as in eSEAT", d.Name, dir)}}
	}
	return nil
}

// Limits.
const (
	// MaxFrame bounds request bodies and WebSocket frames.
	MaxFrame     = 64 << 10
	writeTimeout = 10 * time.Second
	pingPeriod   = 30 * time.Second
	// idleTimeout closes kept-alive HTTP connections with no request, so
	// that idle browsers do not hold connection slots.
	idleTimeout = 2 * time.Minute
)

//go:embed static
var static embed.FS

// AssetPrefix is where the page's own files are served.
const AssetPrefix = "/_seat/"

// Adaptor is a web adaptor.
type Adaptor struct {
	name  string
	addr  string
	dir   string
	allow []string
	log   *zap.Logger
	tune  adaptors.Tuning
	gui   *adaptors.GUI
	// connEvents: deliver Connected and Disconnected events for pages.
	connEvents bool
	// maxconns bounds open HTTP and WebSocket connections together.
	maxconns int
	// show names the other adaptors whose messages the pages' log shows
	// (what the robot said to the visitor).
	show  []string
	stats adaptors.Counters

	ctx    context.Context
	cancel context.CancelFunc
	sink   adaptors.Sink
	srv    *http.Server
	ln     net.Listener
	root   *os.Root
	wg     sync.WaitGroup

	// held is the pages with replies held until Flush, which writes them
	// from the behavior's own goroutine; nil when the sink does not call
	// Flush.
	held *adaptors.Held

	mu      sync.Mutex
	clients map[*client]struct{}
	state   string
	active  []string // the active states, outermost first: their widgets are shown
	values  map[string]string
	initial map[string]string // the widgets' first values, for a session's page
	byName  map[string]*adaptors.GUIState
}

// New builds a web adaptor from its attributes.
func New(cfg adaptors.Config) (adaptors.Adaptor, error) {
	addr, _, err := cfg.Address()
	if err != nil {
		return nil, err
	}
	a := &Adaptor{name: cfg.Name, addr: addr, log: cfg.Log,
		tune: cfg.Tuning, connEvents: cfg.Connections, clients: map[*client]struct{}{}}
	if a.log == nil {
		a.log = zap.NewNop()
	}
	if a.maxconns, err = cfg.PositiveInt("maxconns", adaptors.DefaultMaxConns); err != nil {
		return nil, err
	}
	a.setGUI(cfg.GUI)
	if d := cfg.Attrs["dir"]; d != "" {
		a.dir = d
		if !filepath.IsAbs(d) {
			a.dir = filepath.Join(cfg.Dir, d)
		}
	}
	for _, o := range strings.Split(cfg.Attrs["allow"], ",") {
		if o = strings.TrimSpace(o); o != "" {
			a.allow = append(a.allow, strings.TrimSuffix(o, "/"))
		}
	}
	for _, s := range strings.Split(cfg.Attrs["show"], ",") {
		if s = strings.TrimSpace(s); s != "" {
			a.show = append(a.show, s)
		}
	}
	return a, nil
}

// Watched names the adaptors whose messages the pages' log shows
// (adaptors.SentWatcher).
func (a *Adaptor) Watched() []string { return a.show }

// Sent shows a message the behavior sent to one of them in every page's
// log.
func (a *Adaptor) Sent(adaptor, text string) {
	a.mu.Lock()
	clients := a.clientsLocked()
	a.mu.Unlock()
	if len(clients) == 0 {
		return
	}
	b := messageFrameOf(adaptor, text, true)
	for _, c := range clients {
		c.reply(b)
	}
}

// Name returns the adaptor's name.
func (a *Adaptor) Name() string { return a.name }

// Stats returns the adaptor's connection and rejection counts.
func (a *Adaptor) Stats() adaptors.Stats { return a.stats.Snapshot() }

// Addr returns the listening address.
func (a *Adaptor) Addr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ln != nil {
		return a.ln.Addr().String()
	}
	return a.addr
}

// setGUI takes a behavior's widgets, with their first values; the caller
// holds a.mu or is New.
func (a *Adaptor) setGUI(gui *adaptors.GUI) {
	if gui == nil {
		gui = &adaptors.GUI{}
	}
	a.gui = gui
	a.byName = make(map[string]*adaptors.GUIState, len(gui.States))
	for i := range gui.States {
		a.byName[gui.States[i].Name] = &gui.States[i]
	}
	a.values = map[string]string{}
	for _, st := range gui.States {
		for _, w := range st.Widgets {
			if w.Ref != "" {
				a.values[w.Ref] = w.Value
			}
		}
	}
	a.initial = maps.Clone(a.values)
}

// Keep serves the next version of the behavior after a reload, with the
// pages open (adaptors.Keeper): its widgets, from their first values. The
// pages get the new state and panel when it enters its initial state; a
// session page starts again from the first values.
func (a *Adaptor) Keep(cfg adaptors.Config) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.setGUI(cfg.GUI)
	for c := range a.clients {
		c.values = nil
	}
}

// Open starts the HTTP server.
func (a *Adaptor) Open(ctx context.Context, sink adaptors.Sink) error {
	if a.dir != "" {
		root, err := os.OpenRoot(a.dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// As eSEAT does: the page is served, files are 404 (seat check warns).
			a.log.Warn("dir does not exist; serving the built-in page, files are 404", zap.String("dir", a.dir))
		case err != nil:
			return fmt.Errorf("dir: %w", err)
		default:
			a.root = root
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", a.addr)
	if err != nil {
		return err
	}
	ln = adaptors.Limit(ln, a.maxconns, &a.stats, a.log)
	a.ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	a.sink = sink
	a.held = adaptors.NewHeld(sink)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ws", a.serveWS)
	mux.HandleFunc("POST /rtc_processResult", a.serveProcessResult)
	mux.HandleFunc("GET /{$}", a.servePage)
	mux.HandleFunc("GET "+AssetPrefix+"{file}", a.serveAsset)
	mux.HandleFunc("GET /", a.serveFile)
	a.srv = &http.Server{Handler: a.guard(mux), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout, BaseContext: func(net.Listener) context.Context { return a.ctx }}
	a.mu.Lock()
	a.ln = ln
	a.mu.Unlock()
	a.log.Info("listening", zap.String("url", "http://"+ln.Addr().String()+"/"))
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("web server stopped", zap.Error(err))
		}
	}()
	return nil
}

// guard refuses requests from foreign origins and, on a loopback listener,
// requests naming a foreign host (DNS rebinding).
func (a *Adaptor) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.hostOK(r) {
			a.log.Warn("request refused: unexpected Host", zap.String("host", r.Host), zap.String("peer", r.RemoteAddr))
			http.Error(w, "unexpected Host header", http.StatusForbidden)
			return
		}
		if !a.originOK(r) {
			a.log.Warn("request refused: origin not allowed", zap.String("origin", r.Header.Get("Origin")), zap.String("peer", r.RemoteAddr), zap.String("path", r.URL.Path))
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func (a *Adaptor) hostOK(r *http.Request) bool {
	listenHost, _, _ := net.SplitHostPort(a.addr)
	if !isLoopback(listenHost) {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(r.Host); err == nil {
		host = h
	}
	if isLoopback(host) {
		return true
	}
	for _, o := range a.allow {
		if u, err := url.Parse(o); err == nil && u.Host != "" && u.Hostname() == host || o == host {
			return true
		}
	}
	return false
}

// originOK accepts requests without an Origin, from the page's own origin,
// or from an origin or host name listed in allow.
func (a *Adaptor) originOK(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, o := range a.allow {
		if strings.Contains(o, "://") {
			if strings.EqualFold(o, u.Scheme+"://"+u.Host) {
				return true
			}
		} else if strings.EqualFold(o, u.Hostname()) {
			return true
		}
	}
	return false
}

func (a *Adaptor) servePage(w http.ResponseWriter, r *http.Request) {
	data, _ := static.ReadFile("static/index.html")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:")
	w.Write(data)
}

func (a *Adaptor) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	data, err := static.ReadFile("static/" + name)
	if err != nil || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(name) {
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	w.Write(data)
}

// serveFile serves a file under dir; os.Root keeps ".." and links from
// leading out of it. Directories are served by their index.html only.
func (a *Adaptor) serveFile(w http.ResponseWriter, r *http.Request) {
	if a.root == nil {
		http.NotFound(w, r)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	f, err := a.root.Open(name)
	if err == nil {
		if st, serr := f.Stat(); serr == nil && st.IsDir() {
			f.Close()
			name = path.Join(name, "index.html")
			f, err = a.root.Open(name)
		}
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			a.log.Warn("static file refused", zap.String("path", r.URL.Path), zap.String("peer", r.RemoteAddr), zap.Error(err))
		}
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		http.NotFound(w, r)
		return
	}
	http.ServeContent(w, r, name, st.ModTime(), f)
}

// serveProcessResult is eSEAT's POST: the body is one event, answered once
// it has been handled.
func (a *Adaptor) serveProcessResult(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxFrame))
	if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
		a.log.Warn("request body over 64 KiB; refused", zap.String("peer", r.RemoteAddr))
		a.stats.LineTooLong.Add(1)
		http.Error(w, "body over 64 KiB", http.StatusRequestEntityTooLarge)
		return
	} else if err != nil {
		a.log.Warn("request body cut short; dropped", zap.String("peer", r.RemoteAddr), zap.Error(err))
		a.stats.PartialLine.Add(1)
		http.Error(w, "body cut short", http.StatusBadRequest)
		return
	}
	text, repaired := adaptors.CleanText(string(body))
	if repaired {
		a.stats.NoteRepair(a.log, r.RemoteAddr, nil)
	}
	done := make(chan struct{})
	ev := adaptors.Event{Source: a.name, Text: text, Done: func(bool) { close(done) }}
	if err := a.sink.Deliver(r.Context(), ev); err != nil {
		http.Error(w, "behavior not running", http.StatusServiceUnavailable)
		return
	}
	select {
	case <-done:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"result":"OK"}`)
	case <-r.Context().Done():
	case <-a.ctx.Done():
		http.Error(w, "behavior stopped", http.StatusServiceUnavailable)
	}
}

// frame is the JSON of every WebSocket message (SEATML §10.3).
type frame struct {
	Type    string  `json:"type"`
	Name    string  `json:"name,omitempty"`
	Source  string  `json:"source,omitempty"`
	ID      string  `json:"id,omitempty"`
	Text    *string `json:"text,omitempty"`
	Op      string  `json:"op,omitempty"`
	Value   *string `json:"value,omitempty"`
	Adaptor string  `json:"adaptor,omitempty"`
	State   string  `json:"state,omitempty"`
	// Behavior names the behavior in "panel" frames.
	Behavior string        `json:"behavior,omitempty"`
	Widgets  []panelWidget `json:"widgets,omitempty"`
}

// panelWidget is a widget in a "panel" frame, with the state it belongs
// to: a nested behavior's panel shows every active state's.
type panelWidget struct {
	State string            `json:"state"`
	Kind  string            `json:"kind"`
	ID    string            `json:"id,omitempty"`
	Ref   string            `json:"ref,omitempty"`
	Attrs map[string]string `json:"attrs,omitempty"`
}

func str(s string) *string { return &s }

// encode is f's text frame, ready for any client's outbox: a frame sent
// to every page is encoded once.
func encode(f frame) string {
	b, _ := json.Marshal(f)
	return textFrame(b)
}

// snapshot returns the frames a client needs for the current state: the
// state, its panel, and one set per widget value.
func (a *Adaptor) snapshotLocked() []string { return a.snapshot(a.state, a.active, a.values) }

// snapshot returns the frames that show state, with the widgets of the
// active states (outermost first, each its own, in document order) and
// their values.
func (a *Adaptor) snapshot(state string, active []string, values map[string]string) []string {
	if state == "" {
		return nil
	}
	out := []string{encode(frame{Type: "state", Name: state})}
	p := frame{Type: "panel", State: state, Behavior: a.gui.Behavior, Widgets: []panelWidget{}}
	var sets []string
	for _, name := range active {
		st := a.byName[name]
		if st == nil {
			continue
		}
		for _, w := range st.Widgets {
			p.Widgets = append(p.Widgets, panelWidget{State: st.Name, Kind: w.Kind, ID: w.ID, Ref: w.Ref, Attrs: w.Attrs})
			if w.Kind == "input" || w.Kind == "text" {
				sets = append(sets, encode(frame{Type: "gui", ID: w.Ref, Op: "set", Value: str(values[w.Ref])}))
			}
		}
	}
	out = append(out, encode(p))
	return append(out, sets...)
}

// StateChanged shows this page alone its own state and panel: the page
// of a session (session="peer"), whose state and widget values are its
// own.
func (c *client) StateChanged(name string) { c.ActiveChanged(name, []string{name}) }

// ActiveChanged is StateChanged with the session's active states, whose
// widgets the page shows.
func (c *client) ActiveChanged(current string, active []string) {
	c.a.mu.Lock()
	if c.values == nil {
		c.values = maps.Clone(c.a.initial)
	}
	frames := c.a.snapshot(current, active, c.values)
	c.a.mu.Unlock()
	c.send(frames...)
}

// GUIUpdate forwards a session's widget change to its page alone.
func (c *client) GUIUpdate(ref, op, value string) {
	c.a.mu.Lock()
	if c.values == nil {
		c.values = maps.Clone(c.a.initial)
	}
	apply(c.values, ref, op, value)
	c.a.mu.Unlock()
	c.send(guiFrame(ref, op, value))
}

func apply(values map[string]string, ref, op, value string) {
	switch op {
	case "set":
		values[ref] = value
	case "append":
		values[ref] += value
	case "clear":
		values[ref] = ""
	}
}

func guiFrame(ref, op, value string) string {
	f := frame{Type: "gui", ID: ref, Op: op}
	if op != "clear" {
		f.Value = str(value)
	}
	return encode(f)
}

// StateChanged tells every client the new state and its panel.
func (a *Adaptor) StateChanged(name string) { a.ActiveChanged(name, []string{name}) }

// ActiveChanged tells every client the new state, and the panel of the
// active states' widgets.
func (a *Adaptor) ActiveChanged(current string, active []string) {
	a.mu.Lock()
	a.state, a.active = current, active
	frames := a.snapshotLocked()
	clients := a.clientsLocked()
	a.mu.Unlock()
	for _, c := range clients {
		c.send(frames...)
	}
}

// GUIUpdate forwards a widget change to every client.
func (a *Adaptor) GUIUpdate(ref, op, value string) {
	a.mu.Lock()
	apply(a.values, ref, op, value)
	clients := a.clientsLocked()
	a.mu.Unlock()
	b := guiFrame(ref, op, value)
	for _, c := range clients {
		c.send(b)
	}
}

func (a *Adaptor) clientsLocked() []*client {
	out := make([]*client, 0, len(a.clients))
	for c := range a.clients {
		out = append(out, c)
	}
	return out
}

// Send sends a message frame to every client.
func (a *Adaptor) Send(text string) error {
	a.mu.Lock()
	clients := a.clientsLocked()
	a.mu.Unlock()
	if len(clients) == 0 {
		a.log.Debug("no client connected; message dropped") // as a socket server with no client
		return nil
	}
	b := a.messageFrame(text)
	for _, c := range clients {
		c.reply(b)
	}
	return nil
}

// Close stops the server and closes every connection.
func (a *Adaptor) Close() error {
	if a.srv == nil {
		return nil
	}
	a.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = a.srv.Shutdown(ctx)
	a.mu.Lock()
	clients := a.clientsLocked()
	a.mu.Unlock()
	for _, c := range clients {
		c.drainAndClose()
	}
	a.wg.Wait()
	if a.root != nil {
		a.root.Close()
	}
	return nil
}

// upgrader makes the handshake; its buffers are the HTTP server's (no
// sizes given), as it reads and writes nothing after it (frames.go).
var upgrader = websocket.Upgrader{}

func (a *Adaptor) serveWS(w http.ResponseWriter, r *http.Request) {
	up := upgrader
	up.CheckOrigin = a.originOK // already checked by guard; kept as a second line
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered
	}
	c := &client{a: a, nc: ws.NetConn(), peer: r.RemoteAddr, out: adaptors.NewOutbox(a.tune), done: make(chan struct{}), drain: make(chan struct{})}
	c.w = adaptors.NewWriter(c.nc, c.out, a.held, appendFrame)
	c.rd = newFrameReader(c.nc, MaxFrame, func(p []byte) { c.out.Put(controlFrame(opPong, p)) })
	a.mu.Lock()
	if a.ctx.Err() != nil {
		a.mu.Unlock()
		c.nc.Close()
		return
	}
	a.clients[c] = struct{}{}
	c.send(a.snapshotLocked()...)
	a.wg.Add(2)
	a.mu.Unlock()
	a.log.Info("client connected", zap.String("peer", c.peer))
	go c.write()
	go c.read()
}

// client is one WebSocket connection with a bounded output queue.
type client struct {
	a     *Adaptor
	nc    net.Conn     // after the handshake
	rd    *frameReader // the page's frames
	peer  string
	out   *adaptors.Outbox // encoded frames, header and payload
	w     *adaptors.Writer // writes out
	done  chan struct{}
	drain chan struct{}
	once  sync.Once
	dOnce sync.Once
	// warned is set once a repaired frame was logged (reader goroutine).
	warned bool
	// baton is the reading, set before the first frame; leave reports the
	// page's departure once it ends.
	baton *adaptors.Baton
	leave func()
	// values are a session's page's own widget values (a.mu); nil for a
	// page that shows the behavior's.
	values map[string]string
}

func (c *client) String() string { return c.a.name + " " + c.peer }

// Peer returns the page's or agent's address.
func (c *client) Peer() string { return c.peer }

// Send sends a message frame to this client only (seat.reply).
func (c *client) Send(text string) error {
	if c.closed() {
		return adaptors.ErrNotConnected
	}
	if !c.reply(c.a.messageFrame(text)) {
		return adaptors.ErrQueueFull
	}
	return nil
}

// reply queues a frame the behavior sends (seat.reply, a message to the
// adaptor): when the behavior flushes its adaptors after each pass, the
// frame waits for that Flush, which writes it from the behavior's
// goroutine; else the writer is woken.
func (c *client) reply(f string) bool {
	if c.closed() {
		return false
	}
	if !c.w.Send(f) {
		c.notReading()
		return false
	}
	return true
}

// send queues encoded frames and wakes the writer; a client whose queue is
// full is disconnected.
func (c *client) send(frames ...string) bool {
	for _, f := range frames {
		if c.closed() || !c.put(f) {
			return false
		}
	}
	return true
}

// put queues an encoded frame and wakes the writer.
func (c *client) put(f string) bool {
	if !c.out.Put(f) {
		c.notReading()
		return false
	}
	return true
}

func (c *client) notReading() {
	c.a.log.Error("client is not reading; disconnected", zap.String("peer", c.peer), zap.Int("queue_bytes", c.out.Max()))
	c.a.stats.SlowPeer.Add(1)
	c.close()
}

func (c *client) close() {
	c.once.Do(func() {
		close(c.done)
		c.nc.Close()
		c.a.mu.Lock()
		delete(c.a.clients, c)
		c.a.mu.Unlock()
	})
}

// closed reports whether the connection has been closed.
func (c *client) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *client) drainAndClose() { c.dOnce.Do(func() { close(c.drain) }) }

// Hangup sends what is queued for the page, then closes its connection
// (adaptors.Hanger).
func (c *client) Hangup() { c.drainAndClose() }

// write writes what is queued, everything queued at once per wake-up,
// when Flush could not: the page was slow to read, the frame was not a
// reply (a state, panel or widget frame; a pong), or Flush is not called.
func (c *client) write() {
	defer c.a.wg.Done()
	defer c.close()
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-c.drain:
			c.out.Close()
			c.writeAndClose(websocket.FormatCloseMessage(websocket.CloseGoingAway, "seat stopped"))
			return
		case <-c.out.Wait():
			if !c.writeQueued(writeTimeout) {
				return
			}
		case <-ping.C:
			c.out.Put(controlFrame(websocket.PingMessage, nil))
		}
	}
}

// writeQueued writes what is pending and queued, waiting for the page up
// to timeout; false means the connection failed.
func (c *client) writeQueued(timeout time.Duration) bool {
	return c.writeFailed(c.w.Write(timeout, nil))
}

// writeAndClose writes what is queued, then a close frame with payload,
// within a second (a close reply, or seat stopping).
func (c *client) writeAndClose(payload []byte) {
	c.writeFailed(c.w.Write(time.Second, []byte(controlFrame(opClose, payload))))
}

// writeFailed logs a failed write, and reports whether err is nil.
func (c *client) writeFailed(err error) bool {
	if err != nil && !c.closed() { // else the reason was logged where it was closed
		c.a.log.Warn("write failed; connection closed", zap.String("peer", c.peer), zap.Error(err))
	}
	return err == nil
}

// Flush writes the replies sent since the last Flush.
func (a *Adaptor) Flush() { a.held.Flush() }

func (c *client) read() {
	defer c.a.wg.Done()
	// The page's arrival comes before its first frame, its departure after
	// its last and after the connection is closed.
	leave, ok := adaptors.Arrive(c.a.ctx, c.a.sink, c.a.connEvents, c.a.name, c)
	if !ok {
		c.close()
		return
	}
	c.leave = leave
	c.baton = adaptors.ReadOn(&c.a.wg, c.readFrames)
	c.readFrames()
}

// Baton is the connection's reading (adaptors.BatonHolder).
func (c *client) Baton() *adaptors.Baton { return c.baton }

// readFrames reads and delivers the page's frames until the connection
// ends, then closes it and reports the departure; or returns early when
// the reading was passed to another goroutine while this one ran the
// behavior. Frames already buffered go to the behavior together, as a
// socket's lines do.
func (c *client) readFrames() {
	leg := c.baton.Take()
	bs, batching := c.a.sink.(adaptors.BatchSink)
	for {
		op, data, err := c.rd.next()
		if err != nil {
			c.ended(err)
			break
		}
		ev, ok := c.event(op, data)
		if !ok {
			continue
		}
		if batching && c.rd.ready() {
			batch := append(adaptors.NewBatch(), ev)
			for err == nil && len(batch) < adaptors.BatchCap && c.rd.ready() {
				if op, data, err = c.rd.next(); err == nil {
					if ev, ok := c.event(op, data); ok {
						batch = append(batch, ev)
					}
				}
			}
			leg.Deliver()
			derr := bs.DeliverBatch(c.a.ctx, batch)
			if !leg.Delivered() {
				return // the reading went on on another goroutine
			}
			if derr != nil {
				break
			}
			if err != nil {
				c.ended(err)
				break
			}
			continue
		}
		leg.Deliver()
		err = c.a.sink.Deliver(c.a.ctx, ev)
		if !leg.Delivered() {
			return // the reading went on on another goroutine
		}
		if err != nil {
			break
		}
	}
	c.close()
	c.leave()
}

// event turns a message into an event, or logs why it is ignored.
func (c *client) event(op int, data []byte) (adaptors.Event, bool) {
	if op != opText {
		c.a.log.Warn("binary frame ignored", zap.String("peer", c.peer))
		c.a.stats.InvalidFrame.Add(1)
		return adaptors.Event{}, false
	}
	ev, err := c.a.decode(data)
	if err != nil {
		c.a.log.Warn("invalid frame ignored", zap.String("peer", c.peer), zap.Error(err))
		c.a.stats.InvalidFrame.Add(1)
		return adaptors.Event{}, false
	}
	if text, repaired := adaptors.CleanText(ev.Text); repaired || !utf8.Valid(data) {
		// encoding/json has already replaced invalid UTF-8; NUL is ours.
		ev.Text = text
		c.a.stats.NoteRepair(c.a.log, c.peer, &c.warned)
	}
	ev.From = c
	return ev, true
}

// ended logs why the reading ended and answers the peer: a close frame
// with the peer's code, or with the reason its connection is closed.
func (c *client) ended(err error) {
	var pc *peerClosed
	var pe protocolError
	switch {
	case errors.As(err, &pc):
		c.a.log.Info("client disconnected", zap.String("peer", c.peer))
		c.writeAndClose(pc.reply())
	case errors.Is(err, errTooBig):
		c.a.log.Error("frame over 64 KiB; connection closed", zap.String("peer", c.peer))
		c.a.stats.LineTooLong.Add(1)
		c.writeAndClose(websocket.FormatCloseMessage(websocket.CloseMessageTooBig, ""))
	case errors.As(err, &pe):
		c.a.log.Warn("connection closed", zap.String("peer", c.peer), zap.Error(err))
		c.a.stats.InvalidFrame.Add(1)
		c.writeAndClose(websocket.FormatCloseMessage(websocket.CloseProtocolError, string(pe)))
	case !c.closed():
		c.a.log.Info("client disconnected", zap.String("peer", c.peer), zap.Error(err))
	}
}

// decode turns an incoming frame into an event.
func (a *Adaptor) decode(data []byte) (adaptors.Event, error) {
	// Only the fields a client may send: the outgoing ones of frame
	// (name, widgets, ...) are ignored whatever they hold.
	var f struct {
		Type   string  `json:"type"`
		Source string  `json:"source"`
		ID     string  `json:"id"`
		Ref    string  `json:"ref"`
		Text   *string `json:"text"`
		Op     string  `json:"op"`
		Value  *string `json:"value"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return adaptors.Event{}, fmt.Errorf("not JSON: %w", err)
	}
	if f.Type == "gui" {
		// A page reporting a field's contents: {"type":"gui","id":"state:id","op":"set","value":"..."}.
		if f.Op != "set" || f.Value == nil || !strings.Contains(f.ID, ":") {
			return adaptors.Event{}, errors.New(`a "gui" frame from a client must be {"op":"set","id":"state:id","value":...}`)
		}
		return adaptors.Event{Source: "gui", ID: f.ID, Text: *f.Value, Update: true}, nil
	}
	if f.Type != "event" {
		return adaptors.Event{}, fmt.Errorf("unknown frame type %q", f.Type)
	}
	text := ""
	if f.Text != nil {
		text = *f.Text
	}
	switch f.Source {
	case "gui":
		if f.ID == "" {
			return adaptors.Event{}, errors.New(`a "gui" event needs an "id"`)
		}
		return adaptors.Event{Source: "gui", ID: f.ID, Ref: f.Ref, Text: text}, nil
	case "", a.name:
		if f.Text == nil {
			return adaptors.Event{}, errors.New(`an event needs a "text"`)
		}
		return adaptors.Event{Source: a.name, Text: text}, nil
	}
	return adaptors.Event{}, fmt.Errorf("source %q is not this adaptor (%q) or \"gui\"", f.Source, a.name)
}

var (
	_ adaptors.Adaptor        = (*Adaptor)(nil)
	_ adaptors.Addresser      = (*Adaptor)(nil)
	_ adaptors.Flusher        = (*Adaptor)(nil)
	_ adaptors.StateObserver  = (*Adaptor)(nil)
	_ adaptors.ActiveObserver = (*Adaptor)(nil)
	_ adaptors.GUIObserver    = (*Adaptor)(nil)
	_ adaptors.Conn           = (*client)(nil)
	_ adaptors.ActiveObserver = (*client)(nil)
)
