package adaptors

import (
	"sync"
	"testing"
	"time"
)

// TestBatonPassesTheReadingWhileTheSinkWorks: a reader whose sink holds it
// (a slow script) passes its baton; the next input is read by a new
// goroutine while the first is still inside the sink, and the first
// returns as soon as the sink lets it go. Exactly one goroutine reads at a
// time, and Pass does nothing unless the holder runs the behavior.
func TestBatonPassesTheReadingWhileTheSinkWorks(t *testing.T) {
	input := make(chan string, 3)
	input <- "slow"
	input <- "answer"
	release := make(chan struct{})
	read := make(chan string, 3)
	var reading sync.Mutex // held by whoever reads: TryLock fails if two do
	var b *Baton
	var wg sync.WaitGroup
	var loop func()
	loop = func() {
		defer wg.Done()
		leg := b.Take()
		for {
			if !reading.TryLock() {
				t.Error("two goroutines read at once")
				return
			}
			text, ok := <-input
			reading.Unlock()
			if !ok {
				return
			}
			read <- text
			leg.Deliver()
			if text == "slow" {
				held := b.Holder() // the sink, on the delivering goroutine
				held.Pass()        // not running the behavior: nothing happens
				if !held.Run() {
					t.Error("the delivering reader could not run the behavior")
				}
				held.Pass()
				held.Pass() // a second Pass in the same call does nothing
				<-release
				held.Ran()
			}
			if !leg.Delivered() {
				return // passed
			}
		}
	}
	b = NewBaton(func() { wg.Add(1); go loop() })
	wg.Add(1)
	go loop()
	want := []string{"slow", "answer"}
	for _, w := range want {
		select {
		case got := <-read:
			if got != w {
				t.Fatalf("read %q, want %q", got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q was not read while the sink held the first reader", w)
		}
	}
	close(release)
	b.Holder().Pass() // the holder is reading, not delivering: nothing happens
	close(input)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the readers did not end")
	}
}

// TestBatonIsNotPassedWhileTheHolderWaitsToQueue: a reader inside Deliver
// that has not started running the behavior (it waits for room in a full
// queue, holding its event) keeps its reading: a reader started then
// would race it to the queue with the next line.
func TestBatonIsNotPassedWhileTheHolderWaitsToQueue(t *testing.T) {
	passed := 0
	b := NewBaton(func() { passed++ })
	leg := b.Take()
	leg.Deliver()
	b.Holder().Pass() // a slow script of another reader's event
	if passed != 0 || !leg.Delivered() {
		t.Fatalf("a delivering reader not running the behavior was passed on")
	}
	leg.Deliver()
	held := b.Holder()
	held.Run()
	held.Pass()
	held.Ran()
	if passed != 1 || leg.Delivered() {
		t.Fatalf("the reader running the behavior was not passed on (passed %d)", passed)
	}
	if held.Run() {
		t.Fatal("a passed reader ran the behavior again")
	}
	var none *Baton
	none.Holder().Pass() // no baton (a connection's arrival): nothing happens
}
