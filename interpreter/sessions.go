package interpreter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
)

// A behavior whose adaptor has session="peer" is a host: its machine opens
// the adaptors and runs no conversation itself. Each peer of the session
// adaptor gets a session, a machine of its own (state, stack, Lua state,
// timers, widget values) made when the peer connects (general scripts,
// the initial state's onentry, then onconnect) and ended when it leaves
// (ondisconnect, then onexit). A session's messages to the session adaptor
// go to its own peer; to the other adaptors, as they would from any
// behavior. Input from the other adaptors reaches every session.
// docs/sessions.md describes it.

// sessionHost routes a host's events to its sessions.
type sessionHost struct {
	m       *Machine
	adaptor string // the session adaptor
	// web is set when the session adaptor is a web adaptor: its pages'
	// widget events (source "gui") are their sessions' too.
	web bool

	mu       sync.RWMutex
	sessions map[any]*session // by sessionKey
	// hungUp holds the connections whose session ended by seat.exit,
	// until they are gone: what they still send is dropped.
	hungUp map[any]bool
	closed bool
	// max caps topic sessions (maxsessions on an MQTT adaptor); a
	// connection-based adaptor caps its connections itself. 0: no cap.
	max int
	// idle ends a topic session that has had no event from its sender
	// for that long (sessionidle); 0: never.
	idle time.Duration

	// prev is the host this one replaces in a reload that keeps state,
	// until this one has made its sessions again (adopt): a peer's
	// event waits for that instead of starting a session afresh.
	prev atomic.Pointer[sessionHost]
	// replaced is set as the host stops for a reload (closed, with a
	// successor): what still reaches it goes to the successor.
	replaced atomic.Bool

	created, ended, refused atomic.Uint64
	// sandboxes holds Lua states prepared ahead by a goroutine of the
	// host, so that a peer's session starts without waiting for one.
	sandboxes chan *lua.LState
}

// sessionKey is what a connection's session is found by: the connection
// itself (its identity, not its address text, which a new connection
// from the same port shares), or its SessionKey.
func sessionKey(c adaptors.Conn) any {
	if k, ok := c.(adaptors.SessionKeyed); ok {
		return k.SessionKey()
	}
	return c
}

// sandboxAhead is how many Lua states a host keeps prepared.
const sandboxAhead = 32

// prepare keeps the pool of prepared Lua states full until done closes,
// then closes those left.
func (h *sessionHost) prepare(done <-chan struct{}) {
	for {
		L := newSandbox(h.m.opts.ScriptMemory)
		select {
		case h.sandboxes <- L:
		case <-done:
			L.Close()
			for {
				select {
				case L := <-h.sandboxes:
					L.Close()
				default:
					return
				}
			}
		}
	}
}

// session is one peer's instance of the behavior.
type session struct {
	peer   string
	from   adaptors.Conn // the connection it was made for
	m      *Machine
	cancel context.CancelFunc
	done   chan struct{}
	since  time.Time
	last   atomic.Int64 // when its sender last sent, in host clock nanoseconds (idle hosts only)
}

// Defaults for topic sessions, which have no disconnection to end them.
const (
	DefaultMaxTopicSessions = 1024
	DefaultSessionIdle      = 10 * time.Minute
)

// SessionInfo describes a session (seat ctl sessions).
type SessionInfo struct {
	Peer  string    `json:"peer"`
	State string    `json:"state"`
	Since time.Time `json:"since"`
}

// SessionStats counts a host's sessions.
type SessionStats struct {
	Open    int    `json:"open"`
	Created uint64 `json:"created"`
	Ended   uint64 `json:"ended"`
	// Refused counts topic values refused by maxsessions (their events
	// are dropped); a socket or web adaptor counts its refused peers.
	Refused uint64 `json:"refused,omitempty"`
}

// IsHost reports whether the machine hosts sessions instead of running a
// conversation itself.
func (m *Machine) IsHost() bool { return m.host != nil }

// Sessions lists a host's sessions by peer; nil for other machines. Safe
// from any goroutine.
func (m *Machine) Sessions() []SessionInfo {
	h := m.host
	if h == nil {
		return nil
	}
	h.mu.Lock()
	out := make([]SessionInfo, 0, len(h.sessions))
	for _, s := range h.sessions {
		out = append(out, SessionInfo{Peer: s.peer, State: s.m.CurrentState(), Since: s.since})
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}

// SessionCounts counts a host's sessions; zero for other machines.
func (m *Machine) SessionCounts() SessionStats {
	h := m.host
	if h == nil {
		return SessionStats{}
	}
	h.mu.Lock()
	n := len(h.sessions)
	h.mu.Unlock()
	return SessionStats{Open: n, Created: h.created.Load(), Ended: h.ended.Load(), Refused: h.refused.Load()}
}

// run is Run for a host: the adaptors deliver straight to the sessions
// (deliver routes), so the loop only serves Sync and the end of input,
// and at the end stops every session, then closes the adaptors.
func (h *sessionHost) run(ctx context.Context) error {
	m := h.m
	m.running.Store(true)
	if !m.opened {
		if err := m.Open(ctx); err != nil {
			return err
		}
		// Sessions that started while the adaptors opened (hostAdaptor)
		// may have flushed before the host had its adaptor: what they
		// sent goes now.
		m.flushAdaptors()
	}
	if prev := h.prev.Load(); prev != nil {
		h.adopt(prev)
		h.prev.Store(nil)
	}
	close(m.ready)
	m.log.Info("sessions", zap.String("adaptor", h.adaptor))
	stopPreparing := make(chan struct{})
	prepared := make(chan struct{})
	go func() { defer close(prepared); h.prepare(stopPreparing) }()
	defer func() { close(stopPreparing); <-prepared }()
	// Idle sessions are looked for every quarter of the idle time (at
	// most every minute): one ends between idle and 1.25 times idle.
	var sweeper Timer
	var sweep <-chan time.Time
	every := min(h.idle/4, time.Minute)
	if h.idle > 0 {
		sweeper = m.clock.NewTimer(every)
		defer sweeper.Stop()
		sweep = sweeper.C()
	}
	for ctx.Err() == nil && m.exitCode == nil {
		if it, ok := m.q.pop(); ok {
			if !m.handleItem(ctx, it) {
				break
			}
			continue
		}
		select {
		case <-ctx.Done():
		case <-m.q.wake:
		case <-sweep:
			h.endIdle(ctx)
			sweeper.Reset(every)
		}
	}
	m.running.Store(false)
	h.stopAll()
	m.unload() // what is still queued is answered (drainLeft)
	m.log.Info("stopped", zap.Uint64("sessions", h.created.Load()))
	return nil
}

// inReload holds an event back while a reload that keeps the sessions
// is under way: the old host, closed with a successor, refuses it
// (errStopped: the relay gives it to the new one), and the new host
// waits until it has made the sessions again. Else it returns nil at once.
func (h *sessionHost) inReload(ctx context.Context) error {
	if h.replaced.Load() {
		return errStopped
	}
	if h.prev.Load() != nil {
		select {
		case <-h.m.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// deliver routes an event: a peer's to its session (made when it
// connects, ended when it leaves), other adaptors' to every session.
func (h *sessionHost) deliver(ctx context.Context, ev adaptors.Event, _ bool) error {
	if err := h.inReload(ctx); err != nil {
		return err
	}
	answer := func() { // the sender waits for events that go no further
		if ev.Done != nil {
			ev.Done(true)
		}
	}
	switch {
	case !h.owns(ev):
		return h.deliverAll(ctx, ev)
	case ev.From == nil:
		h.m.log.Warn("event without a peer: no session to give it to (a session adaptor's input must come over a connection)",
			zap.String("adaptor", ev.Source))
		answer()
		return nil
	case ev.Kind == adaptors.Disconnected:
		h.mu.Lock()
		delete(h.hungUp, sessionKey(ev.From))
		h.mu.Unlock()
		if s := h.remove(sessionKey(ev.From)); s != nil {
			h.end(ctx, s, &ev) // answers once ondisconnect has run
			return nil
		}
		answer()
		return nil
	}
	s, err := h.get(ctx, ev.From)
	if s == nil {
		answer()
		return err
	}
	if h.idle > 0 {
		s.last.Store(h.m.clock.Now().UnixNano())
	}
	if err := s.m.Deliver(ctx, ev); err != nil {
		if errors.Is(err, errStopped) && h.m.next.Load() != nil {
			return err // a reload: the relay gives it to the new version, whose session has its queue
		}
		if ev.Done != nil {
			ev.Done(false)
		}
		if !errors.Is(err, errStopped) {
			return err
		}
	}
	return nil
}

// deliverAll gives an event to every session. Its sender is answered once
// every session has answered: handled if all handled it (or there was no
// session to give it to).
func (h *sessionHost) deliverAll(ctx context.Context, ev adaptors.Event) error {
	ss := h.list()
	done := ev.Done
	if done == nil || len(ss) == 0 {
		ev.Done = nil
		for _, s := range ss {
			if err := s.m.Deliver(ctx, ev); err != nil && !errors.Is(err, errStopped) {
				return err
			}
		}
		if done != nil {
			done(true)
		}
		return nil
	}
	var left atomic.Int64
	var missed atomic.Bool
	left.Store(int64(len(ss)))
	ev.Done = func(handled bool) {
		if !handled {
			missed.Store(true)
		}
		if left.Add(-1) == 0 {
			done(!missed.Load())
		}
	}
	for i, s := range ss {
		if err := s.m.Deliver(ctx, ev); err != nil {
			ev.Done(false)
			if !errors.Is(err, errStopped) {
				for range ss[i+1:] {
					ev.Done(false)
				}
				return err
			}
		}
	}
	return nil
}

// deliverBatch routes a batch: the lines of one connection go to its
// session as one batch.
func (h *sessionHost) deliverBatch(ctx context.Context, evs []adaptors.Event) error {
	if err := h.inReload(ctx); err != nil {
		return err
	}
	if len(evs) > 0 && h.owns(evs[0]) && evs[0].From != nil && evs[0].Kind == adaptors.Text {
		if s, err := h.get(ctx, evs[0].From); s != nil {
			return s.m.DeliverBatch(ctx, evs) // stopped by a reload: the relay gives them to the new version
		} else if err != nil {
			return err
		}
	}
	for _, ev := range evs {
		if err := h.deliver(ctx, ev, true); err != nil {
			return err
		}
	}
	adaptors.ReleaseBatch(evs)
	return nil
}

// handled waits until the peer's session, if it has one, has handled
// what the peer sent before.
func (h *sessionHost) handled(ctx context.Context, from adaptors.Conn) error {
	if err := h.inReload(ctx); err != nil {
		return err
	}
	if s := h.session(from); s != nil {
		return s.m.Handled(ctx, from)
	}
	if !h.m.running.Load() {
		return nil
	}
	return h.m.Sync(ctx, nil)
}

// owns reports whether an event belongs to a session: the session
// adaptor's, and a web session's page's widget events.
// An MQTT publication that names no sender (a filter without "+") is
// input to every session.
func (h *sessionHost) owns(ev adaptors.Event) bool {
	if k, ok := ev.From.(adaptors.SessionKeyed); ok && k.SessionKey() == "" {
		return false
	}
	return ev.Source == h.adaptor || h.web && ev.Source == "gui" && ev.From != nil
}

func (h *sessionHost) list() []*session {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		out = append(out, s)
	}
	return out
}

// session returns the peer's session, if it has one.
func (h *sessionHost) session(from adaptors.Conn) *session {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.sessions[sessionKey(from)]
}

func (h *sessionHost) remove(key any) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[key]
	delete(h.sessions, key)
	return s
}

// get returns the peer's session, starting it if the peer is new; its
// callers have waited out a reload (inReload). It is
// called on the peer's own reader goroutine, so sessions start in
// parallel and a slow start holds up only its own peer.
func (h *sessionHost) get(ctx context.Context, from adaptors.Conn) (*session, error) {
	key := sessionKey(from)
	h.mu.RLock()
	s, ok := h.sessions[key]
	closed, hungUp := h.closed, h.hungUp[key]
	h.mu.RUnlock()
	if ok {
		return s, nil
	}
	if hungUp {
		h.m.log.Debug("input after seat.exit ended its session; dropped", zap.String("peer", from.Peer()))
		return nil, nil
	}
	if closed || !h.m.running.Load() {
		return nil, errStopped
	}
	if h.max > 0 {
		h.mu.RLock()
		full := len(h.sessions) >= h.max
		h.mu.RUnlock()
		if full {
			if h.refused.Add(1) == 1 {
				h.m.log.Warn("maxsessions reached: events of new peers are dropped (counted)", zap.Int("maxsessions", h.max), zap.String("peer", from.Peer()))
			}
			return nil, nil
		}
	}
	s, err := h.start(from, nil)
	if err != nil {
		h.m.log.Error("session did not start", zap.String("peer", from.Peer()), zap.Error(err))
		return nil, nil
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.end(ctx, s, nil)
		return nil, errStopped
	}
	h.sessions[key] = s
	h.mu.Unlock()
	select {
	case <-s.done: // seat.exit as it started, before it was listed: exited found nothing to forget
		h.mu.Lock()
		if h.sessions[key] == s {
			delete(h.sessions, key)
			h.ended.Add(1)
		}
		h.mu.Unlock()
		return nil, nil
	default:
	}
	return s, nil
}

// start makes a peer's session: a machine whose session adaptor sends to
// the peer and whose other adaptors are the host's.
func (h *sessionHost) start(peer adaptors.Conn, from *carry) (*session, error) {
	opts := h.m.opts
	opts.Log = h.m.opts.Log.With(zap.String("session", peer.Peer()))
	opts.session = peer
	if opts.Debugger != nil { // each session its own (SessionDebugger); idle, it costs nothing
		opts.Debugger = NewDebugger(opts.Log)
	}
	select {
	case opts.sandbox = <-h.sandboxes:
	default: // none ready: New makes one
	}
	opts.OpenAdaptor = func(c adaptors.Config) (adaptors.Adaptor, error) {
		real := &hostAdaptor{host: h.m, name: c.Name}
		if c.Name == h.adaptor {
			return &peerAdaptor{name: c.Name, peer: peer, real: real}, nil
		}
		k, _ := adaptors.LookupKind(c.Type)
		return newShared(c.Name, real, k), nil
	}
	sm, err := New(h.m.prog, opts)
	if err != nil {
		return nil, err
	}
	if from != nil { // kept across a reload: it goes on where it was
		sm.carried.Store(from)
		sm.q.prepend(from.left)
		from.left = nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{peer: peer.Peer(), from: peer, m: sm, cancel: cancel, done: make(chan struct{}), since: time.Now()}
	s.last.Store(h.m.clock.Now().UnixNano())
	failed := make(chan error, 1)
	go func() {
		defer close(s.done)
		err := sm.Run(ctx)
		if err != nil {
			failed <- err
		}
		if ctx.Err() == nil { // it ended by itself: seat.exit
			h.exited(s, err)
		}
	}()
	select {
	case <-sm.Ready():
	case <-s.done:
		cancel()
		select {
		case err := <-failed:
			return nil, err
		default:
			return nil, errors.New("the session ended as it started")
		}
	}
	h.created.Add(1)
	return s, nil
}

// end delivers the peer's departure (ondisconnect), waits until it is
// handled, then stops the session (onexit).
func (h *sessionHost) end(ctx context.Context, s *session, ev *adaptors.Event) {
	if d := s.m.opts.Debugger; d != nil && d.Summary().Paused {
		// Its peer left: the session goes on to its end, breakpoints
		// cleared, instead of holding the departure (and its reader).
		d.Clear(0)
		d.Continue()
		h.m.log.Info("debugger: the session's peer left; it went on to its end", zap.String("peer", s.peer))
	}
	if ev != nil {
		done := ev.Done
		e := *ev
		e.Done = nil
		handled := s.m.Deliver(ctx, e) == nil && s.m.Sync(ctx, nil) == nil
		if done != nil {
			done(handled)
		}
	}
	s.cancel()
	<-s.done
	h.ended.Add(1)
}

// exited forgets a session that ended by itself (seat.exit in it): its
// peer is hung up on, after what the session sent last, and what the
// peer still sends is dropped; an MQTT sender's next message starts a new
// session.
func (h *sessionHost) exited(s *session, err error) {
	key := sessionKey(s.from)
	hg, hangs := s.from.(adaptors.Hanger)
	h.mu.Lock()
	mine := h.sessions[key] == s
	if mine {
		delete(h.sessions, key)
	}
	if hangs && !h.closed {
		h.hungUp[key] = true
	}
	h.mu.Unlock()
	code, cause := 0, s.m.EndCause()
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	h.m.log.Info("session ended", zap.String("peer", s.peer), zap.Int("code", code), zap.String("cause", cause))
	if hangs {
		hg.Hangup()
	}
	if mine {
		h.ended.Add(1)
	}
}

// endIdle ends the sessions whose sender has sent nothing for the idle
// time, as if it had disconnected: ondisconnect, then onexit. A sender
// that speaks again gets a new session.
func (h *sessionHost) endIdle(ctx context.Context) {
	cut := h.m.clock.Now().Add(-h.idle).UnixNano()
	var idle []*session
	h.mu.Lock()
	for key, s := range h.sessions {
		if s.last.Load() <= cut {
			delete(h.sessions, key)
			idle = append(idle, s)
		}
	}
	h.mu.Unlock()
	for _, s := range idle {
		h.m.log.Info("session ended: idle", zap.String("peer", s.peer), zap.Duration("sessionidle", h.idle))
		h.end(ctx, s, &adaptors.Event{Source: h.adaptor, Kind: adaptors.Disconnected, From: s.from})
	}
}

// stopAll ends every session, in parallel, when the behavior stops.
func (h *sessionHost) stopAll() {
	h.mu.Lock()
	h.closed = true
	h.replaced.Store(h.m.next.Load() != nil)
	all := h.sessions
	h.sessions = map[any]*session{}
	h.mu.Unlock()
	if keep := h.m.carried.Load(); keep != nil && !keep.taken { // (a carry it was made from is taken)
		// A reload that keeps state: each session leaves what it was
		// doing (no onexit) for its new version, which the new host
		// makes for the same peer.
		keep.taken = true
		for _, s := range all {
			c := &carry{}
			s.m.carried.Store(c)
			s.m.handedBack.Store(true)
			keep.sessions = append(keep.sessions, heldSession{from: s.from, peer: s.peer, since: s.since, c: c})
		}
	}
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.end(context.Background(), s, nil)
		}()
	}
	wg.Wait()
}

// hostAdaptor is one of the host's adaptors as a session reaches it,
// looked up when first used: a peer that connects while the host is still
// opening its adaptors (the session adaptor listens before its Open
// returns; one declared later may take seconds to connect) has its
// session start before the host has them. Taken at the start, they
// stayed missing for the session's life: its replies were never flushed
// to its peer, and its sends to the others failed.
type hostAdaptor struct {
	host *Machine
	name string
	got  atomic.Pointer[adaptorRef]
}

type adaptorRef struct{ a adaptors.Adaptor }

// get returns the host's adaptor; nil while the host has none by that
// name (not open yet, or it could not open it).
func (h *hostAdaptor) get() adaptors.Adaptor {
	if r := h.got.Load(); r != nil {
		return r.a
	}
	a := h.host.Adaptor(h.name)
	if a != nil {
		h.got.Store(&adaptorRef{a})
	}
	return a
}

// peerAdaptor is the session adaptor as a session sees it: what it sends
// goes to its own peer.
type peerAdaptor struct {
	name string
	peer adaptors.Conn
	real *hostAdaptor
}

func (a *peerAdaptor) Name() string                              { return a.name }
func (a *peerAdaptor) Open(context.Context, adaptors.Sink) error { return nil }
func (a *peerAdaptor) Close() error                              { return nil }

func (a *peerAdaptor) Send(text string) error { return a.peer.Send(text) }

// StateChanged shows the session's state on its own page, when the peer
// is a page that can (a web adaptor's).
func (a *peerAdaptor) StateChanged(name string) {
	if o, ok := a.peer.(adaptors.StateObserver); ok {
		o.StateChanged(name)
	}
}

// ActiveChanged shows the session's active states on its own page, when
// the peer is a page that shows them (a web adaptor's), else its state.
func (a *peerAdaptor) ActiveChanged(current string, active []string) {
	switch o := a.peer.(type) {
	case adaptors.ActiveObserver:
		o.ActiveChanged(current, active)
	case adaptors.StateObserver:
		o.StateChanged(current)
	}
}

// GUIUpdate shows the session's widget values on its own page.
func (a *peerAdaptor) GUIUpdate(ref, op, value string) {
	if o, ok := a.peer.(adaptors.GUIObserver); ok {
		o.GUIUpdate(ref, op, value)
	}
}

// SendTopic publishes for the session's peer, which fills a "+" with its
// value (a robot's id), or else with the real adaptor.
func (a *peerAdaptor) SendTopic(topic, text string, retain bool) error {
	if ts, ok := a.peer.(adaptors.TopicSender); ok {
		return ts.SendTopic(topic, text, retain)
	}
	return sendTopic(a.real.get(), topic, text, retain)
}

func (a *peerAdaptor) Flush() {
	if f, ok := a.real.get().(adaptors.Flusher); ok {
		f.Flush()
	}
}

// sharedAdaptor is one of the host's other adaptors as a session sees it:
// sending works as from any behavior; the host opens and closes it. It is
// the base that every capability of the host's adaptor is forwarded
// through: newShared wraps it in the type that has exactly the kind's
// capabilities, so that what a script may ask of a session's adaptor is
// what its kind can do.
type sharedAdaptor struct {
	name string
	real *hostAdaptor
}

// newShared is the session's view of the host's adaptor name, of kind k.
func newShared(name string, real *hostAdaptor, k adaptors.Kind) adaptors.Adaptor {
	a := &sharedAdaptor{name: name, real: real}
	switch {
	case k.Has(adaptors.Goals | adaptors.Messages):
		return sharedGoals{sharedMessages{a}}
	case k.Has(adaptors.Cancels | adaptors.Messages):
		return sharedCancels{sharedMessages{a}}
	case k.Has(adaptors.Calls):
		return sharedCalls{a}
	case k.Has(adaptors.Messages):
		return sharedMessages{a}
	case k.Has(adaptors.Topics):
		return sharedTopics{a}
	}
	return a
}

func (a *sharedAdaptor) Name() string                              { return a.name }
func (a *sharedAdaptor) Open(context.Context, adaptors.Sink) error { return nil }
func (a *sharedAdaptor) Close() error                              { return nil }
func (a *sharedAdaptor) Send(text string) error {
	real := a.real.get()
	if real == nil {
		return adaptors.ErrNotConnected
	}
	return real.Send(text)
}

func (a *sharedAdaptor) Flush() {
	if f, ok := a.real.get().(adaptors.Flusher); ok {
		f.Flush()
	}
}

// host returns the host's adaptor as a T, or the error a script sees when
// the host could not open it (or, for a stand-in of seat test's, that it
// lacks the capability: errNoCapability).
func host[T any](a *sharedAdaptor) (T, error) {
	var zero T
	real := a.real.get()
	if real == nil {
		return zero, fmt.Errorf("adaptor %q: %w", a.name, adaptors.ErrNotConnected)
	}
	t, ok := real.(T)
	if !ok {
		return zero, fmt.Errorf("adaptor %q: %w", a.name, errNoCapability)
	}
	return t, nil
}

// errNoCapability: the host's adaptor does not do what its kind says (a
// stand-in that sends a structured message as its text).
var errNoCapability = errors.New("the adaptor does not do this")

type sharedTopics struct{ *sharedAdaptor }

// SendTopic publishes with the host's adaptor (a message's own topic).
func (a sharedTopics) SendTopic(topic, text string, retain bool) error {
	ts, err := host[adaptors.TopicSender](a.sharedAdaptor)
	if err != nil {
		return err
	}
	return ts.SendTopic(topic, text, retain)
}

type sharedMessages struct{ *sharedAdaptor }

func (a sharedMessages) SendMessage(v any) error {
	ms, err := host[adaptors.MessageSender](a.sharedAdaptor)
	if err != nil {
		return err
	}
	return ms.SendMessage(v)
}

type sharedCalls struct{ *sharedAdaptor }

func (a sharedCalls) Call(ctx context.Context, v any) (any, error) {
	c, err := host[adaptors.Caller](a.sharedAdaptor)
	if err != nil {
		return nil, err
	}
	return c.Call(ctx, v)
}

type sharedGoals struct{ sharedMessages }

func (a sharedGoals) Finish(goal string, v any, status string) error {
	f, err := host[adaptors.Finisher](a.sharedAdaptor)
	if err != nil {
		return err
	}
	return f.Finish(goal, v, status)
}

func (a sharedGoals) Feedback(goal string, v any) error {
	f, err := host[adaptors.Finisher](a.sharedAdaptor)
	if err != nil {
		return err
	}
	return f.Feedback(goal, v)
}

type sharedCancels struct{ sharedMessages }

func (a sharedCancels) CancelGoal() (bool, error) {
	c, err := host[adaptors.Canceler](a.sharedAdaptor)
	if err != nil {
		return false, err
	}
	return c.CancelGoal()
}

func sendTopic(real adaptors.Adaptor, topic, text string, retain bool) error {
	ts, ok := real.(adaptors.TopicSender)
	if !ok {
		return errors.New("the adaptor does not publish to topics")
	}
	return ts.SendTopic(topic, text, retain)
}

// adopt makes again, for the same peers, the sessions of the host this
// one replaces in a reload that keeps state: each new session goes on
// where its old one was (beginFrom), with what it had queued. prev has
// stopped.
func (h *sessionHost) adopt(prev *sessionHost) {
	keep := h.m.carried.Load()
	if keep == nil {
		return
	}
	for _, hs := range keep.sessions {
		s, err := h.start(hs.from, hs.c)
		if err != nil {
			hs.c.report = append(hs.c.report, "the session did not start again: "+err.Error())
			h.m.log.Error("session did not start again after a reload", zap.String("peer", hs.peer), zap.Error(err))
			continue
		}
		s.since = hs.since
		h.mu.Lock()
		h.sessions[sessionKey(hs.from)] = s
		h.mu.Unlock()
	}
	h.m.log.Info("sessions kept across the reload", zap.Int("sessions", len(keep.sessions)))
}

// SessionDebugger is the debugger of the session of a host's peer (its
// address, as seat ctl sessions lists it), when the host's behavior has
// a debugger (Options.Debugger).
func SessionDebugger(m *Machine, peer string) (*Debugger, error) {
	h := m.host
	if h == nil {
		return nil, errors.New("the behavior has no session per peer")
	}
	var peers []string
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, s := range h.sessions {
		if s.peer == peer {
			if s.m.opts.Debugger == nil {
				return nil, errors.New("the behavior has no debugger: seat run --control gives it one")
			}
			return s.m.opts.Debugger, nil
		}
		peers = append(peers, s.peer)
	}
	sort.Strings(peers)
	if len(peers) == 0 {
		return nil, fmt.Errorf("no session of %s: no peer is connected", peer)
	}
	return nil, fmt.Errorf("no session of %s; the sessions are %s", peer, strings.Join(peers, ", "))
}
