package hal

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// DefaultSimSpeed is the simulator's joint speed limit, rad/s.
const DefaultSimSpeed = 5.0

// S4Timeout is how long a board drives its joints without an actuator
// frame (safety rule S4).
const S4Timeout = 500 * time.Millisecond

// Sim is the deterministic simulated backend (docs/devices.md §5, "The
// simulator"). A driven joint's position sensor moves toward the last
// written position by at most its speed times the time since the last write,
// so a sensor trails its actuator by one cycle. Other sensors hold injected
// values.
type Sim struct {
	// Speed is the default joint speed (rad/s); +Inf jumps.
	Speed float64

	mu        sync.Mutex
	tree      *Tree
	state     []float64 // per handle: sensor state
	target    []float64 // per joint: last position written
	hardness  []float64 // per joint: last hardness written
	lastFrame []time.Duration
	seen      []bool // per device: a frame ever arrived
	lastWrite time.Duration
	wrote     bool
	dropped   []bool
	stuck     map[int]int32
}

// NewSim returns a simulator with the default speed.
func NewSim() *Sim { return &Sim{Speed: DefaultSimSpeed} }

// Open sizes the simulation for t; sensors start at their initial values.
func (s *Sim) Open(_ context.Context, t *Tree) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tree = t
	s.state = make([]float64, len(t.Subs))
	for i, sub := range t.Subs {
		s.state[i] = sub.Initial
	}
	s.target = make([]float64, len(t.Joints))
	s.hardness = make([]float64, len(t.Joints))
	for i, j := range t.Joints {
		s.target[i] = j.Sensor.Initial
	}
	s.lastFrame = make([]time.Duration, len(t.Devices))
	s.seen = make([]bool, len(t.Devices))
	s.dropped = make([]bool, len(t.Devices))
	s.stuck = map[int]int32{}
	return nil
}

// raw is what sub's device reports for the value v: quantized as the engine
// quantizes actuators, one step inward where the nearest step would leave
// [Min, Max] (a joint at HeadYaw's 2.0857 reads 1359 steps of 2pi/4096,
// 2.08468, not 1360, 2.08621).
func raw(sub *SubDevice, v float64) int32 {
	r, _ := quantize(sub, v)
	return r
}

// Read reports every sensor: dropped devices answer nothing, stuck sensors
// repeat their reading.
func (s *Sim) Read(_ context.Context, _ time.Duration, f *SensorFrame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.tree.Devices {
		f.Status[d.Index] = Answered
		if s.dropped[d.Index] {
			f.Status[d.Index] = NoAnswer
		}
	}
	for i, sub := range s.tree.Subs {
		if sub.IsActuator() || s.dropped[sub.Device.Index] {
			continue
		}
		if r, ok := s.stuck[i]; ok {
			f.Raw[i] = r
			continue
		}
		f.Raw[i] = raw(sub, s.state[i])
	}
	return nil
}

// Write takes the actuator frame (lost for dropped devices) and moves the
// joints.
func (s *Sim) Write(_ context.Context, now time.Duration, f *ActuatorFrame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dt := time.Duration(0)
	if s.wrote {
		dt = now - s.lastWrite
	}
	s.lastWrite, s.wrote = now, true
	for _, d := range s.tree.Devices {
		f.Status[d.Index] = Answered
		if s.dropped[d.Index] {
			f.Status[d.Index] = NoAnswer
			continue
		}
		s.lastFrame[d.Index], s.seen[d.Index] = now, true
	}
	for i, j := range s.tree.Joints {
		d := j.Position.Device.Index
		if !s.dropped[d] {
			s.target[i] = float64(f.Raw[j.Position.Handle])*j.Position.Gain + j.Position.Offset
			s.hardness[i] = float64(f.Raw[j.Hardness.Handle])*j.Hardness.Gain + j.Hardness.Offset
		}
		driven := s.hardness[i] > 0 && s.seen[d] && now-s.lastFrame[d] <= S4Timeout
		if !driven {
			continue
		}
		speed := s.Speed
		if j.Position.MaxSpeed > 0 {
			speed = j.Position.MaxSpeed
		}
		h := j.Sensor.Handle
		step := speed * dt.Seconds()
		diff := s.target[i] - s.state[h]
		if math.IsInf(speed, 1) || math.Abs(diff) <= step {
			s.state[h] = s.target[i]
		} else {
			s.state[h] += math.Copysign(step, diff)
		}
	}
	return nil
}

// Close does nothing.
func (s *Sim) Close() error { return nil }

// Inject sets a sensor's simulated value; it shows after the next Read.
func (s *Sim) Inject(path string, v float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.tree.Resolve(path)
	if !ok || sub.IsActuator() {
		return fmt.Errorf("inject %q: not a sensor", path)
	}
	s.state[sub.Handle] = math.Min(math.Max(v, sub.Min), sub.Max)
	return nil
}

// State returns a subdevice's simulated value (the true joint position for
// a position sensor, whatever its device reports).
func (s *Sim) State(path string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.tree.Resolve(path)
	if !ok {
		return math.NaN()
	}
	return s.state[sub.Handle]
}

// DropDevice makes a device stop answering: Nack grows, its sensors freeze
// and writes to it are lost.
func (s *Sim) DropDevice(name string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.tree.Device(name)
	if d == nil {
		return fmt.Errorf("drop %q: no such device", name)
	}
	s.dropped[d.Index] = on
	return nil
}

// StickSensor freezes a sensor's reading while its device keeps answering.
func (s *Sim) StickSensor(path string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.tree.Resolve(path)
	if !ok || sub.IsActuator() {
		return fmt.Errorf("stick %q: not a sensor", path)
	}
	if on {
		s.stuck[sub.Handle] = raw(sub, s.state[sub.Handle])
	} else {
		delete(s.stuck, sub.Handle)
	}
	return nil
}

var (
	_ Backend  = (*Sim)(nil)
	_ Injector = (*Sim)(nil)
)
