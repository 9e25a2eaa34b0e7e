package motion

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/hal"
)

const ms = time.Millisecond

// fixture reads a NUbots script: the fixture from shared/ when it is
// there, else the copy shipped in examples/scripts. The shipped copies
// differ from the originals only in targets moved into the NAO's joint
// ranges (examples/scripts/README.md): the same frames, durations, servos,
// gains and torques, which fixture checks.
func fixture(t *testing.T, name string) *Script {
	t.Helper()
	shippedData, err := os.ReadFile(filepath.Join("../../examples/scripts", name))
	if err != nil {
		t.Fatal(err)
	}
	shipped, diags := Parse(name, shippedData)
	if shipped == nil || len(diags) != 0 {
		t.Fatalf("shipped %s: %v", name, diags)
	}
	matches, _ := filepath.Glob(filepath.Join("../../../shared/fixtures/nubots-scripts/*", name))
	if len(matches) != 1 {
		return shipped
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	s, diags := Parse(name, data)
	if s == nil || len(diags) != 0 {
		t.Fatalf("%s: %v", name, diags)
	}
	if len(s.Frames) != len(shipped.Frames) {
		t.Fatalf("examples/scripts/%s has %d frames, the fixture %d", name, len(shipped.Frames), len(s.Frames))
	}
	for i, f := range s.Frames {
		g := shipped.Frames[i]
		if f.Duration != g.Duration || len(f.Targets) != len(g.Targets) {
			t.Fatalf("examples/scripts/%s frame %d differs from the fixture beyond positions", name, i)
		}
		for k, tg := range f.Targets {
			sg := g.Targets[k]
			sameGain := tg.Gain == sg.Gain || math.IsNaN(tg.Gain) && math.IsNaN(sg.Gain)
			if tg.Servo != sg.Servo || !sameGain || tg.Torque != sg.Torque {
				t.Fatalf("examples/scripts/%s frame %d target %d differs from the fixture beyond its position", name, i, k)
			}
		}
	}
	return s
}

func TestFixturesLoadAsAttributed(t *testing.T) {
	for _, c := range []struct {
		name      string
		durations []int
		targets   []int
	}{
		{"Stand.yaml", []int{1000}, []int{20}},
		{"StandUpFront.yaml", []int{300, 300, 500, 600, 600, 600, 600, 600}, []int{18, 18, 18, 18, 18, 18, 18, 18}},
		{"KickRight.yaml", []int{1000, 1000, 1000, 200, 200, 200, 150}, []int{20, 20, 20, 20, 20, 20, 20}},
		{"Wave.yaml", []int{1000, 1000, 1000, 1000, 1000, 1000, 1000}, []int{3, 3, 3, 3, 3, 3, 3}},
		{"RaiseTheRoof.yaml", []int{2000}, []int{20}},
		{"Say.yaml", []int{500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500}, []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := fixture(t, c.name)
			var durations, targets []int
			for _, f := range s.Frames {
				durations = append(durations, int(f.Duration/ms))
				targets = append(targets, len(f.Targets))
			}
			if diff := cmp.Diff(c.durations, durations); diff != "" {
				t.Errorf("durations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.targets, targets); diff != "" {
				t.Errorf("targets per frame (-want +got):\n%s", diff)
			}
		})
	}
	kick := fixture(t, "KickRight.yaml")
	if id := kick.Frames[0].Targets[0]; id.ID != "NECK_YAW" || id.Servo != 18 {
		t.Errorf("NECK_YAW is servo %d", id.Servo)
	}
}

func TestFlowStyleAndNaN(t *testing.T) {
	data, _ := os.ReadFile("testdata/flow-nan.yaml")
	s, diags := Parse("flow-nan.yaml", data)
	if s == nil {
		t.Fatal(diags)
	}
	if len(s.Frames) != 3 || !math.IsNaN(s.Frames[1].Targets[0].Gain) || s.Frames[1].Targets[0].Torque != 0 || len(s.Frames[2].Targets) != 0 {
		t.Errorf("frames %+v", s.Frames)
	}
	want := `flow-nan.yaml:4:32: warning: unknown frame key "note" ignored`
	if diags.Error() != want {
		t.Errorf("diagnostics %q, want %q", diags.Error(), want)
	}
}

func TestScriptErrors(t *testing.T) {
	data, _ := os.ReadFile("testdata/bad.yaml")
	_, diags := Parse("bad.yaml", data)
	want := strings.Join([]string{
		`bad.yaml:1:13: duration -5 is negative`,
		`bad.yaml:3:11: unknown servo id "HEAD_YAWW"; did you mean "HEAD_YAW"?`,
		`bad.yaml:6:7: target has no position`,
		`bad.yaml:8:15: gain .NaN is only allowed with torque 0`,
		`bad.yaml:11:50: torque 150 is out of range 0 to 100`,
		`bad.yaml:12:12: servo R_KNEE appears twice in this frame (first at 11:12)`,
		`bad.yaml:13:3: frame has no duration`,
		`bad.yaml:14:13: duration "ten" is not a whole number of milliseconds`,
		`bad.yaml:15:12: targets must be a sequence`,
	}, "\n")
	if diff := cmp.Diff(want, diags.Error()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, src := range []string{"", "duration: 5", "- [1, 2]", "[]", "- {duration: 5, targets: [}"} {
		if s, diags := Parse("x.yaml", []byte(src)); s != nil || !diags.HasErrors() {
			t.Errorf("Parse(%q) = %v, %v", src, s, diags)
		}
	}
}

func TestDeadlineTable(t *testing.T) {
	stand, kick := fixture(t, "Stand.yaml"), fixture(t, "KickRight.yaml")
	chain := []*Script{stand, kick, stand}
	S := 7 * time.Second
	for _, c := range []struct {
		name       string
		scripts    []*Script
		duration   time.Duration
		multiplier float64
		scale      float64
		want       []int
	}{
		{"chain", chain, 0, 0, 1, []int{1000, 2000, 3000, 4000, 4200, 4400, 4600, 4750, 5750}},
		{"chain duration 2875", chain, 2875 * ms, 0, 0.5, []int{500, 1000, 1500, 2000, 2100, 2200, 2300, 2375, 2875}},
		{"kick duration 1500", []*Script{kick}, 1500 * ms, 0, 0.4, []int{400, 800, 1200, 1280, 1360, 1440, 1500}},
		{"chain multiplier 2", chain, 0, 2, 2, []int{2000, 4000, 6000, 8000, 8400, 8800, 9200, 9500, 11500}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tm, err := Plan(c.scripts, S, c.duration, c.multiplier)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, d := range tm.Deadlines {
				got = append(got, int((d-S)/ms))
			}
			if diff := cmp.Diff(c.want, got); diff != "" || tm.Scale != c.scale {
				t.Errorf("scale %v; deadlines (-want +got):\n%s", tm.Scale, diff)
			}
			if tm.Starts[0] != S {
				t.Errorf("first frame starts at %v", tm.Starts[0])
			}
			for k := 1; k < len(tm.Starts); k++ {
				if tm.Starts[k] != tm.Deadlines[k-1] {
					t.Errorf("frame %d starts at %v, previous deadline %v", k+1, tm.Starts[k], tm.Deadlines[k-1])
				}
			}
		})
	}
	if _, err := Plan(chain, 0, time.Second, 2); err != ErrDurationAndMultiplier {
		t.Errorf("duration with multiplier: %v", err)
	}
}

// rig is an engine on the simulator with a player.
type rig struct {
	t      *testing.T
	e      *hal.Engine
	p      *Player
	events []string
	now    time.Duration
}

func newRig(t *testing.T) *rig {
	e, err := hal.NewEngine(hal.NAOTree(), hal.NewSim(), hal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlayer(e, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, e: e, p: p}
	r.step(0)
	return r
}

func (r *rig) step(now time.Duration) {
	r.t.Helper()
	if err := r.e.Step(now); err != nil {
		r.t.Fatal(err)
	}
	r.now = now
}

func (r *rig) until(t time.Duration) {
	for r.now+10*ms <= t {
		r.step(r.now + 10*ms)
	}
}

func (r *rig) play(req Request) *Motion {
	r.t.Helper()
	req.Notify = func(e Event) { r.events = append(r.events, e.Owner+" "+e.Key()+" "+e.Text) }
	m, err := r.p.Play(req)
	if err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *rig) take() []string {
	out := r.events
	r.events = nil
	return out
}

func (r *rig) value(path string) float64 {
	s, _ := r.e.Tree().Resolve(path)
	return r.e.Value(s)
}

func TestStandKickStandCommands(t *testing.T) {
	r := newRig(t)
	stand, kick := fixture(t, "Stand.yaml"), fixture(t, "KickRight.yaml")
	m := r.play(Request{Owner: "b", Scripts: []*Script{stand, kick, stand}, Start: 100 * ms})
	if m.Name() != "Stand-KickRight-Stand" {
		t.Errorf("name %q", m.Name())
	}
	cmds := m.Commands()
	if len(cmds) != 180 {
		t.Fatalf("%d ServoCommands, want 180", len(cmds))
	}
	deadlines := []time.Duration{1000, 2000, 3000, 4000, 4200, 4400, 4600, 4750, 5750}
	for i, c := range cmds {
		if want := 100*ms + deadlines[i/20]*ms; c.Time != want {
			t.Fatalf("command %d at %v, want %v", i, c.Time, want)
		}
	}
	var elbow *ServoCommand
	for i := range cmds[:20] {
		if cmds[i].Servo == "R_ELBOW" {
			elbow = &cmds[i]
		}
	}
	if elbow == nil || elbow.Joint != "RElbowRoll" || math.Abs(elbow.Position-0.711) > 0.001 {
		t.Errorf("R_ELBOW command %+v, want RElbowRoll 0.711", elbow)
	}
	// Hardness at frame start, position at the deadline.
	knee := r.e.Tree().Joint("RKneePitch")
	if h := r.e.Buffered(knee.Hardness); len(h) != 9 || h[0].At != 100*ms || h[0].Value != 1 {
		t.Errorf("hardness commands %v", h)
	}
	if p := r.e.Buffered(knee.Position); len(p) != 9 || p[0].At != 1100*ms {
		t.Errorf("position commands %v", p)
	}
	// The cursor: 0 before the start, 1..9, then -1.
	var cursors []int
	for r.now < 6*time.Second {
		k, _ := m.Cursor()
		if len(cursors) == 0 || cursors[len(cursors)-1] != k {
			cursors = append(cursors, k)
		}
		r.step(r.now + 10*ms)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1}, cursors); diff != "" {
		t.Errorf("cursor (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b done:Stand-KickRight-Stand completed"}, r.take()); diff != "" {
		t.Error(diff)
	}
	// The joints reached Stand on the simulator.
	if v := r.value("RElbowRoll/Position/Sensor"); math.Abs(v-0.711) > 0.01 {
		t.Errorf("RElbowRoll sensor %v, want 0.711", v)
	}
}

func TestTorqueZeroSendsNoPosition(t *testing.T) {
	r := newRig(t)
	data, _ := os.ReadFile("testdata/flow-nan.yaml")
	s, _ := Parse("flow-nan.yaml", data)
	r.play(Request{Owner: "b", Scripts: []*Script{s}})
	j := r.e.Tree().Joint("HeadPitch")
	if p := r.e.Buffered(j.Position); len(p) != 0 {
		t.Errorf("torque 0 queued positions %v", p)
	}
	// Accepted at 0, between cycles: the chain starts at the next cycle, 10 ms.
	if h := r.e.Buffered(j.Hardness); len(h) != 1 || h[0].Value != 0 || h[0].At != 510*ms {
		t.Errorf("hardness %v, want 0 at the frame start (510 ms)", h)
	}
}

func wave(t *testing.T) *Script { return fixture(t, "Wave.yaml") }

func TestPreemption(t *testing.T) {
	r := newRig(t)
	stand := fixture(t, "Stand.yaml")
	low := r.play(Request{Owner: "body", Name: "stand", Priority: 1, Scripts: []*Script{stand}, Duration: 5 * time.Second})
	r.until(100 * ms)
	high := r.play(Request{Owner: "greeter", Name: "wave", Priority: 5, Scripts: []*Script{wave(t)}})
	// The loser's commands on the wave's joints vanish; the rest play on.
	for _, name := range []string{"RShoulderPitch", "RShoulderRoll", "RElbowRoll"} {
		j := r.e.Tree().Joint(name)
		if owner, _ := r.p.Owner(name); owner != "greeter" {
			t.Errorf("%s owned by %q", name, owner)
		}
		for _, c := range r.e.Buffered(j.Position) {
			if c.Value == stand.Frames[0].Targets[0].Position {
				t.Errorf("%s still has stand's command %v", name, c)
			}
		}
	}
	if got := r.e.Buffered(r.e.Tree().Joint("LKneePitch").Position); len(got) != 1 {
		t.Errorf("LKneePitch lost its commands: %v", got)
	}
	if diff := cmp.Diff([]string{"body lost:stand RShoulderPitch,RShoulderRoll,RElbowRoll"}, r.take()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if k, _ := low.Cursor(); k != 1 {
		t.Errorf("the loser stopped playing: cursor %d", k)
	}
	r.until(7200 * ms)
	got := r.take()
	want := []string{"body done:stand completed", "greeter done:wave completed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_ = high
}

func TestWaitAndTimeout(t *testing.T) {
	r := newRig(t)
	first := r.play(Request{Owner: "a", Name: "first", Priority: 3, Scripts: []*Script{wave(t)}, Duration: time.Second})
	second := r.play(Request{Owner: "b", Name: "second", Priority: 3, Scripts: []*Script{wave(t)}, Duration: time.Second, Timeout: 2 * time.Second})
	if k, _ := second.Cursor(); k != 0 {
		t.Errorf("waiting cursor %d", k)
	}
	if n := len(r.e.Buffered(r.e.Tree().Joint("RShoulderPitch").Position)); n != 7 {
		t.Errorf("a waiting request queued commands: %d buffered", n)
	}
	// first (accepted at 0) starts at the next cycle and ends at 1010 ms;
	// second starts in that same cycle, shifted.
	r.until(1000 * ms)
	if got := r.take(); len(got) != 0 {
		t.Fatalf("events before the end: %v", got)
	}
	r.until(1010 * ms)
	if diff := cmp.Diff([]string{"a done:first completed"}, r.take()); diff != "" {
		t.Fatal(diff)
	}
	if tm := second.Timing(); tm.Start != 1010*ms {
		t.Errorf("second starts at %v, want 1010ms", tm.Start)
	}
	if owner, _ := r.p.Owner("RShoulderPitch"); owner != "b" {
		t.Errorf("owner %q", owner)
	}
	_ = first
	// A lower priority request times out with nothing queued.
	before := len(r.e.Buffered(r.e.Tree().Joint("RShoulderPitch").Position))
	third := r.play(Request{Owner: "c", Name: "third", Priority: 1, Scripts: []*Script{wave(t)}, Timeout: 500 * ms})
	r.until(1600 * ms)
	if diff := cmp.Diff([]string{"c error:third resource timeout: RShoulderPitch held by b/second"}, r.take()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if after := len(r.e.Buffered(r.e.Tree().Joint("RShoulderPitch").Position)); after > before {
		t.Errorf("the timed-out request queued commands")
	}
	if k, _ := third.Cursor(); k != -1 {
		t.Errorf("timed-out cursor %d", k)
	}
}

func TestStop(t *testing.T) {
	r := newRig(t)
	stand := fixture(t, "Stand.yaml")
	m := r.play(Request{Owner: "a", Name: "w", Scripts: []*Script{wave(t)}, StopPose: []*Script{stand}})
	r.until(1500 * ms) // in frame 2, due at 2010 (the chain started at 10)
	m.Stop(false)
	j := r.e.Tree().Joint("RShoulderPitch")
	pos := r.e.Buffered(j.Position)
	if len(pos) != 2 || pos[0].At != 2010*ms || pos[1].At != 3010*ms {
		t.Errorf("after stop: %v, want frame 2's deadline then the stop pose at 3010", pos)
	}
	if p := r.e.Buffered(r.e.Tree().Joint("LKneePitch").Position); len(p) != 0 {
		t.Errorf("the stop pose moved a joint the motion does not hold: %v", p)
	}
	r.until(3010 * ms)
	if diff := cmp.Diff([]string{"a done:w stopped"}, r.take()); diff != "" {
		t.Error(diff)
	}
	m2 := r.play(Request{Owner: "a", Name: "w2", Scripts: []*Script{wave(t)}})
	r.until(3500 * ms)
	m2.Stop(true)
	if p := r.e.Buffered(j.Position); len(p) != 0 {
		t.Errorf("stop(true) left %v", p)
	}
	// It ends at once: done, released, cursor -1.
	if diff := cmp.Diff([]string{"a done:w2 stopped"}, r.take()); diff != "" {
		t.Error(diff)
	}
	if owner, held := r.p.Owner("RShoulderPitch"); held {
		t.Errorf("still held by %q", owner)
	}
	if k, _ := m2.Cursor(); k != -1 {
		t.Errorf("cursor %d", k)
	}
	waiting := r.play(Request{Owner: "x", Name: "blocked", Priority: -1, Scripts: []*Script{wave(t)}})
	r.play(Request{Owner: "y", Name: "holder", Priority: 9, Scripts: []*Script{wave(t)}})
	_ = waiting
	blocked := r.play(Request{Owner: "z", Name: "waits", Priority: 0, Scripts: []*Script{wave(t)}})
	blocked.Stop(false)
	r.until(r.now + 3*time.Second)
	for _, e := range r.take() {
		if strings.Contains(e, "waits") {
			t.Errorf("a cancelled waiting request raised %q", e)
		}
	}
}
