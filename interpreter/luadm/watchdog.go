package luadm

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Watchdog enforces the script time and memory limits without allocating
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
type Watchdog struct {
	L      *lua.LState
	limit  time.Duration
	memory uint64 // bytes of heap growth allowed per call
	timer  *time.Timer

	mu      sync.Mutex
	armed   bool      // a call is running
	started time.Time // when the call's first tick was armed
	base    uint64    // the least heap bytes seen since the call's first tick; 0 before it
	// used is the call's time charged to its limit, last when it was
	// last charged; ctx tells whether the call ran Lua since.
	used   time.Duration
	last   time.Time
	ctx    *progressCtx
	fired  StopReason
	held   bool // the call waits for a debugger: not charged (Hold)
	cancel context.CancelFunc
	sample []metrics.Sample

	// Long, if set before the first call, is called once per call that
	// runs past the first tick (2 ms), on the timer's goroutine: the
	// machine passes its producer's reading on (adaptors.Baton).
	Long func()
}

// StopReason says why the watchdog stopped a call.
type StopReason uint8

const (
	NotStopped StopReason = iota
	StoppedTime
	StoppedMemory
	StoppedAborted // Abort: seat is stopping
)

// running counts the script calls under way in the process, across
// machines. The heap is the process's: while several calls run (many
// sessions), its growth is theirs together, and one call is stopped only
// when the growth passes the limit times their number. Without this an
// innocent call that waited for the CPU while ten thousand sessions
// allocated was stopped (BenchmarkSessionEvents showed it).
var running atomic.Int64

// memoryTick is how often a long call's heap is looked at.
const memoryTick = 2 * time.Millisecond

// NewWatchdog returns a watchdog for calls into L: each call may run for
// limit and grow the heap by memory bytes.
func NewWatchdog(L *lua.LState, limit time.Duration, memory uint64) *Watchdog {
	w := &Watchdog{L: L, limit: limit, memory: memory,
		sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/sched/goroutines/runnable:goroutines"}}}
	w.renew()
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

func (w *Watchdog) renew() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.ctx = &progressCtx{Context: ctx}
	w.L.SetContext(w.ctx)
}

// progressCtx is the Lua state's context. gopher-lua looks at Done before
// every instruction, and seat's long library functions every few thousand
// steps, which tells the watchdog that the call is running, not waiting
// for the CPU.
type progressCtx struct {
	context.Context
	moved atomic.Bool
}

func (c *progressCtx) Done() <-chan struct{} {
	if !c.moved.Load() { // a load per instruction; a store once per tick
		c.moved.Store(true)
	}
	return c.Context.Done()
}

func (w *Watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.armed || w.fired != NotStopped || w.held {
		return
	}
	now := time.Now()
	metrics.Read(w.sample)
	heap := w.sample[0].Value.Uint64()
	runnable := w.sample[1].Value.Uint64()
	// A call that ran no Lua since the last tick while other goroutines
	// waited for the CPU was waiting too: it is starved, not running. The
	// library functions that can work long in one Go call (steps.go) look
	// at the context as they go, which marks them running as the VM is; a
	// host function that waits without looking (seat.call waiting for its service) is
	// taken for starved while the CPU is busy.
	starved := !w.ctx.moved.Swap(false) && runnable > uint64(runtime.GOMAXPROCS(0))
	if w.started.IsZero() {
		w.started, w.last = now, now
		w.used = min(w.limit, memoryTick) // the time before the first tick
		if w.Long != nil {
			w.Long()
		}
	} else {
		// A starved call is not charged for the wait.
		if !starved {
			w.used += now.Sub(w.last)
		}
		w.last = now
	}
	// Memory first: a tick that comes late (the allocating call starves
	// the timer) may find both limits passed, and the heap is the cause.
	switch {
	case w.base == 0 || heap < w.base || starved:
		// (A starved call did not grow the heap: what others allocated
		// meanwhile is not counted.)
		w.base = heap
	case heap-w.base > w.memory*uint64(max(running.Load(), 1)):
		w.fired = StoppedMemory
		w.cancel()
		return
	}
	limit := w.limitNow()
	if w.used >= limit {
		w.fired = StoppedTime
		w.cancel()
		return
	}
	w.timer.Reset(min(memoryTick, limit-w.used))
}

// limitNow is the time limit of the call under way. It is wall time, and
// a call waits for the CPU with the others: while more calls run than
// there are processors, each gets the limit times their share, so that a
// loaded process (ten thousand sessions, a collector marking their heap)
// does not stop innocent calls that only waited. A runaway call alone
// is stopped at the limit.
func (w *Watchdog) limitNow() time.Duration {
	share := running.Load() / int64(runtime.GOMAXPROCS(0))
	return w.limit * time.Duration(max(share, 1))
}

// Start arms the timer for one call.
func (w *Watchdog) Start() {
	running.Add(1)
	w.mu.Lock()
	w.armed = true
	w.mu.Unlock()
	w.timer.Reset(min(w.limit, memoryTick))
}

// Stop disarms it and reports whether, and why, the call was stopped.
func (w *Watchdog) Stop() StopReason {
	running.Add(-1)
	w.timer.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	w.started, w.base, w.used = time.Time{}, 0, 0
	fired := w.fired
	if fired != NotStopped {
		w.fired = NotStopped
		w.renew()
	}
	return fired
}

// Hold stops charging the call under way while it waits for a debugger
// (a breakpoint on a message a script sends); Release charges it again,
// from then. Both are called on the call's goroutine.
func (w *Watchdog) Hold() {
	w.timer.Stop()
	w.mu.Lock()
	w.held = true
	w.mu.Unlock()
}

// Release ends Hold.
func (w *Watchdog) Release() {
	w.mu.Lock()
	w.held = false
	armed := w.armed
	if !w.started.IsZero() {
		w.last = time.Now()
	}
	w.mu.Unlock()
	if armed {
		w.timer.Reset(min(w.limit, memoryTick))
	}
}

// Abort stops the call under way, if any, as the limits would: seat is
// stopping and does not wait for the time limit. The next call runs as
// usual (the stop sequence's onexit). Safe from any goroutine.
func (w *Watchdog) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.armed && w.fired == NotStopped {
		w.fired = StoppedAborted
		w.cancel()
	}
}

// Close releases the context and the timer.
func (w *Watchdog) Close() {
	w.timer.Stop()
	w.mu.Lock()
	w.cancel()
	w.mu.Unlock()
}

// StopText is what a script stopped by the watchdog reads as, in both
// languages: "script stopped: time limit of 1s exceeded".
func StopText(r StopReason, timeout time.Duration, memory uint64) string {
	switch r {
	case StoppedTime:
		return "script stopped: time limit of " + timeout.String() + " exceeded"
	case StoppedMemory:
		return "script stopped: it grew the heap by more than the script memory limit of " + BytesText(memory)
	case StoppedAborted:
		return "script stopped: seat is stopping"
	}
	return ""
}
