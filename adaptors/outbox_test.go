package adaptors

import (
	"strings"
	"testing"
	"time"
)

func TestOutbox(t *testing.T) {
	o := NewOutbox(Tuning{QueueBytes: 10, StallTime: 20 * time.Millisecond})
	if !o.Put("12345") || !o.Put("6789") {
		t.Fatal("puts within the bound failed")
	}
	// Over the bound is a burst until the writer has taken nothing for the
	// stall time: then the peer is not reading.
	if !o.Put("ab") {
		t.Fatal("a put just over the bound failed at once")
	}
	time.Sleep(30 * time.Millisecond) // the stall time passes with nothing taken
	if o.Put("cd") {
		t.Fatal("a put over the bound succeeded after the stall time")
	}
	select {
	case <-o.Wait():
	default:
		t.Fatal("no wake-up after Put")
	}
	got := o.Take(nil)
	if strings.Join(got, "|") != "12345|6789|ab" {
		t.Fatalf("Take = %q", got)
	}
	if !o.Put("ab") {
		t.Fatal("Take did not free the bound")
	}
	// One item larger than the bound still fits into an empty outbox.
	o.Take(nil)
	if !o.Put(strings.Repeat("x", 20)) {
		t.Fatal("a large item into an empty outbox failed")
	}
	// Never past the hard bound, however fast the writer.
	o.Take(nil)
	if !o.Put("x") || !o.Put(strings.Repeat("y", HardQueueFactor*10-2)) {
		t.Fatal("puts up to the hard bound failed")
	}
	if o.Put("zz") {
		t.Fatal("a put past the hard bound succeeded")
	}
	o.Close()
	if o.Put("x") {
		t.Fatal("Put after Close succeeded")
	}
}

func TestBatchReuse(t *testing.T) {
	b := NewBatch()
	if len(b) != 0 || cap(b) != BatchCap {
		t.Fatalf("NewBatch: len %d cap %d", len(b), cap(b))
	}
	b = append(b, Event{Source: "chat", Text: "ping", Done: func(bool) {}})
	held := b[:1]
	ReleaseBatch(b)
	if held[0].Text != "" || held[0].Done != nil {
		t.Errorf("a released batch still holds its events: %+v", held[0])
	}
	ReleaseBatch(make([]Event, 3, 200)) // a grown batch is not kept...
	ReleaseBatch(nil)                   // ...nor is nothing
	for range 3 {                       // ...so whatever the pool returns is empty and full-sized
		if c := NewBatch(); len(c) != 0 || cap(c) != BatchCap {
			t.Errorf("NewBatch after release: len %d cap %d", len(c), cap(c))
		}
	}
}

func TestOutboxBurstWakesTheWriter(t *testing.T) {
	// Output held until Flush (Add) still wakes the writer once the queue
	// passes half its bound, so a burst from one action is written while
	// it is being made.
	o := NewOutbox(Tuning{QueueBytes: 100})
	if ok, first := o.Add(strings.Repeat("a", 40)); !ok || !first {
		t.Fatal("first add")
	}
	select {
	case <-o.Wait():
		t.Fatal("woken below half the bound")
	default:
	}
	o.Add(strings.Repeat("b", 20))
	select {
	case <-o.Wait():
	default:
		t.Fatal("not woken past half the bound")
	}
}
