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
// time, and Pass outside the sink does nothing.
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
				b.Pass()
				b.Pass() // a second Pass in the same call does nothing
				<-release
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
	b.Pass() // the holder is reading, not delivering: nothing happens
	close(input)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the readers did not end")
	}
}
