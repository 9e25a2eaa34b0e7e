package interpreter

import (
	"context"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// watchdog enforces the script time limit without allocating per call: the
// Lua state keeps one cancellable context, and one reusable timer cancels
// it when a call overruns. A late timer for a call that has ended does
// nothing; a cancelled context is replaced before the next call.
type watchdog struct {
	L     *lua.LState
	limit time.Duration
	timer *time.Timer

	mu     sync.Mutex
	armed  bool // a call is running
	fired  bool // the running call was cancelled
	cancel context.CancelFunc
}

func newWatchdog(L *lua.LState, limit time.Duration) *watchdog {
	w := &watchdog{L: L, limit: limit}
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
	if w.armed && !w.fired {
		w.fired = true
		w.cancel()
	}
}

// start arms the timer for one call.
func (w *watchdog) start() {
	w.mu.Lock()
	w.armed = true
	w.mu.Unlock()
	w.timer.Reset(w.limit)
}

// stop disarms it and reports whether the call was stopped by it.
func (w *watchdog) stop() bool {
	w.timer.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	fired := w.fired
	if fired {
		w.fired = false
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
