package adaptors

import (
	"strings"
	"testing"
)

func TestOutbox(t *testing.T) {
	o := NewOutbox(10)
	if !o.Put("12345") || !o.Put("6789") {
		t.Fatal("puts within the bound failed")
	}
	if o.Put("ab") {
		t.Fatal("a put over the bound succeeded")
	}
	select {
	case <-o.Wait():
	default:
		t.Fatal("no wake-up after Put")
	}
	got := o.Take(nil)
	if strings.Join(got, "|") != "12345|6789" {
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
	b = append(b, Event{Source: "chat", Text: "ping", Done: func() {}})
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
