package interpreter

import (
	"context"
	"runtime/metrics"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// watchdog enforces the script time and memory limits without allocating
// or reading the clock per call: the Lua state keeps one cancellable
// context, and one reusable timer cancels it when a call overruns. A call
// that lasts beyond the first tick is checked every tick: the heap's
// growth above the lowest it has been since that first tick must stay
// under the memory limit (Go has no per-goroutine heap, so the process
// heap stands in; a call that runs for ticks while it grows is the one
// allocating). The lowest, not the first: the heap counts dead objects
// until the collector sweeps them, and a first tick that falls before a
// sweep would otherwise let the call grow by the garbage swept as well
// as by the limit. A late timer for a call
// that has ended does nothing; a cancelled context is replaced before the
// next call.
type watchdog struct {
	L      *lua.LState
	limit  time.Duration
	memory uint64 // bytes of heap growth allowed per call
	timer  *time.Timer

	mu      sync.Mutex
	armed   bool      // a call is running
	started time.Time // when the call's first tick was armed
	base    uint64    // the least heap bytes seen since the call's first tick; 0 before it
	fired   stopReason
	cancel  context.CancelFunc
	sample  []metrics.Sample
}

// stopReason says why the watchdog stopped a call.
type stopReason uint8

const (
	notStopped stopReason = iota
	stoppedTime
	stoppedMemory
)

// memoryTick is how often a long call's heap is looked at.
const memoryTick = 2 * time.Millisecond

func newWatchdog(L *lua.LState, limit time.Duration, memory uint64) *watchdog {
	w := &watchdog{L: L, limit: limit, memory: memory,
		sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
	w.renew()
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

func (w *watchdog) renew() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.L.SetContext(ctx)
}

func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.armed || w.fired != notStopped {
		return
	}
	now := time.Now()
	if w.started.IsZero() {
		w.started = now.Add(-min(w.limit, memoryTick))
	}
	// Memory first: a tick that comes late (the allocating call starves
	// the timer) may find both limits passed, and the heap is the cause.
	metrics.Read(w.sample)
	heap := w.sample[0].Value.Uint64()
	switch {
	case w.base == 0 || heap < w.base:
		w.base = heap
	case heap-w.base > w.memory:
		w.fired = stoppedMemory
		w.cancel()
		return
	}
	if now.Sub(w.started) >= w.limit {
		w.fired = stoppedTime
		w.cancel()
		return
	}
	w.timer.Reset(min(memoryTick, w.limit-now.Sub(w.started)))
}

// start arms the timer for one call.
func (w *watchdog) start() {
	w.mu.Lock()
	w.armed = true
	w.mu.Unlock()
	w.timer.Reset(min(w.limit, memoryTick))
}

// stop disarms it and reports whether, and why, the call was stopped.
func (w *watchdog) stop() stopReason {
	w.timer.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	w.started, w.base = time.Time{}, 0
	fired := w.fired
	if fired != notStopped {
		w.fired = notStopped
		w.renew()
	}
	return fired
}

// close releases the context and the timer.
func (w *watchdog) close() {
	w.timer.Stop()
	w.mu.Lock()
	w.cancel()
	w.mu.Unlock()
}
