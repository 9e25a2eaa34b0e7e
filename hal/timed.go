package hal

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// MaxBuffered is how many timed commands one actuator buffers.
const MaxBuffered = 512

// Errors of Set.
var (
	ErrDuplicateTime = errors.New("two commands at the same time")
	ErrBufferFull    = fmt.Errorf("more than %d commands buffered", MaxBuffered)
	ErrNotActuator   = errors.New("not an actuator")
	ErrNaN           = errors.New("NaN command")
)

// Command is a value to reach at engine time At.
type Command struct {
	Value float64
	At    time.Duration
}

// Mode says how new commands combine with buffered ones (docs/devices.md §3).
type Mode int

// Modes.
const (
	Merge       Mode = iota // keep all, insert new (an equal time replaces)
	ClearAll                // drop all, insert new
	ClearAfter              // drop those later than the earliest new
	ClearBefore             // drop those earlier than the latest new
)

var modeNames = []string{"Merge", "ClearAll", "ClearAfter", "ClearBefore"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads a mode name, in any case.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if strings.EqualFold(s, n) {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("mode %q is not one of %s", s, strings.Join(modeNames, ", "))
}

// actuator is the timed-command state of one actuator.
type actuator struct {
	sub      *SubDevice
	buf      []Command // sorted by At
	held     float64   // value held after the last popped command
	out      float64   // last output, before safety scaling
	anchorAt time.Duration
	anchorV  float64
	clamped  int64
	// uncalibrated marks the hardness of a joint without jointZeroPosition (S2).
	uncalibrated bool
	s2Reported   bool
}

// insert adds commands (already checked) in a mode.
func (a *actuator) insert(cmds []Command, mode Mode) {
	sorted := append([]Command(nil), cmds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].At < sorted[j].At })
	switch mode {
	case ClearAll:
		a.buf = a.buf[:0]
	case ClearAfter:
		if len(sorted) == 0 {
			return
		}
		first := sorted[0].At
		keep := a.buf[:0]
		for _, c := range a.buf {
			if c.At <= first {
				keep = append(keep, c)
			}
		}
		a.buf = keep
	case ClearBefore:
		if len(sorted) == 0 {
			return
		}
		last := sorted[len(sorted)-1].At
		keep := a.buf[:0]
		for _, c := range a.buf {
			if c.At >= last {
				keep = append(keep, c)
			}
		}
		a.buf = keep
	}
	for _, c := range sorted {
		i := sort.Search(len(a.buf), func(i int) bool { return a.buf[i].At >= c.At })
		if i < len(a.buf) && a.buf[i].At == c.At {
			a.buf[i] = c // a command at the time of a buffered one replaces it
			continue
		}
		a.buf = append(a.buf, Command{})
		copy(a.buf[i+1:], a.buf[i:])
		a.buf[i] = c
	}
}

// wouldHold reports how many commands the buffer would hold after insert.
func (a *actuator) wouldHold(cmds []Command, mode Mode) int {
	b := &actuator{buf: append([]Command(nil), a.buf...)}
	b.insert(cmds, mode)
	return len(b.buf)
}

// advance runs steps 1-3 of the cycle for one actuator at now; prev is the
// previous cycle's time.
func (a *actuator) advance(now, prev time.Duration) float64 {
	popped := false
	for len(a.buf) > 0 && a.buf[0].At <= now {
		c := a.buf[0]
		a.buf = a.buf[1:]
		a.held, a.anchorAt, a.anchorV = c.Value, c.At, c.Value
		popped = true
	}
	if !popped {
		a.anchorAt, a.anchorV = prev, a.out
	}
	out := a.held
	if len(a.buf) > 0 && a.sub.Interpolate {
		c := a.buf[0]
		if span := c.At - a.anchorAt; span > 0 {
			out = a.anchorV + (c.Value-a.anchorV)*float64(now-a.anchorAt)/float64(span)
		}
	}
	a.out = out
	return out
}

// hold makes the actuator hold v from now, dropping the commands due (S1).
func (a *actuator) hold(v float64, now time.Duration) {
	for len(a.buf) > 0 && a.buf[0].At <= now {
		a.buf = a.buf[1:]
	}
	a.held, a.out, a.anchorAt, a.anchorV = v, v, now, v
}

// quantize clamps v into [Min, Max] and converts it to a raw step and back
// (docs/devices.md §3): round half away from zero, one step inward if the
// step would leave the range.
func quantize(s *SubDevice, v float64) (int32, float64) {
	v = math.Min(math.Max(v, s.Min), s.Max)
	r := math.Round((v - s.Offset) / s.Gain)
	if r*s.Gain+s.Offset > s.Max {
		r--
	} else if r*s.Gain+s.Offset < s.Min {
		r++
	}
	return int32(r), r*s.Gain + s.Offset
}

// truncate drops the buffered commands later than after.
func (a *actuator) truncate(after time.Duration) {
	keep := a.buf[:0]
	for _, c := range a.buf {
		if c.At <= after {
			keep = append(keep, c)
		}
	}
	a.buf = keep
}
