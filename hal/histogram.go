package hal

import (
	"sync/atomic"
	"time"
)

// Histogram counts durations: 1 µs buckets up to 1 ms, 1 ms buckets up to
// 1 s, and one bucket beyond. Adding is lock-free and allocation-free.
type Histogram struct {
	counts [2001]atomic.Uint64
}

func bucketOf(d time.Duration) int {
	switch us := d.Microseconds(); {
	case us < 0:
		return 0
	case us < 1000:
		return int(us)
	case us < 1_000_000:
		return 1000 + int(us/1000) - 1
	default:
		return 2000
	}
}

// upper returns the largest duration a bucket holds.
func upper(i int) time.Duration {
	switch {
	case i < 1000:
		return time.Duration(i+1) * time.Microsecond
	case i < 2000:
		return time.Duration(i-1000+2) * time.Millisecond
	}
	return time.Hour
}

// Add counts one duration.
func (h *Histogram) Add(d time.Duration) { h.counts[bucketOf(d)].Add(1) }

// Snapshot copies the counts.
func (h *Histogram) Snapshot() []uint64 {
	out := make([]uint64, len(h.counts))
	for i := range h.counts {
		out[i] = h.counts[i].Load()
	}
	return out
}

// Quantile returns the duration below which a fraction q of the counts fall
// (to the bucket's upper bound), from a snapshot or a difference of two.
func Quantile(counts []uint64, q float64) time.Duration {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	want := uint64(q * float64(total))
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen > want || seen == total {
			return upper(i)
		}
	}
	return upper(len(counts) - 1)
}
