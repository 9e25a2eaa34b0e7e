package statechart

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// builder makes charts in Go, as a front end does.
type builder struct {
	ids   map[string]*State
	trace []string
}

func newBuilder() *builder { return &builder{ids: map[string]*State{}} }

// state adds a state under parent (nil: the root) with entry and exit
// actions that record "+id" and "-id".
func (b *builder) state(parent *State, id string, kind Kind) *State {
	s := &State{ID: id, Kind: kind, Parent: parent}
	if parent != nil {
		parent.Children = append(parent.Children, s)
	}
	if id != "" && !s.IsHistory() {
		s.OnEntry = []Block{{func(*Instance) error { b.trace = append(b.trace, "+"+id); return nil }}}
		s.OnExit = []Block{{func(*Instance) error { b.trace = append(b.trace, "-"+id); return nil }}}
	}
	b.ids[id] = s
	return s
}

// on adds a transition from s taking event (empty: eventless) to the
// targets (space-separated ids).
func (b *builder) on(s *State, event, targets string) *Transition {
	t := &Transition{Events: strings.Fields(event)}
	for _, id := range strings.Fields(targets) {
		t.Targets = append(t.Targets, b.ids[id])
	}
	t.Actions = Block{func(*Instance) error { b.trace = append(b.trace, "t:"+s.ID+":"+event); return nil }}
	s.Transitions = append(s.Transitions, t)
	return t
}

func (b *builder) start(t *testing.T, root *State) *Instance {
	t.Helper()
	c, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	in := New(c, Options{})
	in.Start()
	return in
}

func (b *builder) took(t *testing.T, want string) {
	t.Helper()
	if got := strings.Join(b.trace, " "); got != want {
		t.Errorf("trace:\n got %s\nwant %s", got, want)
	}
	b.trace = nil
}

func config(in *Instance) string {
	var ids []string
	for _, s := range in.Configuration() {
		if s.ID != "" {
			ids = append(ids, s.ID)
		}
	}
	return strings.Join(ids, " ")
}

func TestNestedEntryExitOrder(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	a := b.state(root, "a", Basic)
	a1 := b.state(a, "a1", Basic)
	a11 := b.state(a1, "a11", Basic)
	b.state(a1, "a12", Basic)
	z := b.state(root, "z", Basic)
	z1 := b.state(z, "z1", Basic)
	b.on(a11, "go", "z1")
	b.on(a, "stop", "z") // an ancestor's rule applies in its descendants
	in := b.start(t, root)
	b.took(t, "+a +a1 +a11")
	in.Handle(&Event{Name: "go.now"}) // descriptor "go" matches "go.now"
	b.took(t, "-a11 -a1 -a t:a11:go +z +z1")
	if got := config(in); got != "z z1" {
		t.Errorf("configuration %q", got)
	}
	_ = z1
}

func TestAncestorRuleAndInnerFirst(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	a := b.state(root, "a", Basic)
	a1 := b.state(a, "a1", Basic)
	b.state(a, "a2", Basic)
	b.on(a1, "x", "a2")
	b.on(a, "x", "a1") // shadowed by a1's own rule
	b.on(a, "y", "a1")
	in := b.start(t, root)
	b.took(t, "+a +a1")
	in.Handle(&Event{Name: "x"})
	b.took(t, "-a1 t:a1:x +a2")
	in.Handle(&Event{Name: "y"}) // external: exits and re-enters a
	b.took(t, "-a2 -a t:a:y +a +a1")
}

func TestInternalTransitionStaysInSource(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	a := b.state(root, "a", Basic)
	b.state(a, "a1", Basic)
	b.state(a, "a2", Basic)
	b.on(a, "y", "a2").Internal = true
	in := b.start(t, root)
	b.took(t, "+a +a1")
	in.Handle(&Event{Name: "y"})
	b.took(t, "-a1 t:a:y +a2")
}

func TestParallelRegionsAllHandle(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	p := b.state(root, "p", Parallel)
	r1 := b.state(p, "r1", Basic)
	r1a := b.state(r1, "r1a", Basic)
	b.state(r1, "r1b", Basic)
	r2 := b.state(p, "r2", Basic)
	r2a := b.state(r2, "r2a", Basic)
	b.state(r2, "r2b", Basic)
	b.state(root, "out", Basic)
	b.on(r1a, "e", "r1b")
	b.on(r2a, "e", "r2b")
	in := b.start(t, root)
	b.took(t, "+p +r1 +r1a +r2 +r2a")
	in.Handle(&Event{Name: "e"})
	// One microstep: both exit (reverse document order), both transitions run, both enter.
	b.took(t, "-r2a -r1a t:r1a:e t:r2a:e +r1b +r2b")
	// A transition out of one region exits the whole parallel state, in
	// reverse document order; the other region's conflicting one is
	// preempted.
	b.on(b.ids["r1b"], "f", "out")
	b.on(b.ids["r2b"], "f", "r2a")
	in = b.start(t, root)
	b.trace = nil
	in.Handle(&Event{Name: "e"})
	b.trace = nil
	in.Handle(&Event{Name: "f"})
	b.took(t, "-r2b -r2 -r1b -r1 -p t:r1b:f +out")
}

func TestDoneStateEvents(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	p := b.state(root, "p", Parallel)
	r1 := b.state(p, "r1", Basic)
	b.state(r1, "r1f", Final)
	r2 := b.state(p, "r2", Basic)
	r2a := b.state(r2, "r2a", Basic)
	b.state(r2, "r2f", Final)
	done := b.state(root, "done", Final)
	b.on(r2a, "e", "r2f")
	b.on(p, "done.state.p", "done")
	var seen []string
	c, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	var final *State
	in := New(c, Options{OnEvent: func(ev *Event) { seen = append(seen, ev.Name) }, OnDone: func(f *State, _ any) { final = f }})
	in.Start()
	in.Handle(&Event{Name: "e"})
	if got := strings.Join(seen, " "); got != "done.state.r1 e done.state.r2 done.state.p" {
		t.Errorf("events: %s", got)
	}
	if final != done || in.Running() {
		t.Errorf("final %v, running %v", final, in.Running())
	}
}

func TestHistory(t *testing.T) {
	for _, deep := range []bool{false, true} {
		b := newBuilder()
		root := b.state(nil, "", Basic)
		a := b.state(root, "a", Basic)
		kind := ShallowHistory
		if deep {
			kind = DeepHistory
		}
		h := b.state(a, "h", kind)
		a1 := b.state(a, "a1", Basic)
		a2 := b.state(a, "a2", Basic)
		b.state(a2, "a2x", Basic)
		a2y := b.state(a2, "a2y", Basic)
		h.Initial = &Transition{Targets: []*State{a1}}
		b.state(root, "pause", Basic)
		b.on(a1, "next", "a2y")
		b.on(a, "pause", "pause")
		b.on(b.ids["pause"], "resume", "h")
		in := b.start(t, root)
		in.Handle(&Event{Name: "next"})
		in.Handle(&Event{Name: "pause"})
		in.Handle(&Event{Name: "resume"})
		want := "a a2 a2x" // shallow: a2 again, entered at its initial state
		if deep {
			want = "a a2 a2y"
		}
		if got := config(in); got != want {
			t.Errorf("deep=%v: after resume %q, want %q", deep, got, want)
		}
		_ = a2y
	}
}

func TestErrorsAreEvents(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	a := b.state(root, "a", Basic)
	b.state(root, "bad", Basic)
	b.state(root, "other", Basic)
	t1 := b.on(a, "e", "other")
	t1.Cond = func(*Instance) (bool, error) { return false, errors.New("boom") }
	b.on(a, "error.execution", "bad")
	a.OnEntry = append(a.OnEntry, Block{
		func(*Instance) error { return &Error{Event: "error.communication", Err: errors.New("no peer")} },
		func(*Instance) error { t.Error("the rest of a failed block ran"); return nil },
	})
	b.on(a, "error.communication", "")
	in := b.start(t, root)
	in.Handle(&Event{Name: "e"})
	if got := config(in); got != "bad" {
		t.Errorf("configuration %q, want bad", got)
	}
}

func TestRunawayStops(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	a := b.state(root, "a", Basic)
	c := b.state(root, "c", Basic)
	b.on(a, "", "c")
	b.on(c, "", "a")
	in := b.start(t, root)
	if in.Running() {
		t.Error("a chart that never settles still runs")
	}
}

// TestRunawaySaysWhere: the error that stops a macrostep that does not
// settle says where it was: the last transition, the event it took and
// the state; and Microsteps counts the macrostep's microsteps while it
// runs, so that a front end can summarize what it logs of a runaway.
// Before, the error was "too many microsteps" alone.
func TestRunawaySaysWhere(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	a := b.state(root, "回る", Basic)
	b.state(root, "外", Basic)
	a.OnEntry = []Block{{func(in *Instance) error { in.Raise(&Event{Name: "また"}); return nil }}}
	loop := b.on(a, "また", "回る")
	b.on(a, "出る", "外")
	c, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	var got *RunawayError
	most := 0
	in := New(c, Options{
		OnEnter: func(in *Instance, s *State) { most = max(most, in.Microsteps()) },
		OnError: func(ev *Event, err error) { errors.As(err, &got) },
	})
	in.Start()
	if in.Running() || got == nil {
		t.Fatalf("running %v, error %v", in.Running(), got)
	}
	if !errors.Is(got, ErrRunaway) || got.Transition != loop || got.Event == nil || got.Event.Name != "また" || got.State != a || got.Steps <= maxMicrosteps {
		t.Errorf("error %+v; want ErrRunaway at the transition on また, in 回る", got)
	}
	want := `the machine did not settle: too many microsteps in one macrostep (100000): the last took a transition of "回る" on the event "また", into state "回る"`
	if got.Error() != want {
		t.Errorf("error %q\nwant  %q", got.Error(), want)
	}
	if most < maxMicrosteps {
		t.Errorf("Microsteps reached %d while the runaway ran; want %d", most, maxMicrosteps)
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		d, name string
		want    bool
	}{
		{"*", "x", true}, {"done", "done.state.s", true}, {"done.state", "done.state.s", true},
		{"done.*", "done.state", true}, {"done.", "done", true}, {"don", "done", false},
		{"error", "errors", false}, {"挨拶", "挨拶.朝", true}, {"挨拶", "挨", false},
	} {
		if got := Matches(c.d, c.name); got != c.want {
			t.Errorf("Matches(%q, %q) = %v", c.d, c.name, got)
		}
	}
}

// TestRootIsNotInTheConfiguration: the root stands for the document
// (SCXML's <scxml>), which Appendix D never enters or exits: the
// configuration is the states alone, each once (a review found the root
// in it twice after Start).
func TestRootIsNotInTheConfiguration(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	b.state(root, "a", Basic)
	var entered, exited []string
	c, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	in := New(c, Options{
		OnEnter: func(_ *Instance, s *State) { entered = append(entered, s.ID) },
		OnExit:  func(_ *Instance, s *State) { exited = append(exited, s.ID) },
	})
	in.Start()
	if got := in.Configuration(); len(got) != 1 || got[0].ID != "a" {
		t.Errorf("configuration %v, want [a]", got)
	}
	in.Cancel()
	if strings.Join(entered, ",") != "a" || strings.Join(exited, ",") != "a" {
		t.Errorf("entered %q, exited %q; want a once each", entered, exited)
	}
}

// TestHistoryDefaultContentOnlyThroughHistory: a history state's default
// content runs when its parent is entered through it, not on a later
// plain entry (Appendix D's defaultHistoryContent is per entry).
func TestHistoryDefaultContentOnlyThroughHistory(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	p := b.state(root, "p", Basic)
	a := b.state(p, "a", Basic)
	pb := b.state(p, "b", Basic)
	h := b.state(p, "h", ShallowHistory)
	ran := 0
	h.Initial = &Transition{Targets: []*State{pb}, Actions: Block{func(*Instance) error { ran++; return nil }}}
	b.state(root, "q", Basic)
	b.on(a, "go", "h") // domain p: p is not entered, nor is its history's content due
	b.on(p, "out", "q")
	b.on(b.ids["q"], "in", "p")
	in := b.start(t, root)
	in.Handle(&Event{Name: "go"})
	in.Handle(&Event{Name: "out"})
	in.Handle(&Event{Name: "in"})
	if ran != 0 {
		t.Errorf("the history's default content ran %d times; it was never entered through the history", ran)
	}
	_ = a
}

// TestParallelEventAllocatesNothing: an event that every region of a
// parallel state handles (conflict resolution over several transitions)
// allocates nothing once the instance has run it once.
func TestParallelEventAllocatesNothing(t *testing.T) {
	root := &State{}
	p := &State{ID: "p", Kind: Parallel, Parent: root}
	root.Children = []*State{p}
	for _, r := range []string{"r1", "r2", "r3"} {
		region := &State{ID: r, Parent: p}
		a, b := &State{ID: r + "a", Parent: region}, &State{ID: r + "b", Parent: region}
		region.Children = []*State{a, b}
		a.Transitions = []*Transition{{Events: []string{"e"}, Targets: []*State{b}}}
		b.Transitions = []*Transition{{Events: []string{"e"}, Targets: []*State{a}}}
		p.Children = append(p.Children, region)
	}
	c, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	in := New(c, Options{})
	in.Start()
	ev := &Event{Name: "e"}
	in.Handle(ev)
	if n := testing.AllocsPerRun(100, func() { in.Handle(ev) }); n != 0 {
		t.Errorf("%v allocations per event", n)
	}
	if !in.In("r1a") || !in.In("r2a") || !in.In("r3a") {
		t.Errorf("configuration %q", config(in))
	}
}

// TestLimitStopsAMacrostep: a runtime's Limit stops a macrostep that
// would otherwise go on (here within maxMicrosteps), raising its error.
func TestLimitStopsAMacrostep(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	a := b.state(root, "行き", Basic)
	c := b.state(root, "帰り", Basic)
	b.on(a, "", "帰り")
	b.on(c, "", "行き")
	chart, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	tooLong := errors.New("the macrostep ran over its time")
	var raised []string
	in := New(chart, Options{
		Limit: func() error {
			if steps++; steps == 10 {
				return tooLong
			}
			return nil
		},
		OnError: func(ev *Event, err error) { raised = append(raised, ev.Name+": "+err.Error()) },
	})
	in.Start()
	want := "error.execution: " + tooLong.Error() + `; 10 microsteps: the last took an eventless transition of "帰り", into state "行き"`
	if in.Running() || steps != 10 || len(raised) != 1 || raised[0] != want {
		t.Errorf("running %v after %d steps, raised %q", in.Running(), steps, raised)
	}
}

// TestSettleRunsRaisedEvents: an error raised between macrosteps is
// processed by Settle, without waiting for the next external event.
func TestSettleRunsRaisedEvents(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	b.state(root, "待機", Basic)
	b.state(root, "失敗", Basic)
	b.on(root.Children[0], "error.communication", "失敗")
	in := b.start(t, root)
	in.RaiseError(&Error{Event: "error.communication", Err: errors.New("no such session")})
	if !in.In("待機") {
		t.Fatal("the raised error ran before Settle")
	}
	in.Settle()
	if !in.In("失敗") {
		t.Errorf("configuration %q after Settle; want 失敗", config(in))
	}
}

// TestTakeFlat: a front end's transition between top-level states (the
// engine's fast path) exits, runs its actions and enters as any microstep,
// from a state's own rule or from the root (a rule of SEATML's general).
func TestTakeFlat(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	b.state(root, "受付", Basic)
	b.state(root, "案内", Basic)
	in := b.start(t, root)
	b.took(t, "+受付")
	chart := in.chart
	toGuide := chart.Transition(chart.State("受付"), chart.State("案内"))
	toGuide.Actions = Block{func(*Instance) error { b.trace = append(b.trace, "act"); return nil }}
	in.Take(toGuide)
	b.took(t, "-受付 act +案内")
	in.Take(chart.Transition(chart.Root, chart.State("案内"))) // a self-transition from anywhere
	b.took(t, "-案内 +案内")
	if config(in) != "案内" {
		t.Errorf("configuration %q", config(in))
	}
}

// TestTakeFlatHooks: a flat step between states with no content of
// their own (SEATML's: the front end works in the hooks) tells the hooks
// in order, exit then entry, as one with content does; a state with an
// onentry, a first-entry block or a final state takes the full step (a
// top-level final one ends the run, exiting it).
func TestTakeFlatHooks(t *testing.T) {
	root := &State{}
	a := &State{ID: "待機", Parent: root}
	c := &State{ID: "案内", Parent: root}
	var firstEntries int
	d := &State{ID: "確認", Parent: root, Init: Block{func(*Instance) error { firstEntries++; return nil }}}
	f := &State{ID: "終了", Kind: Final, Parent: root}
	root.Children = []*State{a, c, d, f}
	chart, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	var trace []string
	in := New(chart, Options{
		OnEnter: func(in *Instance, s *State) {
			trace = append(trace, fmt.Sprintf("+%s(%v)", s.ID, in.Active(s)))
		},
		OnExit: func(in *Instance, s *State) {
			trace = append(trace, fmt.Sprintf("-%s(%v)", s.ID, in.Active(s)))
		},
	})
	in.Start()
	for _, to := range []*State{c, a, c, d, a, d, c, f} {
		in.Take(chart.Transition(root, to))
		if got := config(in); got != to.ID && to != f {
			t.Fatalf("after the step to %s the configuration is %q", to.ID, got)
		}
	}
	want := "+待機(true) -待機(false) +案内(true) -案内(false) +待機(true) -待機(false) +案内(true) " +
		"-案内(false) +確認(true) -確認(false) +待機(true) -待機(false) +確認(true) -確認(false) +案内(true) -案内(false) +終了(true) -終了(false)"
	if got := strings.Join(trace, " "); got != want {
		t.Errorf("hooks:\n got %s\nwant %s", got, want)
	}
	if firstEntries != 1 {
		t.Errorf("the first-entry block ran %d times, want once", firstEntries)
	}
	if in.Running() {
		t.Error("still running in a top-level final state")
	}
}

// TestStepBare: a flat step between states with no content of their own
// is taken without the hooks; any other transition is refused untouched.
func TestStepBare(t *testing.T) {
	root := &State{}
	a := &State{ID: "待機", Parent: root}
	c := &State{ID: "案内", Parent: root}
	busy := &State{ID: "確認", Parent: root, OnEntry: []Block{{func(*Instance) error { return nil }}}}
	f := &State{ID: "終了", Kind: Final, Parent: root}
	root.Children = []*State{a, c, busy, f}
	chart, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	hooks := 0
	in := New(chart, Options{
		OnEnter: func(*Instance, *State) { hooks++ },
		OnExit:  func(*Instance, *State) { hooks++ },
	})
	in.Start()
	hooks = 0
	if _, _, ok := in.StepBare(chart.Transition(root, c)); ok {
		t.Error("a step to a state never entered (its first entry runs Init) was taken bare")
	}
	in.Take(chart.Transition(root, c))
	in.Take(chart.Transition(root, a))
	hooks = 0
	from, to, ok := in.StepBare(chart.Transition(root, c))
	if !ok || from != a || to != c || config(in) != "案内" || in.Active(a) || !in.Active(c) || hooks != 0 {
		t.Errorf("bare step: %v %v %v, configuration %q, hooks told %d times", from, to, ok, config(in), hooks)
	}
	for _, x := range []*State{busy, f} {
		if _, _, ok := in.StepBare(chart.Transition(root, x)); ok || config(in) != "案内" {
			t.Errorf("a step to %s was taken bare", x.ID)
		}
	}
}

// TestTakeNested: a front end's transition between leaves of different
// compound states exits and enters along the way, in document order, and
// one into a compound state enters its initial child; one to a history
// state restores what was active.
func TestTakeNested(t *testing.T) {
	b := newBuilder()
	root := b.state(nil, "", Basic)
	talk := b.state(root, "対話", Basic)
	b.state(talk, "挨拶", Basic)
	b.state(talk, "質問", Basic)
	h := b.state(talk, "履歴", ShallowHistory)
	stop := b.state(root, "停止", Basic)
	h.Initial = &Transition{Targets: []*State{b.ids["挨拶"]}}
	in := b.start(t, root)
	c := in.chart
	b.took(t, "+対話 +挨拶")
	in.Take(c.Transition(c.State("挨拶"), c.State("質問")))
	b.took(t, "-挨拶 +質問")
	in.Take(c.Transition(c.Root, stop))
	b.took(t, "-質問 -対話 +停止")
	in.Take(c.Transition(stop, h))
	b.took(t, "-停止 +対話 +質問")
	in.Take(c.Transition(c.Root, talk))
	b.took(t, "-質問 -対話 +対話 +挨拶")
}

// TestFlatTransitionAllocatesNothing: the fast path keeps a front end's
// flat transition at no allocation.
func TestFlatTransitionAllocatesNothing(t *testing.T) {
	root := &State{}
	a := &State{ID: "a", Parent: root}
	c := &State{ID: "b", Parent: root}
	root.Children = []*State{a, c}
	chart, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	in := New(chart, Options{})
	in.Start()
	ab, ba := chart.Transition(a, c), chart.Transition(c, a)
	if !ab.flat || !ba.flat {
		t.Fatal("not flat")
	}
	if n := testing.AllocsPerRun(1000, func() { in.Take(ab); in.Take(ba) }); n != 0 {
		t.Errorf("%v allocations per round trip", n)
	}
}

// BenchmarkFlatTake is a front end's transition between two top-level
// states (flat SEATML's ping-pong, without its matching).
func BenchmarkFlatTake(b *testing.B) {
	root := &State{}
	x := &State{ID: "a", Parent: root}
	y := &State{ID: "b", Parent: root}
	root.Children = []*State{x, y}
	chart, err := Build(root)
	if err != nil {
		b.Fatal(err)
	}
	in := New(chart, Options{})
	in.Start()
	ab, ba := chart.Transition(x, y), chart.Transition(y, x)
	b.ReportAllocs()
	for b.Loop() {
		in.Take(ab)
		in.Take(ba)
	}
}

// TestIllegalTargets: a transition whose targets cannot be active
// together does not build: one inside the other, both in one compound
// state, or the same state twice.
func TestIllegalTargets(t *testing.T) {
	for _, tc := range []struct{ targets, want string }{
		{"a a1", `state "s": a transition's targets "a" and "a1" cannot be active together: one is inside the other`},
		{"a1 a2", `state "s": a transition's targets "a1" and "a2" cannot be active together: both are inside "a", which is not a <parallel>`},
		{"a1 h", `state "s": a transition's targets "a1" and "h" cannot be active together: one is inside the other`},
		{"p1 p2", ""},
	} {
		root := &State{}
		s := mk("s", Basic, root)
		a := mk("a", Basic, root)
		a1, a2 := mk("a1", Basic, a), mk("a2", Basic, a)
		h := mk("h", ShallowHistory, a)
		h.Initial = &Transition{Targets: []*State{a1}}
		p := mk("p", Parallel, root)
		p1, p2 := mk("p1", Basic, p), mk("p2", Basic, p)
		ids := map[string]*State{"a": a, "a1": a1, "a2": a2, "h": h, "p1": p1, "p2": p2}
		tr := &Transition{Events: []string{"e"}}
		for _, id := range strings.Fields(tc.targets) {
			tr.Targets = append(tr.Targets, ids[id])
		}
		s.Transitions = []*Transition{tr}
		_, err := Build(root)
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("%s: %v, want %q", tc.targets, err, tc.want)
		}
	}
}

// TestReachable: from the initial state through each state's targets;
// entering a target enters the other regions of a parallel state around
// it and its own initial descendants, not its siblings.
func TestReachable(t *testing.T) {
	root := &State{}
	start := mk("start", Basic, root)
	p := mk("p", Parallel, root)
	r1 := mk("r1", Basic, p)
	mk("r1a", Basic, r1)
	r1b := mk("r1b", Basic, r1)
	r2 := mk("r2", Basic, p)
	mk("r2a", Basic, r2)
	mk("r2b", Basic, r2)
	lone := mk("lone", Basic, root)
	mk("inner", Basic, lone)
	c, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	targets := map[*State][]*State{start: {r1b}}
	reach := c.Reachable(func(s *State) []*State { return targets[s] })
	var got []string
	for _, s := range c.States[1:] {
		if reach[s.Index()] {
			got = append(got, s.ID)
		}
	}
	if want := []string{"start", "p", "r1", "r1b", "r2", "r2a"}; !slices.Equal(got, want) {
		t.Errorf("reachable %q, want %q", got, want)
	}
}

// mk adds a state to parent, for tests that build a chart by hand.
func mk(id string, kind Kind, parent *State) *State {
	s := &State{ID: id, Kind: kind, Parent: parent}
	parent.Children = append(parent.Children, s)
	return s
}
