package bench

import (
	"context"
	"testing"

	"github.com/qmuntal/stateless"

	"github.com/seatml/seat/interpreter/statechart"
)

// deepChart is a chart with two leaves 4 levels deep: leaf1 in the first
// of a 3-region parallel state P, and leafQ under Q. "go" moves leaf1 to
// leafQ (exiting all of P), "back" returns (entering P's three regions).
func deepChart(b *testing.B) (*statechart.Instance, *statechart.Event, *statechart.Event) {
	root := &statechart.State{}
	add := func(parent *statechart.State, id string, kind statechart.Kind) *statechart.State {
		s := &statechart.State{ID: id, Kind: kind, Parent: parent}
		parent.Children = append(parent.Children, s)
		return s
	}
	p := add(root, "P", statechart.Parallel)
	var leaf1 *statechart.State
	for _, r := range []string{"R1", "R2", "R3"} {
		region := add(p, r, statechart.Basic)
		leaf := add(add(region, r+"a", statechart.Basic), r+"leaf", statechart.Basic)
		if leaf1 == nil {
			leaf1 = leaf
		}
	}
	leafQ := add(add(add(root, "Q", statechart.Basic), "Q1", statechart.Basic), "Q2", statechart.Basic)
	leafQ = add(leafQ, "leafQ", statechart.Basic)
	leaf1.Transitions = []*statechart.Transition{{Events: []string{"go"}, Targets: []*statechart.State{leafQ}}}
	leafQ.Transitions = []*statechart.Transition{{Events: []string{"back"}, Targets: []*statechart.State{leaf1}}}
	c, err := statechart.Build(root)
	if err != nil {
		b.Fatal(err)
	}
	in := statechart.New(c, statechart.Options{})
	in.Start()
	return in, &statechart.Event{Name: "go"}, &statechart.Event{Name: "back"}
}

func engineDeep(b *testing.B) {
	in, goEv, back := deepChart(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		in.Handle(goEv)
		in.Handle(back)
	}
	if !in.In("R1leaf") {
		b.Fatal("not back in R1leaf")
	}
}

// statelessDeep is the same in qmuntal/stateless, with SubstateOf for the
// hierarchy (it has no parallel states: the regions are one chain).
func statelessDeep(b *testing.B) {
	sm := statelessDeepMachine()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := sm.FireCtx(ctx, "go"); err != nil {
			b.Fatal(err)
		}
		if err := sm.FireCtx(ctx, "back"); err != nil {
			b.Fatal(err)
		}
	}
}

func statelessDeepMachine() *stateless.StateMachine {
	sm := stateless.NewStateMachine("R1leaf")
	sm.Configure("R1leaf").SubstateOf("R1a").Permit("go", "leafQ")
	sm.Configure("R1a").SubstateOf("R1")
	sm.Configure("R1").SubstateOf("P")
	sm.Configure("leafQ").SubstateOf("Q2").Permit("back", "R1leaf")
	sm.Configure("Q2").SubstateOf("Q1")
	sm.Configure("Q1").SubstateOf("Q")
	return sm
}

// BenchmarkDeepTransition is an event-driven transition between two
// leaves 4 levels deep, one of them in a 3-region parallel state, on the
// statechart engine and on qmuntal/stateless; each op is two transitions
// (there and back).
func BenchmarkDeepTransition(b *testing.B) {
	b.Run("engine", engineDeep)
	b.Run("stateless", statelessDeep)
}

// BenchmarkDeepTransitionRatio times both in one benchmark and reports
// the engine's time as a ratio of stateless's.
func BenchmarkDeepTransitionRatio(b *testing.B) {
	engine := perEvent(b, func(n int) {
		in, goEv, back := deepChart(b)
		for range n / 2 {
			in.Handle(goEv)
			in.Handle(back)
		}
	})
	sl := perEvent(b, func(n int) {
		sm := statelessDeepMachine()
		ctx := context.Background()
		for range n / 2 {
			sm.FireCtx(ctx, "go")
			sm.FireCtx(ctx, "back")
		}
	})
	for b.Loop() {
	}
	b.ReportMetric(engine, "engine-ns/event")
	b.ReportMetric(engine/sl, "engine/stateless")
}
