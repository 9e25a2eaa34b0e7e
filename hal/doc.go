// Package hal is the device layer of docs/devices.md: a tree of devices
// (boards) and subdevices (actuators and sensors), an ALMemory-like key
// store, timed commands interpolated every control cycle, the safety rules,
// and the backend interface with a deterministic simulator. Engine.Step(now)
// runs one cycle, so tests drive time exactly; Engine.Run ticks on the
// clock.
package hal
