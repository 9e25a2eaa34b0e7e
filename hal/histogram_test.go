package hal

import (
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	var h Histogram
	for i := range 1000 {
		h.Add(time.Duration(i) * time.Microsecond) // 0..999 µs
	}
	h.Add(250 * time.Millisecond)
	s := h.Snapshot()
	if q := Quantile(s, 0.5); q != 501*time.Microsecond {
		t.Errorf("p50 = %v", q)
	}
	if q := Quantile(s, 0.99); q != 991*time.Microsecond {
		t.Errorf("p99 = %v", q)
	}
	if q := Quantile(s, 1); q != 251*time.Millisecond {
		t.Errorf("max = %v", q)
	}
	if q := Quantile(make([]uint64, 10), 0.5); q != 0 {
		t.Errorf("empty = %v", q)
	}
}
