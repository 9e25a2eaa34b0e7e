package motion

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/seatml/seat/hal"
)

// Timing is when each frame of a chain starts and is due.
type Timing struct {
	Start     time.Duration
	Scale     float64
	Starts    []time.Duration // s_k
	Deadlines []time.Duration // d_k
}

// End is the last deadline.
func (t Timing) End() time.Duration {
	if len(t.Deadlines) == 0 {
		return t.Start
	}
	return t.Deadlines[len(t.Deadlines)-1]
}

// ErrDurationAndMultiplier is returned when both are given.
var ErrDurationAndMultiplier = errors.New("give duration or multiplier, not both")

// Plan times a chain (docs/devices.md §6): the scale is duration / chain
// total when a duration is given, else the multiplier (default 1); frame k
// is due at start + round(scale × cumulative duration through k), in whole
// milliseconds, so the chain ends exactly at start + duration.
func Plan(scripts []*Script, start, duration time.Duration, multiplier float64) (Timing, error) {
	if duration > 0 && multiplier != 0 {
		return Timing{}, ErrDurationAndMultiplier
	}
	var total time.Duration
	for _, s := range scripts {
		total += s.Total()
	}
	t := Timing{Start: start, Scale: 1}
	switch {
	case duration > 0 && total > 0:
		t.Scale = float64(duration) / float64(total)
	case multiplier < 0:
		return Timing{}, fmt.Errorf("multiplier %g is negative", multiplier)
	case multiplier > 0:
		t.Scale = multiplier
	}
	var cum time.Duration
	prev := start
	for _, s := range scripts {
		for _, f := range s.Frames {
			cum += f.Duration
			ms := math.Round(t.Scale * float64(cum/time.Millisecond))
			d := start + time.Duration(ms)*time.Millisecond
			t.Starts = append(t.Starts, prev)
			t.Deadlines = append(t.Deadlines, d)
			prev = d
		}
	}
	return t, nil
}

// ServoCommand is one target as a motion plays it.
type ServoCommand struct {
	Motion   string
	Servo    string
	Joint    string
	Position float64 // the joint value: scale × position + offset
	Gain     float64
	Torque   float64
	Time     time.Duration // the frame's deadline
}

// jointPlan holds the commands of one joint.
type jointPlan struct {
	joint    *hal.Joint
	position []hal.Command
	hardness []hal.Command
}

// compile turns a timed chain into per-joint commands and servo commands:
// hardness = clamp(torque/100 × h) at the frame's start, position at its
// deadline (none at torque 0). A later command at the same time replaces an
// earlier one (zero-length frames).
func compile(name string, scripts []*Script, t Timing, servos map[int]Mapping, tree *hal.Tree, h float64) ([]*jointPlan, []ServoCommand) {
	plans := map[string]*jointPlan{}
	var order []*jointPlan
	var cmds []ServoCommand
	put := func(list []hal.Command, c hal.Command) []hal.Command {
		if n := len(list); n > 0 && list[n-1].At == c.At {
			list[n-1] = c
			return list
		}
		return append(list, c)
	}
	k := 0
	for _, s := range scripts {
		for _, f := range s.Frames {
			for _, tg := range f.Targets {
				m, ok := servos[tg.Servo]
				if !ok || m.Joint == "" {
					continue
				}
				j := tree.Joint(m.Joint)
				if j == nil {
					continue
				}
				p := plans[m.Joint]
				if p == nil {
					p = &jointPlan{joint: j}
					plans[m.Joint] = p
					order = append(order, p)
				}
				v := m.Scale*tg.Position + m.Offset
				hard := math.Min(math.Max(tg.Torque/100*h, 0), 1)
				p.hardness = put(p.hardness, hal.Command{Value: hard, At: t.Starts[k]})
				if tg.Torque != 0 {
					p.position = put(p.position, hal.Command{Value: v, At: t.Deadlines[k]})
				}
				cmds = append(cmds, ServoCommand{Motion: name, Servo: tg.ID, Joint: m.Joint, Position: v,
					Gain: tg.Gain, Torque: tg.Torque, Time: t.Deadlines[k]})
			}
			k++
		}
	}
	return order, cmds
}
