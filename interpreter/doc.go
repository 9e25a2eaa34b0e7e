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
// The files follow an event's path: machine.go (the Machine, delivery,
// the queue's owner), dispatch.go (finding the rule: docs/seatml.md §5),
// actions.go (running a rule's actions, sending messages), states.go
// (entering and leaving states through the engine), timers.go (ontimeout
// and onexec), api.go (the seat Lua table), devices.go (the device
// layer), sessions.go (one instance per peer or topic), lifecycle.go (New,
// Run and stopping), handover.go (reloads), seatmlrun.go (SEATML's
// behavior), scxmlrun.go (an SCXML document's behavior, on the same
// clock and Lua state).
package interpreter
