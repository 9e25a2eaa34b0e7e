// Package interpreter loads, validates, compiles and runs SEATML behaviors.
//
// Load turns a file (and the files it includes) into an immutable Program,
// reporting every problem at once as file:line:col diagnostics. New builds
// a Machine for a Program: its Lua state, vars and general scripts. Run
// opens the adaptors and handles events, timeouts and ticks one at a time:
// whoever holds the machine's run lock owns the state machine and the Lua
// state, either Run's goroutine or an adaptor's goroutine that delivered
// an event while the machine was idle and handles it itself (which saves
// two thread hand-offs per event). Adaptors reach it only through the
// bounded queue behind Deliver, so events are handled in arrival order.
package interpreter
