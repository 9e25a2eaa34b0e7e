package hal

import (
	"fmt"
	"math"
	"strconv"

	"github.com/seatml/seat/schema"
)

// naoJoint is a NAO V4 joint with its limits (radians, or 0..1 for hands).
type naoJoint struct {
	name     string
	min, max float64
}

// naoJoints lists the 26 joints two by two, as their motor boards pair them.
var naoJoints = []naoJoint{
	{"HeadYaw", -2.0857, 2.0857}, {"HeadPitch", -0.6720, 0.5149},
	{"LShoulderPitch", -2.0857, 2.0857}, {"LShoulderRoll", -0.3142, 1.3265},
	{"LElbowYaw", -2.0857, 2.0857}, {"LElbowRoll", -1.5446, -0.0349},
	{"LWristYaw", -1.8238, 1.8238}, {"LHand", 0, 1},
	{"RShoulderPitch", -2.0857, 2.0857}, {"RShoulderRoll", -1.3265, 0.3142},
	{"RElbowYaw", -2.0857, 2.0857}, {"RElbowRoll", 0.0349, 1.5446},
	{"RWristYaw", -1.8238, 1.8238}, {"RHand", 0, 1},
	{"LHipYawPitch", -1.145303, 0.740810}, {"LHipRoll", -0.379472, 0.790477},
	{"LHipPitch", -1.535889, 0.484090}, {"LKneePitch", -0.092346, 2.112528},
	{"LAnklePitch", -1.189516, 0.922747}, {"LAnkleRoll", -0.397880, 0.769001},
	{"RHipYawPitch", -1.145303, 0.740810}, {"RHipRoll", -0.790477, 0.379472},
	{"RHipPitch", -1.535889, 0.484090}, {"RKneePitch", -0.092346, 2.112528},
	{"RAnklePitch", -1.189516, 0.922747}, {"RAnkleRoll", -0.769001, 0.397880},
}

var naoMotorBoards = []struct{ name, bus string }{
	{"HeadBoard", "rs485-head"},
	{"LShoulderBoard", "rs485-larm"}, {"LArmBoard", "rs485-larm"}, {"LHandBoard", "rs485-larm"},
	{"RShoulderBoard", "rs485-rarm"}, {"RArmBoard", "rs485-rarm"}, {"RHandBoard", "rs485-rarm"},
	{"LHipBoard", "rs485-lleg"}, {"LThighBoard", "rs485-lleg"}, {"LAnkleBoard", "rs485-lleg"},
	{"RHipBoard", "rs485-rleg"}, {"RThighBoard", "rs485-rleg"}, {"RAnkleBoard", "rs485-rleg"},
}

// Gains [004 levels; project otherwise].
var (
	gainJointActuator = 2 * math.Pi / 65536
	gainJointSensor   = 2 * math.Pi / 4096
)

// NAOTree builds the built-in NAO-like tree: every subdevice key of NAO's
// Device.xml documentation, 262 subdevices on 24 boards (docs/devices.md §1,
// "The built-in NAO tree").
func NAOTree() *Tree {
	t := &Tree{}
	numbers := map[string]int{}
	dev := func(name, typ, bus string, addr int) *Device {
		d := &Device{Name: name, Type: typ, Bus: bus, Address: addr}
		t.Devices = append(t.Devices, d)
		return d
	}
	sub := func(d *Device, path, typ string, gain, min, max, initial float64) *SubDevice {
		k := d.Name + "/" + typ
		numbers[k]++
		s := &SubDevice{Name: path, Type: typ, Device: d, Number: numbers[k], Gain: gain, Min: min, Max: max,
			Initial: initial, Interpolate: true, Extra: map[string]string{}}
		t.Subs = append(t.Subs, s)
		return s
	}
	addr := map[string]int{}
	for i, j := range naoJoints {
		b := naoMotorBoards[i/2]
		var d *Device
		if i%2 == 0 {
			addr[b.bus]++
			d = dev(b.name, "MotorBoard", b.bus, addr[b.bus])
		} else {
			d = t.Devices[len(t.Devices)-1]
		}
		sub(d, j.name+"/Position/Actuator", "Joint", gainJointActuator, j.min, j.max, 0)
		s := sub(d, j.name+"/Position/Sensor", "JointPosition", gainJointSensor, j.min, j.max, 0)
		s.Extra["jointZeroPosition"] = "2048"
		sub(d, j.name+"/Hardness/Actuator", "JointHardness", 0.001, 0, 1, 0)
		sub(d, j.name+"/ElectricCurrent/Sensor", "JointCurrent", 0.001, 0, 4, 0)
		sub(d, j.name+"/Temperature/Sensor", "JointTemperature", 0.001, 0, 150, 50)
	}
	led := func(d *Device, path string, gain float64) { sub(d, path, "Led", gain, 0, 1, 0) }
	rgb := []string{"Red", "Green", "Blue"}

	chest := dev("ChestBoard", "ChestBoard", "i2c-chest", 1)
	for _, c := range rgb {
		led(chest, "ChestBoard/Led/"+c+"/Actuator", 1.0/254)
	}
	sub(chest, "ChestBoard/Button/Sensor", "Switch", 1, 0, 1, 0)

	ears := dev("EarsBoard", "LedBoard", "i2c-head", 1)
	for _, side := range []string{"Left", "Right"} {
		for deg := 0; deg < 360; deg += 36 {
			led(ears, fmt.Sprintf("Ears/Led/%s/%dDeg/Actuator", side, deg), 1.0/15)
		}
	}
	face := dev("FaceBoard", "LedBoard", "i2c-head", 2)
	for _, c := range rgb {
		for _, side := range []string{"Left", "Right"} {
			for deg := 0; deg < 360; deg += 45 {
				led(face, fmt.Sprintf("Face/Led/%s/%s/%dDeg/Actuator", c, side, deg), 1.0/63)
			}
		}
	}
	head := dev("HeadTouchBoard", "TouchBoard", "i2c-head", 3)
	for _, group := range []struct {
		part string
		n    int
	}{{"Front", 2}, {"Middle", 1}, {"Rear", 3}} {
		for _, side := range []string{"Left", "Right"} {
			for i := range group.n {
				led(head, fmt.Sprintf("Head/Led/%s/%s/%d/Actuator", group.part, side, i), 1.0/254)
			}
		}
	}
	for _, p := range []string{"Front", "Middle", "Rear"} {
		sub(head, "Head/Touch/"+p+"/Sensor", "Touch", 1, 0, 1, 0)
	}
	for _, side := range []string{"L", "R"} {
		foot := dev(side+"FootBoard", "FootBoard", "i2c-"+map[string]string{"L": "lleg", "R": "rleg"}[side], 1)
		for _, c := range rgb {
			led(foot, side+"Foot/Led/"+c+"/Actuator", 1.0/254)
		}
		for _, b := range []string{"Left", "Right"} {
			sub(foot, side+"Foot/Bumper/"+b+"/Sensor", "Switch", 1, 0, 1, 0)
		}
		for _, f := range []string{"FrontLeft", "FrontRight", "RearLeft", "RearRight"} {
			sub(foot, side+"Foot/FSR/"+f+"/Sensor", "FSR", 0.001, 0, 25, 0)
		}
		sub(foot, side+"Foot/FSR/TotalWeight/Sensor", "FSR", 0.001, 0, 100, 0)
		sub(foot, side+"Foot/FSR/CenterOfPressure/X/Sensor", "FSR", 0.001, -0.1, 0.1, 0)
		sub(foot, side+"Foot/FSR/CenterOfPressure/Y/Sensor", "FSR", 0.001, -0.1, 0.1, 0)
	}
	for _, side := range []string{"L", "R"} {
		hand := dev(side+"HandTouchBoard", "TouchBoard", "i2c-"+map[string]string{"L": "larm", "R": "rarm"}[side], 1)
		for _, p := range []string{"Back", "Left", "Right"} {
			sub(hand, side+"Hand/Touch/"+p+"/Sensor", "Touch", 1, 0, 1, 0)
		}
	}
	imu := dev("InertialBoard", "InertialBoard", "i2c-chest", 2)
	for _, s := range []struct {
		name     string
		min, max float64
	}{{"GyrRef", -10, 10}, {"GyrX", -10, 10}, {"GyrY", -10, 10}, {"AccX", -40, 40}, {"AccY", -40, 40}, {"AccZ", -40, 40}, {"AngleX", -math.Pi, math.Pi}, {"AngleY", -math.Pi, math.Pi}} {
		sub(imu, "InertialSensor/"+s.name+"/Sensor", "Inertial", 0.001, s.min, s.max, 0)
	}
	us := dev("USBoard", "USBoard", "i2c-chest", 3)
	usAct := sub(us, "US/Actuator", "UltraSound", 1, 0, 100, 0)
	usAct.Interpolate = false
	sub(us, "US/Sensor", "UltraSound", 0.001, 0, 2.55, 0)
	for _, side := range []string{"Left", "Right"} {
		s := sub(us, "US/"+side+"/Sensor", "UltraSound", 0.001, 0, 2.55, 0)
		for i := 1; i <= 9; i++ {
			s.Extra["Value"+strconv.Itoa(i)] = "0"
		}
	}
	bat := dev("BatteryBoard", "BatteryBoard", "i2c-chest", 4)
	sub(bat, "Battery/Current/Sensor", "Battery", 0.001, -10, 10, 0)
	sub(bat, "Battery/Temperature/Sensor", "Battery", 0.001, 0, 100, 50)
	sub(bat, "Battery/Charge/Sensor", "Battery", 0.001, 0, 1, 1)
	// 004 omits RHipYawPitch/Temperature/Sensor; the joint loop adds it.
	var diags schema.List
	t.build(&diags)
	if diags.HasErrors() {
		panic("hal: the built-in NAO tree is invalid: " + diags.Error())
	}
	return t
}
