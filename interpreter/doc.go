// Package interpreter loads, validates, compiles and runs SEATML behaviors.
//
// Load turns a file (and the files it includes) into an immutable Program,
// reporting every problem at once as file:line:col diagnostics. New builds
// a Machine for a Program: its Lua state, vars and general scripts. Run
// opens the adaptors and handles events, timeouts and ticks on one
// goroutine, which alone owns the state machine and the Lua state;
// adaptors reach it only through the bounded queue behind Deliver.
package interpreter
