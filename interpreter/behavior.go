package interpreter

import (
	"github.com/seatml/seat/adaptors"
)

// A behavior is one loaded program's semantics: SEATML's rules and states
// (seatmlBehavior) or an SCXML document's session (scxmlRun). Its host,
// the Machine, owns the goroutine, the queue, the clock and the adaptors,
// and drives it one call at a time from whoever holds the run lock;
// nothing here is safe from another goroutine.
type behavior interface {
	// begin enters the initial configuration.
	begin()
	// handle handles an event that reached it (the host has stamped it,
	// trimmed its line end and shown it to the observers), then what the
	// event raised. ev is the env's evBuf: the event being handled, which
	// scripts read.
	handle(ev *adaptors.Event)
	// fire runs timer t, one of its own, due now (at t.at): the first of
	// the machine's list (env.timers), which the host has taken off it;
	// then what the timer raised.
	fire(t *timer)
	// stop exits the active configuration, running the onexit lists
	// (L6): the run is over.
	stop()
	// activeNames names the states observers that show every active
	// state are told of (a new slice: they keep it); the env calls it.
	activeNames() []string
}
