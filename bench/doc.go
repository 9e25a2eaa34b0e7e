// Package bench holds seat's benchmarks: the event path with and without
// Lua against qmuntal/stateless and looplab/fsm on the same ping-pong, key
// matching over many rules, loading a large file, and one control cycle.
// The load generator against a running seat is cmd/seatload.
package bench
