package interpreter

import (
	"sync/atomic"
	"time"

	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/statechart"
)

// seatmlBehavior is a SEATML program's behavior: its rules, states,
// timeouts and onexec ticks (docs/seatml.md), run by its Machine.
type seatmlBehavior struct {
	*env
	stack []frame // what push saved
	// req is the transition the list running asked for (seat.transition,
	// statetransition); pending, those onentry lists asked for.
	req     request
	pending []request
	// In a nested behavior: the state whose list is running (its rule,
	// handler, onentry, ontimeout or onexec; generalSource for general's;
	// nil: none), which a transition the list asks for leaves from and
	// whose countdowns a fired rule restarts.
	src    *seatml.State
	inExit bool // an onexit list runs: no transition may be asked for
	// exitHooked: the engine's OnExit is exitedHook.
	exitHooked bool
	// tried marks, by rule index, the rules tried for the event of
	// generation gen; moves counts the transitions made, to tell whether
	// a list changed state; unmatched, the events no rule took.
	tried     []uint64
	gen       uint64
	moves     uint64
	unmatched uint64
	sources   sourceCache
	// encodeWarned holds the messages whose unencodable text was logged.
	encodeWarned map[*seatml.Action]bool
	seatmlTimers
	// trans holds the transitions statetransitions take in a nested
	// behavior, made once (transitionTo).
	trans map[[2]*seatml.State]*statechart.Transition
	// touched holds, by the chart's state index, the turn in which each
	// state was last entered or exited (a state left or entered by one
	// region's transition does not handle what moved it); since, when
	// each state with an onexec was entered.
	touched []uint64
	since   []time.Time
	// depths: drainInternal's chain depths.
	depths  []int
	widgets widgets
	// Scratch, kept between events: no allocation next time.
	leafBuf, leafBuf2 []*seatml.State
	scopeBuf          []*seatml.Scope
	ownerBuf          []*seatml.State // the state of each of scopeBuf's scopes
	doneBuf           []*seatml.State // the states done with the event being handled (dispatch)
	execBuf           []*statechart.State
}

// stop exits the active states: their onexit lists run.
func (m *seatmlBehavior) stop() {
	if m.cur != nil {
		m.sc.Cancel()
		m.req = request{}
	}
}

// newSEATML makes the behavior of m's SEATML program, on the engine's
// instance of its chart.
func newSEATML(m *env) *seatmlBehavior {
	prog := m.prog
	b := &seatmlBehavior{
		env:          m,
		encodeWarned: map[*seatml.Action]bool{},
		tried:        make([]uint64, len(prog.Rules)),
		widgets:      newWidgets(prog.WidgetByRef, &m.binding),
	}
	b.sources.num, b.sources.known = prog.SourceIDs[""]
	scOpts := statechart.Options{OnEnter: enteredHook, KeepInternal: true}
	if !prog.Nested {
		scOpts.OnEnter = enteredFlatHook
	}
	if m.opts.Trace != nil || prog.HasOnExit || prog.Nested {
		scOpts.OnExit = exitedHook // else exiting a state has nothing to do
		b.exitHooked = true
	}
	b.initTimers()
	m.sc = statechart.New(prog.Chart, scOpts)
	m.sc.Ext = b
	m.activeNames = b.activeNames
	if prog.Nested {
		m.active = make([]atomic.Bool, len(prog.Chart.States))
		b.touched = make([]uint64, len(prog.Chart.States))
		b.since = make([]time.Time, len(prog.Chart.States))
	}
	return b
}
