package openrtm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/openrtm/idl"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/openrtm/corba"
)

const reviewIDL = `
module Review {
  struct Time { unsigned long sec; unsigned long nsec; };
  enum Kind { RED, GREEN, BLUE };
  struct Inner { Kind k; char c; double v[3]; };
  struct TimedBig { Time tm; long long data; };
  struct TimedUBig { Time tm; unsigned long long data; };
  struct TimedMix { Time tm; Inner in; sequence<Inner> list; float f; };
};
`

var reviewIDLFile string

func reviewType(t *testing.T, name string) *dataType {
	t.Helper()
	if reviewIDLFile == "" {
		dir, _ := os.MkdirTemp("", "review")
		reviewIDLFile = filepath.Join(dir, "Review.idl")
		if err := os.WriteFile(reviewIDLFile, []byte(reviewIDL), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := reviewIDLFile
	dt, err := portType(map[string]string{"datatype": name, "idl": f}, "")
	if err != nil {
		t.Fatal(err)
	}
	return dt
}

func roundTrip(t *testing.T, dt *dataType, v any) (any, error) {
	t.Helper()
	b, err := dt.encode(v, time.Unix(1, 2))
	if err != nil {
		return nil, err
	}
	d := corba.NewDecoder(b, corba.LittleEndian)
	got := d.ReadValue(dt.tc)
	if err := d.Err(); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return toPlainTC(dt.tc, got), nil
}

// TestLongLongFromText: a long long written from text (a
// <message>) must be the number, or an error; not another number.
func TestLongLongFromText(t *testing.T) {
	dt := reviewType(t, "Review::TimedBig")
	for _, tc := range []struct {
		text string
		want int64
	}{
		{"9223372036854775807", math.MaxInt64},
		{"9007199254740993", 9007199254740993},
		{"-9223372036854775808", math.MinInt64},
	} {
		got, err := roundTrip(t, dt, tc.text)
		if err != nil {
			t.Logf("%s: error %v (acceptable)", tc.text, err)
			continue
		}
		if d := got.(map[string]any)["data"]; d != tc.want {
			t.Errorf("text %q written as %v", tc.text, d)
		}
	}
}

// TestULongLong: unsigned long long from a Lua integer and from
// text.
func TestULongLong(t *testing.T) {
	dt := reviewType(t, "Review::TimedUBig")
	got, err := roundTrip(t, dt, map[string]any{"data": int64(9007199254740993)})
	if err != nil {
		t.Fatal(err)
	}
	if d := got.(map[string]any)["data"]; d != int64(9007199254740993) {
		t.Errorf("int64 9007199254740993 written as %v", d)
	}
	got, err = roundTrip(t, dt, "18446744073709551615")
	if err != nil {
		t.Logf("max unsigned long long from text: error %v", err)
	} else if d := got.(map[string]any)["data"]; d != float64(math.MaxUint64) {
		t.Errorf("text 18446744073709551615 written as %v (%T)", d, d)
	}
}

// TestMixed: enums by name, nested structs, arrays, char, empty
// sequences, a float out of range.
func TestMixed(t *testing.T) {
	dt := reviewType(t, "Review::TimedMix")
	got, err := roundTrip(t, dt, `{in: {k: BLUE, c: "A", v: [1, 2]}, list: [], f: 0.5}`)
	if err != nil {
		t.Fatal(err)
	}
	js := adaptors.JSON(got)
	t.Logf("JSON of the value: %s", js)
	want := `{"f":0.5,"in":{"c":"A","k":"BLUE","v":[1,2,0]},"list":[],"tm":{"nsec":2,"sec":1}}`
	if js != want {
		t.Errorf("JSON %s\nwant %s (a char as a one-byte string, as toPlain's comment says)", js, want)
	}
	// A char given as the number it was received as.
	if _, err := roundTrip(t, dt, map[string]any{"in": map[string]any{"c": int64(65)}}); err != nil {
		t.Errorf("char 65: %v", err)
	}
	// A float member given a value a float cannot hold.
	if got, err := roundTrip(t, dt, map[string]any{"f": 1e300}); err == nil {
		t.Errorf("float 1e300 written without error as %v", got.(map[string]any)["f"])
	}
	// An enum member given a number out of range, or a wrong name.
	if _, err := roundTrip(t, dt, map[string]any{"in": map[string]any{"k": int64(7)}}); err == nil {
		t.Error("enum 7 written")
	}
	if _, err := roundTrip(t, dt, map[string]any{"in": map[string]any{"k": "BLU"}}); err == nil {
		t.Error("enum BLU written")
	} else {
		t.Logf("enum BLU: %v", err)
	}
}

// TestBasicTypes: OpenRTM's basic types from text, edge values.
func TestBasicTypes(t *testing.T) {
	for _, tc := range []struct {
		typ, text string
		ok        bool
		want      any
	}{
		{"TimedULong", "4294967295", true, int64(4294967295)},
		{"TimedULong", "-1", false, nil},
		{"TimedUShort", "65536", false, nil},
		{"TimedOctet", "255", true, int64(255)},
		{"TimedShort", "1.5", false, nil},
		{"TimedDouble", "NaN", true, nil},
		{"TimedBoolean", "true", true, true},
		{"TimedBoolean", "1", true, true},
		{"TimedFloatSeq", "", true, []any{}},
		{"TimedStringSeq", "a, b", true, []any{"a", "b"}},
		{"TimedCharSeq", "a,b", true, nil},
		{"TimedChar", "5", true, nil},
		{"TimedFloat", "1e39", false, nil},
		{"TimedFloat", "16777217", true, nil},
	} {
		dt, err := portType(map[string]string{"datatype": tc.typ}, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := roundTrip(t, dt, tc.text)
		if (err == nil) != tc.ok {
			t.Errorf("%s %q: err %v", tc.typ, tc.text, err)
			continue
		}
		if err != nil {
			continue
		}
		d := got.(map[string]any)["data"]
		t.Logf("%s %q -> %#v, JSON %s", tc.typ, tc.text, d, adaptors.JSON(got))
		if tc.want != nil && adaptors.JSON(d) != adaptors.JSON(tc.want) {
			t.Errorf("%s %q -> %#v, want %#v", tc.typ, tc.text, d, tc.want)
		}
	}
}

// TestSameIDLTwoBehaviors: two behaviors, each in its own
// directory with its own copy of the same user IDL (idl="idl/Robot.idl"),
// run in one seat process: the second cannot start.
func TestSameIDLTwoBehaviors(t *testing.T) {
	src := "module RobotR { struct Time { unsigned long sec; unsigned long nsec; }; struct TimedPose { Time tm; double x; double y; }; };"
	var errs []error
	for _, b := range []string{"a", "b"} {
		dir := filepath.Join(t.TempDir(), b)
		os.MkdirAll(filepath.Join(dir, "idl"), 0o755)
		os.WriteFile(filepath.Join(dir, "idl", "Robot.idl"), []byte(src), 0o644)
		_, err := portType(map[string]string{"datatype": "RobotR::TimedPose", "idl": "idl/Robot.idl"}, dir)
		errs = append(errs, err)
	}
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("behavior a: %v; behavior b: %v", errs[0], errs[1])
	}
}

// TestRandomPayloads: random bytes for every basic type decode to
// an error or a value, never a panic, and quickly.
func TestRandomPayloads(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	start := time.Now()
	for _, name := range idl.BuiltinNames {
		tc, _ := idl.Builtin(name)
		dt, err := newDataType(name, tc)
		if err != nil {
			continue
		}
		for i := 0; i < 3000; i++ {
			b := make([]byte, r.Intn(64))
			r.Read(b)
			if len(b) >= 12 && r.Intn(2) == 0 {
				binary.LittleEndian.PutUint32(b[8:], uint32(r.Intn(1<<31)))
			}
			text, _, err := dt.decode(b)
			if dt.timedString { // read directly: as the value would be
				general := *dt
				general.timedString = false
				gtext, _, gerr := general.decode(b)
				if text != gtext || (err == nil) != (gerr == nil) {
					t.Fatalf("%s from % x: read directly %q, %v; as a value %q, %v", name, b, text, err, gtext, gerr)
				}
			}
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestTimedStringDirect: a TimedString-like type is written from a line
// and read back without building its value; the bytes are those the
// value would make, and only such types are read so.
func TestTimedStringDirect(t *testing.T) {
	var direct []string
	for _, name := range idl.BuiltinNames {
		tc, _ := idl.Builtin(name)
		if dt, err := newDataType(name, tc); err == nil && dt.timedString {
			direct = append(direct, name)
		}
	}
	if len(direct) != 1 || direct[0] != "TimedString" {
		t.Errorf("read directly: %v, want [TimedString]", direct)
	}
	tc, _ := idl.Builtin("TimedString")
	dt, err := newDataType("TimedString", tc)
	if err != nil {
		t.Fatal(err)
	}
	general := *dt
	general.timedString = false
	now := time.Unix(1700000000, 123456789)
	for _, line := range []string{"", "ping", "こんにちは、世界", "1,2,3", " spaced ", strings.Repeat("長", 5000)} {
		got, err := dt.encode(line, now)
		if err != nil {
			t.Fatal(err)
		}
		want, err := general.encode(line, now)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%q: written directly % x, as a value % x", line, got, want)
		}
		text, data, err := dt.decode(got)
		if err != nil || text != line || data != nil {
			t.Errorf("%q read back as %q, %v, %v", line, text, data, err)
		}
	}
}

// TestWaitBound: a value's delivery context ends with the port's, or d
// after Deliver first waits on it; until then it makes no timer.
func TestWaitBound(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	w := &waitBound{parent: parent, d: 20 * time.Millisecond}
	if w.Err() != nil || w.ctx != nil {
		t.Fatalf("before waiting: err %v, timer made %v", w.Err(), w.ctx != nil)
	}
	start := time.Now()
	select {
	case <-w.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not done 10 s after the first wait")
	}
	if since := time.Since(start); since < 20*time.Millisecond {
		t.Errorf("done after %v, before its bound", since)
	}
	if !errors.Is(w.Err(), context.DeadlineExceeded) {
		t.Errorf("err %v, want the deadline's", w.Err())
	}
	w.release()

	w = &waitBound{parent: parent, d: time.Hour}
	done := w.Done()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("not done 10 s after the port's context ended")
	}
	if !errors.Is(w.Err(), context.Canceled) {
		t.Errorf("err %v, want the port's", w.Err())
	}
	w.release()
}
