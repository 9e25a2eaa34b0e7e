package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func runSeat(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestMotionCheck(t *testing.T) {
	// Every shipped script checks clean, without range warnings (issue 12).
	shipped, _ := filepath.Glob("../../examples/scripts/*.yaml")
	if len(shipped) < 8 {
		t.Fatalf("%d scripts in examples/scripts", len(shipped))
	}
	if _, stderr, code := runSeat(append([]string{"motion", "check"}, shipped...)...); code != 0 || stderr != "" {
		t.Errorf("shipped scripts: exit %d\n%s", code, stderr)
	}
	// A directory stands for the scripts in it (issue 33: it was read as
	// a file and refused).
	if _, stderr, code := runSeat("motion", "check", "../../examples/scripts"); code != 0 || stderr != "" {
		t.Errorf("a directory: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runSeat("motion", "check", t.TempDir()); code != 1 || !strings.Contains(stderr, "no motion scripts (.yaml files) in it") {
		t.Errorf("an empty directory: exit %d\n%s", code, stderr)
	}
	// A name finds a script in the scripts directory, as <motion script="Nod"> does.
	if _, stderr, code := runSeat("motion", "check", "--scripts", "../../examples/scripts", "Nod", "KickRight"); code != 0 || stderr != "" {
		t.Errorf("by name: exit %d\n%s", code, stderr)
	}
	_, stderr, code := runSeat("motion", "check", "../../hal/motion/testdata/bad.yaml")
	if code != 1 || !strings.Contains(stderr, `bad.yaml:3:11: unknown servo id "HEAD_YAWW"; did you mean "HEAD_YAW"?`) {
		t.Errorf("bad script: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runSeat("motion", "check", "../../hal/motion/testdata/out-of-range.yaml")
	if code != 0 || !strings.Contains(stderr, "out-of-range.yaml:4:7: warning: R_ELBOW reaches RElbowRoll 2 (1 target(s)), outside its range 0.0349..1.5446") {
		t.Errorf("range warnings: exit %d\n%s", code, stderr)
	}
	if _, _, code := runSeat("motion", "chek"); code != 2 {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}

func TestMotionPlayCSV(t *testing.T) {
	// By name, flags after it: the Go tools' way (issue 12).
	stdout, stderr, code := runSeat("motion", "play", "Nod", "--scripts", "../../examples/scripts", "--sim-speed", "inf")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "time_ms,HeadPitch,HeadPitch_sensor" {
		t.Fatalf("header %v", rows[0])
	}
	at := func(ms int) (float64, float64) {
		for _, r := range rows[1:] {
			if r[0] == strconv.Itoa(ms) {
				a, _ := strconv.ParseFloat(r[1], 64)
				s, _ := strconv.ParseFloat(r[2], 64)
				return a, s
			}
		}
		t.Fatalf("no row at %d ms", ms)
		return 0, 0
	}
	// Nod: 0.3 at 300 ms, -0.2 at 600, 0 at 900; the sensor one cycle behind.
	for _, c := range []struct {
		ms   int
		want float64
	}{{300, 0.3}, {600, -0.2}, {900, 0}} {
		a, _ := at(c.ms)
		_, s := at(c.ms + 10)
		if math.Abs(a-c.want) > 0.001 || math.Abs(s-c.want) > 0.002 {
			t.Errorf("at %d ms actuator %v, sensor (next row) %v, want %v", c.ms, a, s, c.want)
		}
	}
	if last := rows[len(rows)-1][0]; last != "910" {
		t.Errorf("last row at %s ms, want 910", last)
	}
	stdout, _, _ = runSeat("motion", "play", "--duration", "450ms", "../../examples/scripts/Nod.yaml")
	if !strings.Contains(stdout, "\n450,0.000000,") {
		t.Errorf("--duration 450ms does not end at 450:\n%s", stdout[len(stdout)-200:])
	}
}

// TestMotionPlayAtTheLimitOnTheRealBinary: a script that takes HeadYaw to
// both ends of its range, played by the real binary on the simulator: no
// row has the actuator or the sensor outside -2.0857..2.0857 (the sensor
// read 2.086214, one 12-bit step beyond, at 439cd59), and the sensor ends
// on the step inside the limit.
func TestMotionPlayAtTheLimitOnTheRealBinary(t *testing.T) {
	f := filepath.Join(t.TempDir(), "首振り.yaml")
	os.WriteFile(f, []byte(`- {duration: 300, targets: [{id: HEAD_YAW, position: 2.0857, gain: 100}]}
- {duration: 300, targets: [{id: HEAD_YAW, position: -2.0857, gain: 100}]}
- {duration: 300, targets: [{id: HEAD_YAW, position: 2.0857, gain: 100}]}
`), 0o644)
	stdout, stderr, code := runBinaryIO(t, "", "motion", "play", "--sim-speed", "inf", f)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(rows) < 90 || strings.Join(rows[0], ",") != "time_ms,HeadYaw,HeadYaw_sensor" {
		t.Fatalf("%v: %d rows, header %v", err, len(rows), rows[0])
	}
	var atMax, atMin bool
	for _, r := range rows[1:] {
		for i, name := range []string{"actuator", "sensor"} {
			v, err := strconv.ParseFloat(r[1+i], 64)
			if err != nil || v > 2.0857 || v < -2.0857 {
				t.Errorf("at %s ms the %s reads %s, outside -2.0857..2.0857", r[0], name, r[1+i])
			}
			atMax = atMax || v > 2.08
			atMin = atMin || v < -2.08
		}
	}
	if !atMax || !atMin {
		t.Errorf("the joint never reached its limits (max %v, min %v)", atMax, atMin)
	}
	if last := rows[len(rows)-1][2]; last != strconv.FormatFloat(1359*2*math.Pi/4096, 'f', 6, 64) {
		t.Errorf("sensor ends at %s, want 1359 steps of 2pi/4096 (2.084680)", last)
	}
}

func TestDevicesFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.xml")
	os.WriteFile(bad, []byte("<devices><device name=\"x\"/></devices>"), 0o644)
	_, stderr, code := runSeat("check", "--devices", bad, "../../examples/touch-wave.seatml")
	if code != 1 || !strings.Contains(stderr, `bad.xml:1:10: <device> requires attribute "type"`) {
		t.Errorf("bad --devices: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runSeat("check", "--devices", "../../examples/devices/nao.xml", "../../examples/touch-wave.seatml"); code != 0 || stderr != "" {
		t.Errorf("nao.xml: exit %d\n%s", code, stderr)
	}
	// --devices beats general@devices.
	beh := filepath.Join(dir, "b.seatml")
	os.WriteFile(beh, []byte(`<seatml><general name="b" devices="missing.xml"/><state name="s"/></seatml>`), 0o644)
	if _, stderr, code := runSeat("check", beh); code != 1 || !strings.Contains(stderr, `devices "missing.xml": no such file or directory`) {
		t.Errorf("general@devices: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runSeat("check", "--devices", "../../examples/devices/nao.xml", beh); code != 0 {
		t.Errorf("--devices must win over general@devices: exit %d\n%s", code, stderr)
	}
}
