package motion

import (
	"fmt"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/schema"
)

// ServoNames are NUbots' servo ids 0-19 (even R_, odd L_).
var ServoNames = []string{
	"R_SHOULDER_PITCH", "L_SHOULDER_PITCH", "R_SHOULDER_ROLL", "L_SHOULDER_ROLL",
	"R_ELBOW", "L_ELBOW", "R_HIP_YAW", "L_HIP_YAW", "R_HIP_ROLL", "L_HIP_ROLL",
	"R_HIP_PITCH", "L_HIP_PITCH", "R_KNEE", "L_KNEE", "R_ANKLE_PITCH", "L_ANKLE_PITCH",
	"R_ANKLE_ROLL", "L_ANKLE_ROLL", "HEAD_YAW", "HEAD_PITCH",
}

// servoAliases are other spellings of servo ids.
var servoAliases = map[string]int{"NECK_YAW": 18}

// ServoID returns the number of a servo name or alias.
func ServoID(name string) (int, bool) {
	for i, n := range ServoNames {
		if n == name {
			return i, true
		}
	}
	id, ok := servoAliases[name]
	return id, ok
}

// knownServoNames lists names and aliases, for suggestions.
func knownServoNames() []string {
	names := append([]string{}, ServoNames...)
	for a := range servoAliases {
		names = append(names, a)
	}
	return names
}

// Mapping sends a servo to a joint: joint = Scale × position + Offset.
type Mapping struct {
	Joint  string // "" disables the servo
	Scale  float64
	Offset float64
}

// DefaultServos maps NUbots servos onto the NAO's joints. R_ELBOW's scale
// of -1 is the project's inference: NUbots bends both elbows negative, the
// NAO's right elbow bends positive.
func DefaultServos() map[int]Mapping {
	joints := []string{
		"RShoulderPitch", "LShoulderPitch", "RShoulderRoll", "LShoulderRoll",
		"RElbowRoll", "LElbowRoll", "RHipYawPitch", "LHipYawPitch", "RHipRoll", "LHipRoll",
		"RHipPitch", "LHipPitch", "RKneePitch", "LKneePitch", "RAnklePitch", "LAnklePitch",
		"RAnkleRoll", "LAnkleRoll", "HeadYaw", "HeadPitch",
	}
	m := map[int]Mapping{}
	for i, j := range joints {
		m[i] = Mapping{Joint: j, Scale: 1}
	}
	m[4] = Mapping{Joint: "RElbowRoll", Scale: -1}
	return m
}

// LoadServos reads a servos.yaml override onto the defaults: each key is a
// servo name, each value a joint name, "" (disabled) or
// {joint: J, scale: S, offset: O}. A joint the tree lacks fails the load.
func LoadServos(file string, data []byte, tree *hal.Tree) (map[int]Mapping, schema.List) {
	var diags schema.List
	m := DefaultServos()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		diags.Errorf(yamlErrorPos(file, err), "%s", yamlErrorMsg(err))
		return nil, diags
	}
	if len(doc.Content) == 0 {
		return m, diags
	}
	root := doc.Content[0]
	pos := func(n *yaml.Node) schema.Pos { return schema.Pos{File: file, Line: n.Line, Col: n.Column} }
	if root.Kind != yaml.MappingNode {
		diags.Errorf(pos(root), "servos file must be a mapping of servo names to joints")
		return nil, diags
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		id, ok := ServoID(k.Value)
		if !ok {
			diags.Errorf(pos(k), "unknown servo %q%s", k.Value, schema.DidYouMean(k.Value, knownServoNames(), "%q"))
			continue
		}
		mp := Mapping{Scale: 1}
		switch v.Kind {
		case yaml.ScalarNode:
			mp.Joint = v.Value
		case yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				kk, vv := v.Content[j], v.Content[j+1]
				switch kk.Value {
				case "joint":
					mp.Joint = vv.Value
				case "scale", "offset":
					var f float64
					if err := vv.Decode(&f); err != nil {
						diags.Errorf(pos(vv), "servo %s %s %q is not a number", k.Value, kk.Value, vv.Value)
					}
					if kk.Value == "scale" {
						mp.Scale = f
					} else {
						mp.Offset = f
					}
				default:
					diags.Errorf(pos(kk), "unknown key %q for servo %s; use joint, scale, offset", kk.Value, k.Value)
				}
			}
		default:
			diags.Errorf(pos(v), "servo %s: want a joint name or {joint, scale, offset}", k.Value)
			continue
		}
		if mp.Joint != "" && tree != nil && tree.Joint(mp.Joint) == nil {
			diags.Errorf(pos(v), "servo %s: unknown joint %q%s", k.Value, mp.Joint, schema.DidYouMean(mp.Joint, tree.JointNames(), "%q"))
			continue
		}
		m[id] = mp
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return m, diags
}

// CheckMapping verifies that every mapped joint exists in tree.
func CheckMapping(m map[int]Mapping, tree *hal.Tree) error {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		if j := m[id].Joint; j != "" && tree.Joint(j) == nil {
			return fmt.Errorf("servo %s maps to %q, which the device tree does not have", ServoNames[id], j)
		}
	}
	return nil
}
