package hal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// --- Memory (docs/devices.md §2) ---

func TestMemoryGetSetPrefix(t *testing.T) {
	now := 5 * ms
	m := NewMemory(func() time.Duration { return now })
	if err := m.Set("b/x", 1.5); err != nil {
		t.Fatal(err)
	}
	m.Set("a/y", "hi")
	m.Set("a/x", true)
	v, at, ok := m.Get("b/x")
	if !ok || v != 1.5 || at != 5*ms {
		t.Errorf("Get = %v %v %v", v, at, ok)
	}
	var keys []string
	for _, kv := range m.GetPrefix("a/") {
		keys = append(keys, kv.Key)
	}
	if diff := cmp.Diff([]string{"a/x", "a/y"}, keys); diff != "" {
		t.Error(diff)
	}
	if err := m.Set("Device/SubDeviceList/X/Sensor/Value", 1.0); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Set on Device/ = %v", err)
	}
}

func TestMemoryEvents(t *testing.T) {
	m := NewMemory(func() time.Duration { return 0 })
	sub := m.Subscribe("k/", 16)
	m.Set("k/a", 1.0)
	m.Set("k/a", 1.0) // Set always raises an event
	m.write("k/b", 2.0, 0)
	m.write("k/b", 2.0, 0) // an unchanged reading never does
	m.Set("other", 3.0)
	m.Set("k/c", []any{1.0, "x"})
	var got []string
	for len(sub.C()) > 0 {
		e := <-sub.C()
		got = append(got, e.Key+"="+e.Text())
	}
	if diff := cmp.Diff([]string{"k/a=1", "k/a=1", "k/b=2", `k/c=[1,"x"]`}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	sub.Close()
	if _, open := <-sub.C(); open {
		t.Error("channel open after Close")
	}
	m.Set("k/a", 2.0) // no panic after Close
}

func TestSlowSubscriberDropsAndNeverSlowsTheCycle(t *testing.T) {
	e := newEngine(t, NAOTree())
	sub := e.Memory().Subscribe("Device/SubDeviceList/HeadYaw/", 4) // never read
	e.Set("HeadYaw/Hardness/Actuator", []Command{{1, 0}}, ClearAll)
	e.Set("HeadYaw/Position/Actuator", []Command{{1, 1000 * ms}}, ClearAll)
	steps(t, e, 1000*ms)
	if sub.Dropped() == 0 {
		t.Fatal("no event dropped")
	}
	events := sub.Dropped() + uint64(len(sub.C()))
	if len(sub.C()) != 4 || sub.Dropped() != events-4 {
		t.Errorf("buffer %d, dropped %d of %d: Dropped must be events - buffer", len(sub.C()), sub.Dropped(), events)
	}
}

// --- Timed commands (§3) ---

func TestModes(t *testing.T) {
	base := []Command{{1, 100 * ms}, {2, 200 * ms}, {3, 300 * ms}}
	newer := []Command{{10, 150 * ms}, {20, 250 * ms}}
	for _, c := range []struct {
		mode Mode
		want []float64
	}{
		{Merge, []float64{1, 10, 2, 20, 3}},
		{ClearAll, []float64{10, 20}},
		{ClearAfter, []float64{1, 10, 20}},
		{ClearBefore, []float64{10, 20, 3}},
	} {
		t.Run(c.mode.String(), func(t *testing.T) {
			a := &actuator{}
			a.insert(base, Merge)
			a.insert(newer, c.mode)
			var got []float64
			for _, x := range a.buf {
				got = append(got, x.Value)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	a := &actuator{}
	a.insert(base, Merge)
	a.insert(nil, ClearAfter)
	a.insert(nil, ClearBefore)
	if len(a.buf) != 3 {
		t.Errorf("ClearAfter/ClearBefore without commands changed the buffer: %v", a.buf)
	}
	a.insert([]Command{{9, 200 * ms}}, Merge)
	if a.buf[1].Value != 9 || len(a.buf) != 3 {
		t.Errorf("a command at a buffered time must replace it: %v", a.buf)
	}
}

func TestClearAllWithNothingKeepsHeldValue(t *testing.T) {
	e := newEngine(t, NAOTree())
	led := "ChestBoard/Led/Green/Actuator"
	e.Set(led, []Command{{1, 0}}, ClearAll)
	steps(t, e, 50*ms)
	e.Set(led, []Command{{0, 500 * ms}}, ClearAll)
	e.Set(led, nil, ClearAll)
	steps(t, e, 600*ms)
	if v := value(t, e, led); v != 1 {
		t.Errorf("value %v, want the held 1", v)
	}
}

func TestHardnessRamp(t *testing.T) {
	// Hardness 0 at t = 0, a command 1.0 @ 100 -> 0.1, 0.2 ... 1.0.
	e := newEngine(t, NAOTree())
	h := "HeadYaw/Hardness/Actuator"
	if err := e.Step(0); err != nil {
		t.Fatal(err)
	}
	e.Set(h, []Command{{1, 100 * ms}}, ClearAll)
	var got []float64
	for now := 10 * ms; now <= 120*ms; now += 10 * ms {
		e.Step(now)
		got = append(got, math.Round(value(t, e, h)*1000)/1000)
	}
	want := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1, 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPastCommandAppliesNextCycle(t *testing.T) {
	e := newEngine(t, NAOTree())
	steps(t, e, 100*ms)
	led := "Ears/Led/Left/0Deg/Actuator"
	e.Set(led, []Command{{1, 10 * ms}}, ClearAll)
	if v := value(t, e, led); v != 0 {
		t.Fatalf("applied before a cycle: %v", v)
	}
	e.Step(110 * ms)
	if v := value(t, e, led); v != 1 {
		t.Errorf("value %v after the next cycle, want 1", v)
	}
}

func TestInterpolationModesOnATimeline(t *testing.T) {
	// A timeline on one LED (gain 1/254): Merge adds a mid point, ClearAfter
	// replaces the end, ClearBefore keeps only the end; a non-interpolating
	// actuator jumps.
	e := newEngine(t, NAOTree())
	led := "ChestBoard/Led/Red/Actuator"
	read := func(at time.Duration) float64 { steps(t, e, at); return math.Round(value(t, e, led)*100) / 100 }
	e.Step(0)
	e.Set(led, []Command{{1, 100 * ms}}, ClearAll)
	e.Set(led, []Command{{0, 50 * ms}}, Merge) // 0 -> 0 over 50 ms, then to 1 at 100
	if got := []float64{read(20 * ms), read(50 * ms), read(80 * ms), read(100 * ms)}; !cmp.Equal(got, []float64{0, 0, 0.6, 1}) {
		t.Errorf("Merge timeline %v", got)
	}
	e.Set(led, []Command{{0, 200 * ms}, {1, 300 * ms}}, ClearAll)
	e.Set(led, []Command{{0.5, 250 * ms}}, ClearAfter) // drops 300
	if got := []float64{read(200 * ms), read(230 * ms), read(250 * ms), read(300 * ms)}; !cmp.Equal(got, []float64{0, 0.3, 0.5, 0.5}) {
		t.Errorf("ClearAfter timeline %v", got)
	}
	e.Set(led, []Command{{1, 400 * ms}, {0, 500 * ms}}, ClearAll)
	e.Set(led, []Command{{0, 450 * ms}}, ClearBefore) // drops 400
	if got := []float64{read(350 * ms), read(450 * ms), read(500 * ms)}; !cmp.Equal(got, []float64{0.33, 0, 0}) {
		t.Errorf("ClearBefore timeline %v", got)
	}
	us := "US/Actuator"
	e.Set(us, []Command{{40, 600 * ms}}, ClearAll)
	if got := []float64{read(590 * ms), read(600 * ms)}; got[0] != 0 || value(t, e, us) != 40 {
		t.Errorf("non-interpolating actuator %v, %v", got, value(t, e, us))
	}
}

func TestSetRejects(t *testing.T) {
	e := newEngine(t, NAOTree())
	if err := e.Set("HeadYaw/Position/Sensor", []Command{{1, 0}}, ClearAll); !errors.Is(err, ErrNotActuator) {
		t.Errorf("sensor: %v", err)
	}
	if err := e.Set("HeadYaw/Position/Actuator", []Command{{math.NaN(), 0}}, ClearAll); !errors.Is(err, ErrNaN) {
		t.Errorf("NaN: %v", err)
	}
	if err := e.Set("HeadYaw/Position/Actuator", []Command{{1, 5 * ms}, {2, 5 * ms}}, ClearAll); !errors.Is(err, ErrDuplicateTime) {
		t.Errorf("duplicate: %v", err)
	}
	cmds := make([]Command, 512)
	for i := range cmds {
		cmds[i] = Command{0.1, time.Duration(i+1) * ms}
	}
	key := SubPrefix + "HeadYaw/Position/Actuator/Value"
	if err := e.Set(key, cmds, ClearAll); err != nil {
		t.Fatalf("512 commands: %v", err)
	}
	if err := e.Set(key, []Command{{0.2, time.Hour}}, Merge); !errors.Is(err, ErrBufferFull) {
		t.Errorf("513th: %v", err)
	}
	if n := len(e.Buffered(e.Tree().Sub("HeadYaw/Position/Actuator"))); n != 512 {
		t.Errorf("a rejected call changed the buffer: %d", n)
	}
}

func TestClampingAndQuantization(t *testing.T) {
	e := newEngine(t, NAOTree())
	e.Set("HeadYaw/Hardness/Actuator", []Command{{1, 0}}, ClearAll)
	e.Set("HeadYaw/Position/Actuator", []Command{{3.0, 0}}, ClearAll)
	steps(t, e, 20*ms)
	v := value(t, e, "HeadYaw/Position/Actuator")
	g := 2 * math.Pi / 65536
	if v > 2.0857 || v < 2.0857-g {
		t.Errorf("HeadYaw asked 3.0 stores %v, want the last step at or below 2.0857", v)
	}
	if c, _, _ := e.Memory().Get(SubPrefix + "HeadYaw/Position/Actuator/Clamped"); c != int64(1) {
		t.Errorf("Clamped = %v, want 1", c)
	}
	e.Set("HeadYaw/Position/Actuator", []Command{{0.5, 0}}, ClearAll)
	steps(t, e, 30*ms)
	if v := value(t, e, "HeadYaw/Position/Actuator"); math.Abs(v-5215*g) > 1e-12 || math.Abs(v-0.499982) > 1e-6 {
		t.Errorf("HeadYaw asked 0.5 stores %v, want 5215 x gain = 0.499982", v)
	}
	for _, c := range []struct {
		path string
		want float64
	}{
		{"Ears/Led/Left/0Deg/Actuator", 0.4},
		{"Face/Led/Red/Left/0Deg/Actuator", 25.0 / 63}, // 64 levels: 0.396825
		{"ChestBoard/Led/Red/Actuator", 102.0 / 254},   // 0.401575
	} {
		e.Set(c.path, []Command{{0.4, 0}}, ClearAll)
		steps(t, e, e.Now()+10*ms)
		if v := value(t, e, c.path); math.Abs(v-c.want) > 1e-12 {
			t.Errorf("%s asked 0.4 stores %v, want %v", c.path, v, c.want)
		}
	}
}

// TestMemorySetBesideACommandDoesNotDeadlock: a behavior's seat.set
// (Memory.Set) and a command the engine clamps (it writes .../Clamped
// under the engine's lock) run at once. Set read the engine time while
// holding the memory's lock, and the engine wrote memory while holding
// its own: each waited for the other's lock, forever; seat's device loop
// and the behavior hung (cmd/seat TestDeliveryMatrix lost its memory
// event about once in 40 runs under load).
func TestMemorySetBesideACommandDoesNotDeadlock(t *testing.T) {
	e := newEngine(t, NAOTree())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 20000 {
				e.Memory().Set("flag", i)
			}
		}()
		go func() {
			defer wg.Done()
			for range 20000 {
				e.Set("HeadYaw/Position/Actuator", []Command{{3.0, 0}}, ClearAll) // clamped: a memory write
			}
		}()
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Memory.Set and Engine.Set deadlocked")
	}
}

// --- Safety (§4), one test per rule ---

func TestS1HardnessZeroFollowsSensor(t *testing.T) {
	e := newEngine(t, NAOTree())
	if err := e.Inject("HeadYaw/Position/Sensor", 0.3); err != nil {
		t.Fatal(err)
	}
	e.Set("HeadYaw/Position/Actuator", []Command{{-1, 0}}, ClearAll)
	steps(t, e, 50*ms)
	if v := value(t, e, "HeadYaw/Position/Actuator"); math.Abs(v-0.3) > 0.002 {
		t.Fatalf("hardness 0: actuator %v, want the sensor's 0.3", v)
	}
	// Re-stiffening starts where the joint is: the dropped command does not return.
	e.Set("HeadYaw/Hardness/Actuator", []Command{{1, 0}}, ClearAll)
	steps(t, e, 100*ms)
	if v := value(t, e, "HeadYaw/Position/Actuator"); math.Abs(v-0.3) > 0.002 {
		t.Errorf("after re-stiffening: actuator %v, want 0.3", v)
	}
}

func TestS2UncalibratedJointHasNoHardness(t *testing.T) {
	tree := NAOTree()
	tree.Joint("HeadYaw").Sensor.Extra["jointZeroPosition"] = "0"
	e := newEngine(t, tree)
	e.Set("HeadYaw/Hardness/Actuator", []Command{{1, 0}}, ClearAll)
	steps(t, e, 50*ms)
	if v := value(t, e, "HeadYaw/Hardness/Actuator"); v != 0 {
		t.Errorf("hardness %v, want 0", v)
	}
	if c, _, _ := e.Memory().Get(SubPrefix + "HeadYaw/Hardness/Actuator/Clamped"); c != int64(1) {
		t.Errorf("Clamped %v", c)
	}
	errs := e.Errors("HeadYaw/Hardness/Actuator")
	if len(errs) != 1 || errs[0].Level != 4 {
		t.Errorf("errors %v, want one level-4 entry", errs)
	}
	if v := value(t, e, "HeadPitch/Hardness/Actuator"); v != 0 {
		t.Errorf("other joints unaffected: %v", v)
	}
}

func TestS3LateLoopCutsHardnessThenRamps(t *testing.T) {
	e := newEngine(t, NAOTree())
	h := "LKneePitch/Hardness/Actuator"
	e.Set(h, []Command{{1, 0}}, ClearAll)
	steps(t, e, 100*ms)
	e.Step(610 * ms) // a 510 ms gap
	if v := value(t, e, h); v != 0 {
		t.Fatalf("after a 510 ms gap hardness %v, want 0", v)
	}
	if s := e.Stats(); s.HardnessCuts != 1 || s.LateCycles != 1 {
		t.Errorf("stats %+v", s)
	}
	steps(t, e, 1610*ms)
	if v := value(t, e, h); math.Abs(v-0.5) > 0.001 {
		t.Errorf("1 s after recovery hardness %v, want 0.5", v)
	}
	steps(t, e, 2610*ms)
	if v := value(t, e, h); v != 1 {
		t.Errorf("2 s after recovery hardness %v, want 1", v)
	}
}

func TestS3ShortGapChangesNothing(t *testing.T) {
	e := newEngine(t, NAOTree())
	h := "LKneePitch/Hardness/Actuator"
	e.Set(h, []Command{{1, 0}}, ClearAll)
	steps(t, e, 100*ms)
	e.Step(590 * ms) // a 490 ms gap
	if v := value(t, e, h); v != 1 {
		t.Errorf("after a 490 ms gap hardness %v, want 1", v)
	}
	if s := e.Stats(); s.HardnessCuts != 0 || s.LateCycles != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestS4BoardWithoutFramesStopsDriving(t *testing.T) {
	sim := NewSim()
	sim.Speed = 1 // rad/s: a long move
	e, err := NewEngine(NAOTree(), sim, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Set("HeadYaw/Hardness/Actuator", []Command{{1, 0}}, ClearAll)
	e.Set("HeadYaw/Position/Actuator", []Command{{2, 0}}, ClearAll)
	steps(t, e, 200*ms)
	sim.DropDevice("HeadBoard", true)
	dropAt := e.Now()
	var stoppedAt time.Duration
	last := sim.State("HeadYaw/Position/Sensor")
	for now := dropAt + 10*ms; now <= dropAt+1000*ms; now += 10 * ms {
		e.Step(now)
		cur := sim.State("HeadYaw/Position/Sensor")
		if cur == last && stoppedAt == 0 {
			stoppedAt = now
		}
		if cur != last && stoppedAt != 0 {
			t.Fatalf("moved again at %v", now)
		}
		last = cur
	}
	if d := stoppedAt - dropAt; d < S4Timeout || d > S4Timeout+20*ms {
		t.Errorf("joint stopped %v after the drop, want 500 ms (+ 1 cycle)", d)
	}
	var level5 int
	for _, x := range e.Errors("HeadBoard") {
		if x.Level == 5 {
			level5++
		}
	}
	if level5 != 1 {
		t.Errorf("%d level-5 entries, want 1: %v", level5, e.Errors("HeadBoard"))
	}
}

// TestNothingReadsOutsideItsRange drives every joint to both of its limits
// and injects every sensor at both ends of its range: no actuator or
// sensor value leaves [Min, Max] on any cycle. A limit between two sensor
// steps (HeadYaw's 2.0857 lies between 1359 and 1360 x 2pi/4096) reads the
// step inside it, as the actuators quantize.
func TestNothingReadsOutsideItsRange(t *testing.T) {
	tree := NAOTree()
	e := newEngine(t, tree)
	check := func(when string) {
		t.Helper()
		var out []string
		for _, s := range tree.Subs {
			if v := value(t, e, s.Name); v < s.Min || v > s.Max {
				out = append(out, fmt.Sprintf("%s reads %v, outside %v..%v", s.Name, v, s.Min, s.Max))
			}
		}
		if len(out) > 0 {
			t.Fatalf("%s:\n%s", when, strings.Join(out, "\n"))
		}
	}
	for _, j := range tree.Joints {
		e.SetSub(j.Hardness, []Command{{1, 0}}, ClearAll)
	}
	for _, far := range []float64{3, -3} { // beyond every joint's range: clamped to it
		for _, j := range tree.Joints {
			e.SetSub(j.Position, []Command{{far, 0}}, ClearAll)
		}
		until := e.Now() + 1500*ms // 5 rad/s: every joint reaches its limit
		for e.Now() < until {
			steps(t, e, e.Now()+10*ms)
			check(fmt.Sprintf("driving to %v, at %v", far, e.Now()))
		}
		for _, j := range tree.Joints {
			limit := j.Position.Max
			if far < 0 {
				limit = j.Position.Min
			}
			if v := value(t, e, j.Sensor.Name); math.Abs(v-limit) > j.Sensor.Gain {
				t.Errorf("%s reads %v, want within one step of its limit %v", j.Sensor.Name, v, limit)
			}
		}
	}
	for _, end := range []string{"Max", "Min"} {
		for _, s := range tree.Subs {
			if s.IsActuator() {
				continue
			}
			v := s.Max
			if end == "Min" {
				v = s.Min
			}
			if err := e.Inject(s.Name, v); err != nil {
				t.Fatal(err)
			}
		}
		steps(t, e, e.Now()+10*ms)
		check("sensors injected at their " + end)
	}
}

// --- Backends (§5) ---

func TestIdealSimulatorTrailsOneCycle(t *testing.T) {
	sim := NewSim()
	sim.Speed = math.Inf(1)
	e, _ := NewEngine(NAOTree(), sim, Options{})
	e.Set("HeadPitch/Hardness/Actuator", []Command{{1, 0}}, ClearAll)
	e.Set("HeadPitch/Position/Actuator", []Command{{0.5, 200 * ms}}, ClearAll)
	prevAct := 0.0
	step := 2 * math.Pi / 4096
	for now := time.Duration(0); now <= 300*ms; now += 10 * ms {
		e.Step(now)
		sens := value(t, e, "HeadPitch/Position/Sensor")
		if now > 10*ms && math.Abs(sens-prevAct) > step {
			t.Fatalf("at %v sensor %v, previous actuator %v", now, sens, prevAct)
		}
		prevAct = value(t, e, "HeadPitch/Position/Actuator")
	}
}

func TestSlewLimitAndHardnessZero(t *testing.T) {
	e := newEngine(t, NAOTree()) // 5 rad/s: 0.05 rad per cycle
	e.Set("HeadYaw/Hardness/Actuator", []Command{{1, 0}}, ClearAll)
	e.Set("HeadYaw/Position/Actuator", []Command{{2, 0}}, ClearAll)
	sim := e.Backend().(*Sim)
	prev := sim.State("HeadYaw/Position/Sensor")
	for now := time.Duration(0); now < 300*ms; now += 10 * ms {
		e.Step(now)
		cur := sim.State("HeadYaw/Position/Sensor")
		if cur-prev > 0.05+1e-9 {
			t.Fatalf("moved %v in one cycle", cur-prev)
		}
		prev = cur
	}
	// The joints reach their targets within the sensor's resolution.
	steps(t, e, 1000*ms)
	if v := value(t, e, "HeadYaw/Position/Sensor"); math.Abs(v-2) > 2*math.Pi/4096 {
		t.Errorf("sensor %v, want 2 within one sensor step", v)
	}
	e2 := newEngine(t, NAOTree())
	e2.Set("HeadYaw/Position/Actuator", []Command{{2, 0}}, ClearAll)
	steps(t, e2, 300*ms)
	if v := e2.Backend().(*Sim).State("HeadYaw/Position/Sensor"); v != 0 {
		t.Errorf("hardness 0 moved the joint to %v", v)
	}
}

func TestInjectAndStuckSensor(t *testing.T) {
	e := newEngine(t, NAOTree())
	sim := e.Backend().(*Sim)
	touch := "Head/Touch/Front/Sensor"
	steps(t, e, 10*ms)
	e.Inject(touch, 1)
	if v := value(t, e, touch); v != 0 {
		t.Errorf("injection visible before a cycle: %v", v)
	}
	steps(t, e, 20*ms)
	if v := value(t, e, touch); v != 1 {
		t.Errorf("after a cycle %v, want 1", v)
	}
	sim.StickSensor(touch, true)
	e.Inject(touch, 0)
	ack0, _, _ := e.Memory().Get(DevPrefix + "HeadTouchBoard/Ack")
	steps(t, e, 100*ms)
	ack1, _, _ := e.Memory().Get(DevPrefix + "HeadTouchBoard/Ack")
	if v := value(t, e, touch); v != 1 {
		t.Errorf("stuck sensor reads %v, want 1", v)
	}
	if ack1.(int64) <= ack0.(int64) {
		t.Errorf("Ack did not grow while stuck: %v -> %v", ack0, ack1)
	}
}

func TestDroppedDeviceNackAndErrors(t *testing.T) {
	e := newEngine(t, NAOTree())
	sim := e.Backend().(*Sim)
	steps(t, e, 50*ms)
	sim.DropDevice("ChestBoard", true)
	steps(t, e, 100*ms)
	nack, _, _ := e.Memory().Get(DevPrefix + "ChestBoard/Nack")
	if nack != int64(5) {
		t.Errorf("Nack %v, want 5", nack)
	}
	errs := e.Errors("ChestBoard")
	if len(errs) != 1 || errs[0].Level != 7 {
		t.Fatalf("errors %v, want one level-7 entry", errs)
	}
	sim.DropDevice("ChestBoard", false)
	steps(t, e, 200*ms)
	if errs := e.Errors("ChestBoard"); len(errs) != 2 || errs[1].Level != 0 {
		t.Errorf("errors %v, want level 0 when back", errs)
	}
	steps(t, e, 100*ms+ErrorKeep+10*ms)
	if errs := e.Errors("ChestBoard"); len(errs) != 1 {
		t.Errorf("after 30 s: %v", errs)
	}
	steps(t, e, 200*ms+ErrorKeep+10*ms)
	if errs := e.Errors("ChestBoard"); len(errs) != 0 {
		t.Errorf("after 30 s: %v", errs)
	}
}

func TestStepMustIncreaseAndRunsAreIdentical(t *testing.T) {
	e := newEngine(t, NAOTree())
	e.Step(10 * ms)
	if err := e.Step(10 * ms); !errors.Is(err, ErrTimeNotIncreasing) {
		t.Errorf("repeated Step: %v", err)
	}
	trace := func() []float64 {
		e := newEngine(t, NAOTree())
		e.Set("LShoulderPitch/Hardness/Actuator", []Command{{1, 0}}, ClearAll)
		e.Set("LShoulderPitch/Position/Actuator", []Command{{1, 300 * ms}, {-1, 700 * ms}}, ClearAll)
		var out []float64
		for now := time.Duration(0); now <= time.Second; now += 10 * ms {
			e.Step(now)
			out = append(out, value(t, e, "LShoulderPitch/Position/Sensor"))
		}
		return out
	}
	if diff := cmp.Diff(trace(), trace()); diff != "" {
		t.Errorf("two runs differ:\n%s", diff)
	}
}

// slowBackend overruns every call until released.
type slowBackend struct {
	*Sim
	release chan struct{}
}

func (b *slowBackend) Read(ctx context.Context, now time.Duration, f *SensorFrame) error {
	<-b.release
	return b.Sim.Read(ctx, now, f)
}

func TestOverrunningBackendIsNoAnswerWithoutStall(t *testing.T) {
	b := &slowBackend{Sim: NewSim(), release: make(chan struct{})}
	e, err := NewEngine(NAOTree(), b, Options{CallTimeout: 5 * ms})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for now := time.Duration(0); now <= 50*ms; now += 10 * ms {
			e.Step(now)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the engine stalled on a backend that does not return")
	}
	close(b.release)
	nack, _, _ := e.Memory().Get(DevPrefix + "ChestBoard/Nack")
	if nack != int64(6) {
		t.Errorf("Nack %v, want 6 (every cycle)", nack)
	}
}

func TestStiffAndRampDown(t *testing.T) {
	e := newEngine(t, NAOTree())
	steps(t, e, 20*ms)
	if e.Stiff() {
		t.Error("a new engine is stiff")
	}
	e.Set("HeadYaw/Hardness/Actuator", []Command{{1, 30 * ms}}, ClearAll)
	if !e.Stiff() {
		t.Error("a queued hardness command is not stiff")
	}
	steps(t, e, 100*ms)
	end := e.RampDown(200 * ms)
	steps(t, e, end)
	if v := value(t, e, "HeadYaw/Hardness/Actuator"); v != 0 || e.Stiff() {
		t.Errorf("after the ramp: hardness %v, stiff %v", v, e.Stiff())
	}
}

// TestRunOnItsOwnThread runs the real loop briefly: it ticks on the wall
// clock, records every tick's jitter, says what priority it obtained, and
// returns nil once its context ends. No figure about time is asserted
// (the machine may be loaded); bench/ measures the jitter.
func TestRunOnItsOwnThread(t *testing.T) {
	e, err := NewEngine(NAOTree(), NewSim(), Options{Period: time.Millisecond, QuietPeriod: -1})
	if err != nil {
		t.Fatal(err)
	}
	ticks := e.Memory().Subscribe("DCM/Time", 16) // written every cycle
	defer ticks.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	for range 5 {
		select {
		case <-ticks.C():
		case err := <-done:
			t.Fatalf("Run ended early: %v", err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	cycles := e.Stats().Cycles
	if cycles < 5 {
		t.Fatalf("%d cycles after 5 ticks", cycles)
	}
	var recorded uint64
	for _, n := range e.Jitter().Snapshot() {
		recorded += n
	}
	if recorded != uint64(cycles) {
		t.Errorf("jitter histogram holds %d ticks, engine ran %d cycles", recorded, cycles)
	}
	p := e.Priority()
	if p == "" || !(strings.HasPrefix(p, "SCHED_FIFO") || strings.HasPrefix(p, "nice") || strings.HasPrefix(p, "normal (")) {
		t.Errorf("Priority() = %q", p)
	}
	t.Logf("loop priority: %s", p)
}

// TestQuietLoop runs the real loop with a quiet period: a relaxed robot with
// nothing commanded cycles at the quiet period and is never late (no S3
// hardness cut however long it stays quiet); a command wakes it at once,
// the loop cycles at the period while anything moves or holds, and a ramp
// given while quiet takes its whole time from when it was given.
func TestQuietLoop(t *testing.T) {
	const period, quiet = 2 * time.Millisecond, 40 * time.Millisecond
	e, err := NewEngine(NAOTree(), NewSim(), Options{Period: period, QuietPeriod: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitUntil("quiet", e.Quiet)
	before := e.Stats()
	time.Sleep(12 * quiet) // S3 would cut hardness after 500 ms without an on-time cycle
	after := e.Stats()
	if n := after.Cycles - before.Cycles; n > 13 {
		t.Errorf("%d cycles in 12 quiet periods: the loop did not slow down", n)
	}
	if after.LateCycles != 0 || after.HardnessCuts != 0 {
		t.Errorf("quiet cycles counted as late: %+v", after)
	}
	// While quiet, Now runs with the clock, not with the (rare) cycles, so
	// that a command's times count from when it is given.
	waitUntil("quiet", e.Quiet)
	a := e.Now()
	time.Sleep(20 * time.Millisecond)
	if b := e.Now(); b-a < 15*time.Millisecond {
		t.Errorf("Now moved %v in 20 ms of quiet", b-a)
	}
	// A ramp of the LED over 100 ms, given while quiet, wakes the loop.
	led := e.Tree().Sub("ChestBoard/Led/Green/Actuator")
	given := e.Now()
	if err := e.SetSub(led, []Command{{Value: 1, At: given + 100*time.Millisecond}}, ClearAll); err != nil {
		t.Fatal(err)
	}
	waitUntil("awake", func() bool { return !e.Quiet() })
	waitUntil("ramp started", func() bool { return e.Value(led) > 0 })
	first := e.Value(led)
	if first > 0.2 {
		t.Errorf("first step of a 100 ms ramp reached %v: it did not start from when it was given", first)
	}
	waitUntil("ramp done and quiet again", func() bool { return e.Value(led) == 1 && e.Quiet() })
	if now := e.Now(); now < given+100*time.Millisecond {
		t.Errorf("the ramp ended at %v, before its time %v", now, given+100*time.Millisecond)
	}
	if s := e.Stats(); s.HardnessCuts != 0 {
		t.Errorf("hardness cut after quiet: %+v", s)
	}
}
