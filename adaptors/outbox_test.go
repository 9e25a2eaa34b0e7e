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
