package interpreter

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/interpreter/seatml"
)

// doc wraps general children and states into a behavior with two socket
// servers on port 0, "chat" and "other".
func doc(general, states string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<seatml>
<general name="t">
<adaptor name="chat" type="socket" role="server" port="0"/>
<adaptor name="other" type="socket" role="server" port="0"/>
` + general + `</general>
` + states + `</seatml>
`
}

// harness runs a machine on a fake clock and records its trace.
type harness struct {
	t     *testing.T
	m     *Machine
	clock *FakeClock
	logs  *observer.ObservedLogs

	mu    sync.Mutex
	trace []string

	cancel  context.CancelFunc
	done    chan error
	stopped sync.Once
}

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func start(t *testing.T, src string, tweak ...func(*Options)) *harness {
	t.Helper()
	prog, diags := seatml.LoadBytes("t.seatml", []byte(src), seatml.LoadOptions{AllowShell: true})
	if prog == nil {
		t.Fatalf("load failed:\n%v", diags)
	}
	return startProgram(t, prog, tweak...)
}

func startProgram(t *testing.T, prog *seatml.Program, tweak ...func(*Options)) *harness {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	h := &harness{t: t, clock: NewFakeClock(epoch), logs: logs, done: make(chan error, 1)}
	opts := Options{Log: zap.New(core), Clock: h.clock, AllowShell: true, Trace: func(s string) {
		h.mu.Lock()
		h.trace = append(h.trace, s)
		h.mu.Unlock()
	}}
	for _, f := range tweak {
		f(&opts)
	}
	m, err := New(prog, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.m = m
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- m.Run(ctx) }()
	select {
	case <-m.Ready():
	case err := <-h.done:
		t.Fatalf("Run ended before ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("machine not ready after 10s")
	}
	t.Cleanup(h.stop)
	return h
}

// stop stops the machine and waits for it; it may be called again.
func (h *harness) stop() {
	h.stopped.Do(func() {
		h.cancel()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			h.t.Error("machine did not stop within 10s")
		}
	})
}

func (h *harness) sync() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.m.Sync(ctx, nil); err != nil {
		h.t.Fatalf("sync: %v", err)
	}
}

// event delivers an event and waits until it is handled.
func (h *harness) event(source, text string) {
	h.t.Helper()
	if err := h.m.Deliver(context.Background(), adaptors.Event{Source: source, Text: text}); err != nil {
		h.t.Fatalf("deliver: %v", err)
	}
	h.sync()
}

func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.clock.Advance(d)
	h.settle()
}

// settle waits until nothing is due at the clock's time: a Sync can be
// handled before work that is already due (an SCXML document's queued
// events give way to input between slices), so it syncs until the
// machine has nothing left to do now.
func (h *harness) settle() {
	h.t.Helper()
	for i := 0; ; i++ {
		busy := false
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := h.m.Sync(ctx, func() {
			due, ok := h.m.timers.next()
			busy = ok && !due.After(h.clock.Now())
		})
		cancel()
		if err != nil {
			h.t.Fatalf("sync: %v", err)
		}
		if !busy {
			return
		}
		if i == 1000 {
			h.t.Fatalf("still busy at %v after 1000 syncs", h.clock.Now())
		}
	}
}

// take returns the trace recorded since the last take.
func (h *harness) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.trace
	h.trace = nil
	return out
}

// sends returns the messages of the trace since the last take, as
// "adaptor:text".
func (h *harness) sends() []string {
	var out []string
	for _, s := range h.take() {
		if rest, ok := strings.CutPrefix(s, "send:"); ok {
			out = append(out, rest)
		}
	}
	return out
}

func (h *harness) state() string {
	var s string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.m.Sync(ctx, func() { s = h.m.State() }); err != nil {
		h.t.Fatalf("sync: %v", err)
	}
	return s
}

// logged returns the messages logged at level or above, with their
// "error" field if any.
func (h *harness) logged(level zapcore.Level) []string {
	var out []string
	for _, e := range h.logs.All() {
		if e.Level < level {
			continue
		}
		msg := e.Message
		if v, ok := e.ContextMap()["error"]; ok {
			msg += ": " + v.(string)
		}
		out = append(out, msg)
	}
	return out
}

func eventOf(source, text string) adaptors.Event { return adaptors.Event{Source: source, Text: text} }

// waitLog waits until a message has been logged, failing after 10 s.
func (h *harness) waitLog(msg string) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.logs.FilterMessage(msg).Len() == 0 {
		if time.Now().After(deadline) {
			h.t.Fatalf("%q not logged within 10s", msg)
		}
		time.Sleep(time.Millisecond)
	}
}

// withDevices gives the machine a simulated device layer that the test
// steps by hand.
func withDevices(t *testing.T, prog *seatml.Program) (*Devices, func(*Options)) {
	t.Helper()
	e, err := hal.NewEngine(prog.Tree, hal.NewSim(), hal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := motion.NewPlayer(e, prog.Servos, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Step(0); err != nil {
		t.Fatal(err)
	}
	d := &Devices{Engine: e, Player: p}
	return d, func(o *Options) { o.Devices = d }
}

// stepUntil steps the engine every 10 ms up to until.
func stepUntil(t *testing.T, e *hal.Engine, until time.Duration) {
	t.Helper()
	for now := e.Now() + 10*time.Millisecond; now <= until; now += 10 * time.Millisecond {
		if err := e.Step(now); err != nil {
			t.Fatal(err)
		}
	}
}

// eventually polls cond (on the machine's goroutine) until it holds.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok := false
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := h.m.Sync(ctx, func() { ok = cond() })
		cancel()
		if err != nil {
			h.t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
