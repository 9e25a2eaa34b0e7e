package luadm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// TestWatchdogStarvedCallNotCharged: a call that waits while other
// goroutines hog the CPU (here: it sits in a Go function, running no Lua,
// while busy goroutines keep the run queue full) is not charged for the
// wait and finishes; the same wait with nothing else runnable is charged
// and the call is stopped at the limit. (BenchmarkSessionEvents found
// innocent calls stopped under load before the watchdog told the two
// apart.)
func TestWatchdogStarvedCallNotCharged(t *testing.T) {
	run := func(busy int) error {
		L := Sandbox(64 << 20)
		defer L.Close()
		w := NewWatchdog(L, 200*time.Millisecond, 64<<20)
		defer w.Close()
		var stop atomic.Bool
		var wg sync.WaitGroup
		for range busy {
			wg.Add(1)
			go func() { // keeps the run queue longer than the processors
				defer wg.Done()
				for !stop.Load() {
					runtime.Gosched()
				}
			}()
		}
		defer func() { stop.Store(true); wg.Wait() }()
		L.SetGlobal("wait", L.NewFunction(func(L *lua.LState) int { time.Sleep(600 * time.Millisecond); return 0 }))
		fn, err := L.LoadString("wait() local x = 1")
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		w.Start()
		err = L.PCall(0, 0, nil)
		if r := w.Stop(); r == StoppedTime && err == nil {
			t.Fatal("stopped for time, but the call returned without an error")
		}
		return err
	}
	if err := run(4 * runtime.GOMAXPROCS(0)); err != nil {
		t.Errorf("a call waiting while the CPU is busy was stopped: %v", err)
	}
	if err := run(0); err == nil {
		t.Error("a call that took 600 ms of a 200 ms limit with the CPU free was not stopped")
	}
}

// TestWatchdogChargesLongLibraryCallUnderLoad: a library call that works
// for long in one Go call (a pattern that backtracks) while other
// goroutines keep the CPU busy is charged for its time and stopped at the
// limit: it tells the watchdog that it runs, as the VM does. Before, it
// ran no Lua, looked starved, and was not charged at all while the CPU
// was busy.
func TestWatchdogChargesLongLibraryCallUnderLoad(t *testing.T) {
	L := Sandbox(64 << 20)
	defer L.Close()
	w := NewWatchdog(L, 100*time.Millisecond, 64<<20)
	defer w.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				runtime.Gosched()
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	fn, err := L.LoadString(`return string.rep("a", 20000):find("a-a-a-b")`)
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	start := time.Now()
	w.Start()
	err = L.PCall(0, 0, nil)
	r := w.Stop()
	// The busy goroutines share the CPU with the call: generous.
	if took := time.Since(start); r != StoppedTime || err == nil || took > 5*time.Second {
		t.Errorf("stopped %v (%v) after %v; want stopped for time at about 100 ms", r, err, took)
	}
}
