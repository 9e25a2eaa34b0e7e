package rosmsg

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/adaptors"
)

func demoType(t *testing.T, name string) *Type {
	t.Helper()
	typ, err := NewRegistry([]string{"testdata"}).Message(name)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

// TestFillAndValue: rostopic pub's forms fill a message (a list in field
// order, eSEAT's Twist; a mapping by name), and Value gives the plain
// values scripts see, keyed by the ROS names.
func TestFillAndValue(t *testing.T) {
	move := demoType(t, "demo/Move")
	for _, text := range []string{"[[2.0, 0, 0], [0, 0, 1.8]]", "{linear: {x: 2}, angular: {z: 1.8}}", `{"linear": [2, 0, 0], "angular": {"z": 1.8}}`} {
		data, err := adaptors.ParseText(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		m := move.New()
		if err := Fill(m, data); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		want := map[string]any{"linear": map[string]any{"x": 2.0, "y": 0.0, "z": 0.0}, "angular": map[string]any{"x": 0.0, "y": 0.0, "z": 1.8}}
		if diff := cmp.Diff(want, Value(m)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", text, diff)
		}
	}
	sample := demoType(t, "demo/Sample")
	data, err := adaptors.ParseText(`{ok: true, small: -5, level: 255, count: 7, big: 9007199254740992, ratio: 0.5, text: こんにちは,
  stamp: {secs: 1700000000, nsecs: 500000000}, wait: 1.25, points: [[1, 2, 3], {z: 4}], pair: [0.5, 1.5], data: [1, 2, 3]}`)
	if err != nil {
		t.Fatal(err)
	}
	m := sample.New()
	if err := Fill(m, data); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"ok": true, "small": int64(-5), "level": int64(255), "count": int64(7), "big": int64(9007199254740992),
		"ratio": 0.5, "text": "こんにちは", "stamp": 1700000000.5, "wait": 1.25,
		"points": []any{map[string]any{"x": 1.0, "y": 2.0, "z": 3.0}, map[string]any{"x": 0.0, "y": 0.0, "z": 4.0}},
		"pair":   []any{0.5, 1.5}, "data": []any{int64(1), int64(2), int64(3)},
	}
	if diff := cmp.Diff(want, Value(m)); diff != "" {
		t.Errorf("sample (-want +got):\n%s", diff)
	}
}

// TestFillErrors: a value that does not fit names its field, and the
// message is left as it was: never half filled.
func TestFillErrors(t *testing.T) {
	sample := demoType(t, "demo/Sample")
	for _, c := range []struct{ text, want string }{
		{"{level: 256}", "demo/Sample level: 256 does not fit a uint8"},
		{"{small: -129}", "demo/Sample small: -129 does not fit an int8"},
		{"{count: 1.5}", "demo/Sample count: 1.5 is not a whole number"},
		{"{text: 5}", "demo/Sample text: 5 is not a string"},
		{"{ok: yes please}", `demo/Sample ok: "yes please" is not true or false`},
		{"{pointz: []}", `demo/Sample: no field "pointz" (did you mean points?); the fields are ok, small, level, count, big, ratio, text, stamp, wait, points, pair, data`},
		{"{points: [[1, 2, 3, 4]]}", "demo/Sample points[0]: 4 values for 3 fields (x, y, z)"},
		{"{points: [{x: abc}]}", `demo/Sample points[0].x: "abc" is not a number`},
		{"{pair: [1]}", "demo/Sample pair: 1 values for an array of 2"},
		{"{stamp: soon}", `demo/Sample stamp: "soon" is not a time: give seconds, or {secs, nsecs}`},
		{"{stamp: {sec: 1}}", `demo/Sample stamp: a time is seconds or {secs, nsecs}, not "sec"`},
		{"hello", `demo/Sample: "hello" is not a message: give a list of its fields' values, or a mapping by name`},
	} {
		data, err := adaptors.ParseText(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		m := sample.New()
		reflect.ValueOf(m).Elem().FieldByName("FCount").SetInt(42)
		before := Value(m)
		err = Fill(m, data)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.text, err, c.want)
		}
		if diff := cmp.Diff(before, Value(m)); diff != "" {
			t.Errorf("%s: the message was changed (-before +after):\n%s", c.text, diff)
		}
	}
	if _, err := adaptors.ParseText("[1, 2"); err == nil {
		t.Error("a broken list parsed")
	}
}

// TestValueAndJSON: a float32 reads as the number it was written as, and
// a received message's text is JSON even with a NaN in it.
func TestValueAndJSON(t *testing.T) {
	m := demoType(t, "demo/Sample").New()
	if err := Fill(m, map[string]any{"ratio": 0.1, "pair": []any{math.NaN(), math.Inf(1)}, "text": "はい", "big": math.Ldexp(1, 63)}); err != nil {
		t.Fatal(err)
	}
	v := Value(m)
	if v["ratio"] != 0.1 {
		t.Errorf("ratio %v, want 0.1", v["ratio"])
	}
	if v["big"] != math.Ldexp(1, 63) { // a uint64 beyond int64 is not read as negative
		t.Errorf("big %v (%T), want 2^63", v["big"], v["big"])
	}
	got := adaptors.JSON(v)
	for _, want := range []string{`"ratio":0.1,`, `"pair":[null,null]`, `"text":"はい"`} {
		if !strings.Contains(got, want) {
			t.Errorf("JSON %s: no %s", got, want)
		}
	}
}
