package hal

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/seatml/seat/schema"
)

// Key prefixes in memory [004].
const (
	SubPrefix = "Device/SubDeviceList/"
	DevPrefix = "Device/DeviceList/"
)

// Device is a board on a bus.
type Device struct {
	Name    string
	Type    string
	Bus     string
	Address int
	Pos     schema.Pos
	// Index is the device's position in Tree.Devices and in frame statuses.
	Index int
}

// SubDevice is one actuator or sensor of a device.
type SubDevice struct {
	// Name is the path between SubPrefix and the key, ending in /Actuator
	// or /Sensor: "HeadYaw/Position/Actuator".
	Name     string
	Type     string
	Device   *Device
	Number   int
	Gain     float64
	Offset   float64
	Min, Max float64
	Initial  float64
	// Extra holds the other attributes of the device file, as keys.
	Extra map[string]string
	// Interpolate is false for actuators that jump to each command.
	Interpolate bool
	// MaxSpeed is the simulator's slew limit for a joint (units/s); 0 =
	// the simulator's default.
	MaxSpeed float64
	Pos      schema.Pos
	// Handle indexes the subdevice in Tree.Subs and in frames.
	Handle int
}

// IsActuator reports whether s is an actuator.
func (s *SubDevice) IsActuator() bool { return strings.HasSuffix(s.Name, "/Actuator") }

// Key returns the memory key of one of s's values: s.Key("Value").
func (s *SubDevice) Key(name string) string { return SubPrefix + s.Name + "/" + name }

// Joint groups the subdevices of one joint.
type Joint struct {
	Name     string
	Position *SubDevice // J/Position/Actuator
	Sensor   *SubDevice // J/Position/Sensor
	Hardness *SubDevice // J/Hardness/Actuator
}

// Tree is a validated device tree.
type Tree struct {
	Devices []*Device
	Subs    []*SubDevice
	Joints  []*Joint

	devices map[string]*Device
	subs    map[string]*SubDevice
	joints  map[string]*Joint
}

// Device returns a device by name.
func (t *Tree) Device(name string) *Device { return t.devices[name] }

// Sub returns a subdevice by path.
func (t *Tree) Sub(path string) *SubDevice { return t.subs[path] }

// Joint returns a joint by name.
func (t *Tree) Joint(name string) *Joint { return t.joints[name] }

// JointNames lists the joints, sorted.
func (t *Tree) JointNames() []string {
	out := make([]string, 0, len(t.Joints))
	for _, j := range t.Joints {
		out = append(out, j.Name)
	}
	sort.Strings(out)
	return out
}

// Resolve finds the subdevice a key names: a path, with or without the
// SubPrefix and with or without a trailing "/Value".
func (t *Tree) Resolve(key string) (*SubDevice, bool) {
	k := strings.TrimPrefix(key, SubPrefix)
	k = strings.TrimSuffix(k, "/Value")
	s, ok := t.subs[k]
	return s, ok
}

// build indexes a tree and checks it; diagnostics go to l.
func (t *Tree) build(l *schema.List) {
	t.devices = map[string]*Device{}
	t.subs = map[string]*SubDevice{}
	t.joints = map[string]*Joint{}
	for i, d := range t.Devices {
		d.Index = i
		if prev, dup := t.devices[d.Name]; dup {
			l.Errorf(d.Pos, "device %q is declared twice (first at %d:%d)", d.Name, prev.Pos.Line, prev.Pos.Col)
			continue
		}
		t.devices[d.Name] = d
	}
	numbers := map[string]*SubDevice{}
	for i, s := range t.Subs {
		s.Handle = i
		if prev, dup := t.subs[s.Name]; dup {
			l.Errorf(s.Pos, "subdevice %q is declared twice (first at %d:%d)", s.Name, prev.Pos.Line, prev.Pos.Col)
			continue
		}
		t.subs[s.Name] = s
		if !strings.HasSuffix(s.Name, "/Actuator") && !strings.HasSuffix(s.Name, "/Sensor") {
			l.Errorf(s.Pos, "subdevice name %q must end in /Actuator or /Sensor", s.Name)
		}
		if s.Device != nil {
			k := s.Device.Name + "\x00" + s.Type + "\x00" + strconv.Itoa(s.Number)
			if prev, dup := numbers[k]; dup {
				l.Errorf(s.Pos, "subdevice number %d of type %q on device %q is taken by %q", s.Number, s.Type, s.Device.Name, prev.Name)
			}
			numbers[k] = s
		}
		if s.Min > s.Max {
			l.Errorf(s.Pos, "subdevice %q: min %g is greater than max %g", s.Name, s.Min, s.Max)
		}
		s.Initial = math.Min(math.Max(s.Initial, s.Min), s.Max)
	}
	for _, s := range t.Subs {
		j, ok := strings.CutSuffix(s.Name, "/Position/Actuator")
		if !ok || t.subs[s.Name] != s {
			continue
		}
		joint := &Joint{Name: j, Position: s, Sensor: t.subs[j+"/Position/Sensor"], Hardness: t.subs[j+"/Hardness/Actuator"]}
		switch {
		case joint.Sensor == nil:
			l.Errorf(s.Pos, "joint %q has no %s/Position/Sensor", j, j)
		case joint.Hardness == nil:
			l.Errorf(s.Pos, "joint %q has no %s/Hardness/Actuator", j, j)
		case joint.Sensor.Device != s.Device || joint.Sensor.Number != s.Number:
			l.Errorf(joint.Sensor.Pos, "joint %q: position sensor and actuator must share device and number", j)
		default:
			t.Joints = append(t.Joints, joint)
			t.joints[j] = joint
		}
	}
}

// ZeroPosition returns the jointZeroPosition calibration of a joint's
// position sensor (0 = uncalibrated).
func (j *Joint) ZeroPosition() float64 {
	v, err := strconv.ParseFloat(j.Sensor.Extra["jointZeroPosition"], 64)
	if err != nil {
		return 0
	}
	return v
}

// parseGain reads a gain: a decimal or a fraction a/b.
func parseGain(s string) (float64, error) {
	if a, b, ok := strings.Cut(s, "/"); ok {
		x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if err1 != nil || err2 != nil || y == 0 {
			return 0, fmt.Errorf("%q is not a number or a fraction a/b", s)
		}
		return x / y, nil
	}
	return strconv.ParseFloat(strings.TrimSpace(s), 64)
}
