package hal

import (
	"context"
	"time"
)

// Status is what one exchange with a device gave in a cycle [004].
type Status uint8

// Device statuses.
const (
	Answered     Status = iota // Ack + 1
	NoAnswer                   // Nack + 1
	NotContacted               // neither
)

func (s Status) String() string {
	switch s {
	case Answered:
		return "answered"
	case NoAnswer:
		return "no answer"
	}
	return "not contacted"
}

// SensorFrame carries one cycle's raw sensor readings, indexed by
// SubDevice.Handle (actuator slots unused), and a status per device,
// indexed by Device.Index. The engine allocates it once.
type SensorFrame struct {
	Raw    []int32
	Status []Status
}

// ActuatorFrame carries one cycle's raw actuator commands, indexed by
// SubDevice.Handle (sensor slots unused); the backend sets a status per
// device for the write.
type ActuatorFrame struct {
	Raw    []int32
	Status []Status
}

// Backend connects the engine to hardware or a simulation. Values are raw
// integers: gain and offset stay in the engine. Each call gets one control
// period through ctx; a call that overruns counts as NoAnswer for every
// device, and the cycle as late.
type Backend interface {
	// Open prepares the backend for a tree; frames are sized for it.
	Open(ctx context.Context, t *Tree) error
	// Read fills the sensor frame for engine time now.
	Read(ctx context.Context, now time.Duration, f *SensorFrame) error
	// Write sends the actuator frame for engine time now.
	Write(ctx context.Context, now time.Duration, f *ActuatorFrame) error
	// Close releases the backend.
	Close() error
}

// Injector is implemented by backends whose sensors can be set from
// outside: the simulator (seat.set on a sensor, tests, the manager).
type Injector interface {
	Inject(path string, value float64) error
}
