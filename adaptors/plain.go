package adaptors

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Plain values are how structured messages (ROS messages, OpenRTM data)
// cross between adaptors and behaviors: map[string]any keyed by field
// name, []any, int64, float64, string and bool (Event.Data).

// ParseText reads a message written as text, as rostopic pub takes it:
// YAML or JSON, a list of the fields' values in order or a mapping by
// name ("[[2.0, 0, 0], [0, 0, 1.8]]", "{linear: {x: 2.0}}").
func ParseText(text string) (any, error) {
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("the message is not YAML or JSON: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return plain(v), nil
}

// plain turns what YAML decoded into plain values (maps keyed by text).
func plain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = plain(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = plain(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = plain(e)
		}
		return x
	case int:
		return int64(x)
	}
	return v
}

// JSON writes plain values as compact JSON: the text of a received
// message in logs and records. A float that JSON cannot hold (NaN, an
// infinity) is written as null.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(finite(v))
	}
	return string(b)
}

// finite copies v with non-finite floats made nil.
func finite(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = finite(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = finite(e)
		}
		return l
	}
	return v
}
