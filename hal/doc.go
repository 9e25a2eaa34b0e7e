// Package hal is the device layer: the device tree, memory, timed commands,
// safety rules, backends and motion scripts of DEVICES.md. It is not built
// yet; until it is, SEATML's <motion> action and the seat.get, seat.set and
// seat.motion Lua functions load and validate but report that the device
// layer is missing when they run.
package hal
