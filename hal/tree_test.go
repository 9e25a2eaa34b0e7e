package hal

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite examples/devices/nao.xml from the built-in tree")

func TestNAOTreeHasEveryKeyOf004(t *testing.T) {
	tree := NAOTree()
	if n := len(tree.Subs); n != 262 {
		t.Errorf("%d subdevices, want 262", n)
	}
	if n := len(tree.Joints); n != 26 {
		t.Errorf("%d joints, want 26", n)
	}
	motorBoards := 0
	for _, d := range tree.Devices {
		if d.Type == "MotorBoard" {
			motorBoards++
		}
	}
	if motorBoards != 13 {
		t.Errorf("%d motor boards, want 13", motorBoards)
	}
	e := newEngine(t, tree)
	f, err := os.Open("testdata/nao-keys-004.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := 0
	for sc := bufio.NewScanner(f); sc.Scan(); keys++ {
		key := sc.Text()
		if _, _, ok := e.Memory().Get(key); !ok {
			t.Errorf("memory has no %s", key)
		}
	}
	if keys < 270 {
		t.Errorf("only %d keys read from testdata", keys)
	}
	// The two keys 004 does not list.
	for _, p := range []string{"RHipYawPitch/Temperature/Sensor", "Battery/Charge/Sensor"} {
		if tree.Sub(p) == nil {
			t.Errorf("no %s", p)
		}
	}
}

func TestSection12Keys(t *testing.T) {
	e := newEngine(t, NAOTree())
	m := e.Memory()
	want := map[string]any{
		SubPrefix + "HeadYaw/Position/Actuator/Min":               -2.0857,
		SubPrefix + "LElbowRoll/Position/Actuator/Max":            -0.0349,
		SubPrefix + "RElbowRoll/Position/Actuator/Min":            0.0349,
		SubPrefix + "HeadYaw/Position/Sensor/jointZeroPosition":   2048.0,
		SubPrefix + "HeadYaw/Position/Actuator/Type":              "Joint",
		SubPrefix + "HeadYaw/Position/Actuator/Device":            "HeadBoard",
		SubPrefix + "HeadPitch/Position/Actuator/SubDeviceNumber": int64(2),
		SubPrefix + "HeadYaw/Position/Actuator/Ack":               int64(0),
		SubPrefix + "Ears/Led/Left/0Deg/Actuator/Gain":            1.0 / 15,
		SubPrefix + "US/Left/Sensor/Value9":                       0.0,
		SubPrefix + "US/Actuator/Interpolate":                     false,
		SubPrefix + "LKneePitch/Temperature/Sensor/Value":         50.0,
		SubPrefix + "Battery/Charge/Sensor/Value":                 1.0,
		DevPrefix + "HeadBoard/Type":                              "MotorBoard",
		DevPrefix + "HeadBoard/Bus":                               "rs485-head",
		DevPrefix + "HeadBoard/Address":                           int64(1),
		DevPrefix + "ChestBoard/Nack":                             int64(0),
	}
	for k, w := range want {
		v, _, ok := m.Get(k)
		if !ok {
			t.Errorf("no key %s", k)
			continue
		}
		if diff := cmp.Diff(w, v, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
	// Devices have no Value, Gain, Offset, Min or Max.
	for _, k := range []string{"Value", "Gain", "Offset", "Min", "Max"} {
		if _, _, ok := m.Get(DevPrefix + "HeadBoard/" + k); ok {
			t.Errorf("device has %s", k)
		}
	}
}

func TestExampleDeviceFileIsTheBuiltInTree(t *testing.T) {
	const path = "../examples/devices/nao.xml"
	var buf bytes.Buffer
	if err := NAOTree().WriteXML(&buf); err != nil {
		t.Fatal(err)
	}
	if *update {
		os.WriteFile(path, buf.Bytes(), 0o644)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./hal -update writes it)", err)
	}
	loaded, diags := LoadTree(path, data)
	if loaded == nil {
		t.Fatal(diags)
	}
	opts := []cmp.Option{
		cmpopts.IgnoreFields(SubDevice{}, "Pos"), cmpopts.IgnoreFields(Device{}, "Pos"),
		cmpopts.IgnoreUnexported(Tree{}),
	}
	if diff := cmp.Diff(NAOTree(), loaded, opts...); diff != "" {
		t.Errorf("examples/devices/nao.xml differs from the built-in tree (-builtin +file):\n%s", diff)
	}
}

func TestDeviceFileErrors(t *testing.T) {
	// Every fault at once, at its line and column (checked by hand once,
	// then kept in testdata/bad-devices.golden; -update rewrites it).
	data, err := os.ReadFile("testdata/bad-devices.xml")
	if err != nil {
		t.Fatal(err)
	}
	tree, diags := LoadTree("bad-devices.xml", data)
	if tree != nil {
		t.Fatal("a bad file loaded")
	}
	got := diags.Error() + "\n"
	if *update {
		os.WriteFile("testdata/bad-devices.golden", []byte(got), 0o644)
	}
	want, _ := os.ReadFile("testdata/bad-devices.golden")
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
