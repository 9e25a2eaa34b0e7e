package motion

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seatml/seat/schema"
)

// Target is one servo goal of a frame.
type Target struct {
	ID       string // as written (NECK_YAW stays NECK_YAW)
	Servo    int
	Position float64
	Gain     float64 // recorded only; NaN allowed with torque 0
	Torque   float64 // 0..100; 0 = relaxed
	Pos      schema.Pos
}

// Frame is a set of targets to reach in Duration.
type Frame struct {
	Duration time.Duration
	Targets  []Target
	Pos      schema.Pos
}

// Script is a loaded motion script.
type Script struct {
	Name   string // base name without .yaml
	File   string
	Frames []Frame
}

// Total is the sum of the frame durations.
func (s *Script) Total() time.Duration {
	var t time.Duration
	for _, f := range s.Frames {
		t += f.Duration
	}
	return t
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

func yamlErrorPos(file string, err error) schema.Pos {
	p := schema.Pos{File: file, Line: 1, Col: 1}
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
	}
	return p
}

func yamlErrorMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = regexp.MustCompile(`^line \d+: `).ReplaceAllString(msg, "")
	return "invalid YAML: " + msg
}

// Parse reads a script (block or flow style, any key order) and reports
// every problem at once, positioned. Unknown keys are warnings.
func Parse(file string, data []byte) (*Script, schema.List) {
	var diags schema.List
	s := &Script{File: file, Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		diags.Errorf(yamlErrorPos(file, err), "%s", yamlErrorMsg(err))
		return nil, diags
	}
	pos := func(n *yaml.Node) schema.Pos { return schema.Pos{File: file, Line: n.Line, Col: n.Column} }
	if len(doc.Content) == 0 {
		diags.Errorf(schema.Pos{File: file, Line: 1, Col: 1}, "empty script: want a sequence of frames")
		return nil, diags
	}
	root := doc.Content[0]
	if root.Kind != yaml.SequenceNode || len(root.Content) == 0 {
		diags.Errorf(pos(root), "a script is a non-empty sequence of frames")
		return nil, diags
	}
	for _, fn := range root.Content {
		if fn.Kind != yaml.MappingNode {
			diags.Errorf(pos(fn), "a frame is a mapping with duration and targets")
			continue
		}
		f := Frame{Pos: pos(fn)}
		var hasDuration, hasTargets bool
		for i := 0; i+1 < len(fn.Content); i += 2 {
			k, v := fn.Content[i], fn.Content[i+1]
			switch k.Value {
			case "duration":
				hasDuration = true
				var ms int64
				if err := v.Decode(&ms); err != nil || v.Kind != yaml.ScalarNode {
					diags.Errorf(pos(v), "duration %q is not a whole number of milliseconds", v.Value)
				} else if ms < 0 {
					diags.Errorf(pos(v), "duration %d is negative", ms)
				}
				f.Duration = time.Duration(ms) * time.Millisecond
			case "targets":
				hasTargets = true
				f.Targets = parseTargets(v, pos, &diags)
			default:
				diags.Warnf(pos(k), "unknown frame key %q ignored%s", k.Value, schema.DidYouMean(k.Value, []string{"duration", "targets"}, "%q"))
			}
		}
		if !hasDuration {
			diags.Errorf(f.Pos, "frame has no duration")
		}
		if !hasTargets {
			diags.Errorf(f.Pos, "frame has no targets (write targets: [] for a pause)")
		}
		s.Frames = append(s.Frames, f)
	}
	diags.Sort()
	if diags.HasErrors() {
		return nil, diags
	}
	return s, diags
}

func parseTargets(v *yaml.Node, pos func(*yaml.Node) schema.Pos, diags *schema.List) []Target {
	if v.Kind != yaml.SequenceNode {
		diags.Errorf(pos(v), "targets must be a sequence")
		return nil
	}
	var out []Target
	seen := map[int]schema.Pos{}
	for _, tn := range v.Content {
		if tn.Kind != yaml.MappingNode {
			diags.Errorf(pos(tn), "a target is a mapping with id, position and gain")
			continue
		}
		t := Target{Torque: 100, Pos: pos(tn)}
		has := map[string]bool{}
		var torqueNode, gainNode *yaml.Node
		for i := 0; i+1 < len(tn.Content); i += 2 {
			k, val := tn.Content[i], tn.Content[i+1]
			num := func() float64 {
				var f float64
				if err := val.Decode(&f); err != nil || val.Kind != yaml.ScalarNode {
					diags.Errorf(pos(val), "%s %q is not a number", k.Value, val.Value)
				}
				return f
			}
			has[k.Value] = true
			switch k.Value {
			case "id":
				t.ID = val.Value
				id, ok := ServoID(val.Value)
				if !ok {
					diags.Errorf(pos(val), "unknown servo id %q%s", val.Value, schema.DidYouMean(val.Value, knownServoNames(), "%q"))
					t.Servo = -1
					continue
				}
				t.Servo = id
				if prev, dup := seen[id]; dup {
					diags.Errorf(pos(val), "servo %s appears twice in this frame (first at %d:%d)", val.Value, prev.Line, prev.Col)
				}
				seen[id] = pos(val)
			case "position":
				if t.Position = num(); math.IsNaN(t.Position) || math.IsInf(t.Position, 0) {
					diags.Errorf(pos(val), "position %q is not a finite number", val.Value)
				}
			case "gain":
				t.Gain, gainNode = num(), val
			case "torque":
				t.Torque, torqueNode = num(), val
				if t.Torque < 0 || t.Torque > 100 || math.IsNaN(t.Torque) {
					diags.Errorf(pos(val), "torque %s is out of range 0 to 100", val.Value)
				}
			default:
				diags.Warnf(pos(k), "unknown target key %q ignored%s", k.Value, schema.DidYouMean(k.Value, []string{"id", "position", "gain", "torque"}, "%q"))
			}
		}
		for _, req := range []string{"id", "position", "gain"} {
			if !has[req] {
				diags.Errorf(t.Pos, "target has no %s", req)
			}
		}
		if gainNode != nil && math.IsNaN(t.Gain) && t.Torque != 0 {
			at := pos(gainNode)
			if torqueNode != nil {
				at = pos(torqueNode)
			}
			diags.Errorf(at, "gain .NaN is only allowed with torque 0")
		}
		if t.Servo >= 0 {
			out = append(out, t)
		}
	}
	return out
}

// ErrBadName is returned for a script name with ".." or an absolute path.
var ErrBadName = errors.New(`script names are relative to the scripts directory: no ".." and no absolute paths`)

// Resolve turns a script name into a path in dir: ".yaml" is optional; ".."
// and absolute paths are refused.
func Resolve(dir, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%q: %w", name, ErrBadName)
	}
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return "", fmt.Errorf("%q: %w", name, ErrBadName)
		}
	}
	if filepath.Ext(name) == "" {
		name += ".yaml"
	}
	return filepath.Join(dir, name), nil
}

// CheckRanges reports, once per servo, targets whose joint value falls
// outside the joint's Min and Max (a warning: the engine clamps).
func CheckRanges(s *Script, servos map[int]Mapping, limits func(joint string) (min, max float64, ok bool)) schema.List {
	type out struct {
		first         Target
		lo, hi, worst float64
		n             int
	}
	found := map[int]*out{}
	var order []int
	for _, f := range s.Frames {
		for _, t := range f.Targets {
			m, ok := servos[t.Servo]
			if !ok || m.Joint == "" {
				continue
			}
			v := m.Scale*t.Position + m.Offset
			lo, hi, ok := limits(m.Joint)
			if !ok || (v >= lo-1e-9 && v <= hi+1e-9) {
				continue
			}
			o := found[t.Servo]
			if o == nil {
				o = &out{first: t, lo: lo, hi: hi, worst: v}
				found[t.Servo] = o
				order = append(order, t.Servo)
			}
			o.n++
			if math.Abs(v-(lo+hi)/2) > math.Abs(o.worst-(lo+hi)/2) {
				o.worst = v
			}
		}
	}
	var diags schema.List
	for _, id := range order {
		o := found[id]
		m := servos[id]
		diags.Warnf(o.first.Pos, "%s reaches %s %.4g (%d target(s)), outside its range %g..%g: the engine clamps it",
			o.first.ID, m.Joint, o.worst, o.n, o.lo, o.hi)
	}
	return diags
}
