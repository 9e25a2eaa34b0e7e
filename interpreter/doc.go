// Package interpreter is seat's runtime: it runs a behavior loaded by
// package seatml (a SEATML file, or an SCXML document in seat's world),
// binding it to its adaptors, its timers and the device layer.
//
// New builds a Machine for a seatml.Program: its Lua state (the seat
// table, sandboxed), vars and general scripts, and the program's
// behavior (behavior.go): seatmlBehavior for a SEATML file, on a
// statechart.Instance of its chart, or scxmlRun for an SCXML document.
// The Machine is the behavior's host. Run opens the adaptors and handles
// events, timeouts and ticks one at a time: whoever holds the machine's run lock
// owns the state machine and the Lua state, either Run's goroutine or an
// adaptor's goroutine that delivered an event while the machine was idle
// and handles it itself (which saves two thread hand-offs per event).
// Adaptors reach it only through the bounded queue behind Deliver, so
// events are handled in arrival order.
//
// The files follow an event's path: machine.go (the Machine: delivery,
// the queue and its loop, the timers fired, messages sent), dispatch.go
// (SEATML: finding the rule, docs/seatml.md §5, and running its
// actions), api.go (calling Lua, and the seat table it calls),
// states.go (entering and leaving states through the engine). Beside
// it: seatmlrun.go and scxmlrun.go (the two behaviors), timers.go and
// timerlist.go (SEATML's countdowns and ticks on the one timer list),
// internal.go (internal events), lua.go (the event globals and the
// event value), explain.go (what a script's error means), devices.go
// (the device layer), sessions.go (one instance per peer or topic),
// lifecycle.go (New, Run and stopping), handover.go (reloads).
package interpreter
