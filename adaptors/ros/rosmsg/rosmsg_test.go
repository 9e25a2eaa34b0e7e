package rosmsg

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/bluenviron/goroslib/v2/pkg/msgproc"

	"github.com/seatml/seat/adaptors/ros/rostest"
)

// TestMD5SameAsRospy builds every message type Debian's ROS packages
// define (/usr/share/*/msg) and checks its MD5 sum against the one
// rospy's generated class carries, which is what a peer checks on
// connecting.
func TestMD5SameAsRospy(t *testing.T) {
	files, _ := filepath.Glob("/usr/share/*/msg/*.msg")
	if len(files) == 0 {
		rostest.RequireTools(t, "no ROS message definitions under /usr/share")
	}
	var names []string
	for _, f := range files {
		pkg := filepath.Base(filepath.Dir(filepath.Dir(f)))
		names = append(names, pkg+"/"+strings.TrimSuffix(filepath.Base(f), ".msg"))
	}
	sort.Strings(names)
	want := rospySums(t, "message", names)
	// Known differences, each with its reason: the list may only shrink.
	known := map[string]string{
		"std_msgs/ByteMultiArray": "goroslib v2.1.5 writes a byte[] field as int8[] in the MD5 text (msgproc.textField drops the rostype tag inside arrays)",
	}
	r := NewRegistry([]string{"/usr/share"})
	checked := 0
	for _, n := range names {
		typ, err := r.Message(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if w, ok := want[n]; ok {
			checked++
			switch why, isKnown := known[n]; {
			case typ.MD5 != w && !isKnown:
				t.Errorf("%s: MD5 %s, rospy says %s", n, typ.MD5, w)
			case typ.MD5 == w && isKnown:
				t.Errorf("%s: MD5 now matches rospy's: remove it from the known differences (%s)", n, why)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d of %d types were checked against rospy", checked, len(names))
	}
	t.Logf("%d message types, %d checked against rospy", len(names), checked)
}

// rospySums asks Debian's rospy (one Python process) for the MD5 sum of
// each message or service type; a type rospy has no class for is left out.
func rospySums(t *testing.T, kind string, names []string) map[string]string {
	t.Helper()
	script := `import sys, roslib.message
get = roslib.message.get_service_class if sys.argv[1] == "service" else roslib.message.get_message_class
for n in sys.stdin.read().split():
    c = get(n)
    print(n, c._md5sum if c else "-")`
	cmd := exec.Command("/usr/bin/python3", "-c", script, kind)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n"))
	out, err := cmd.Output()
	if err != nil {
		rostest.RequireTools(t, "Debian's rospy (roslib under /usr/bin/python3) did not run: "+err.Error())
	}
	sums := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if n, sum, ok := strings.Cut(l, " "); ok && sum != "-" {
			sums[n] = sum
		}
	}
	return sums
}

// TestParse covers the definition syntax: comments (Japanese ones too),
// constants (a string constant keeps '#'), arrays, Header and bare names.
func TestParse(t *testing.T) {
	s, err := Parse("demo", "Greeting", "Greeting.msg", `# 挨拶のメッセージ
Header header
string text   # 日本語の本文
int32 COUNT = 3   # a constant
string PREFIX=#こんにちは # all of it
float64[3] position
Greeting2[] more
uint8[] data
`)
	if err != nil {
		t.Fatal(err)
	}
	wantFields := []Field{
		{Name: "header", Type: "std_msgs/Header", Line: 2},
		{Name: "text", Type: "string", Line: 3},
		{Name: "position", Type: "float64", Array: true, Len: 3, Line: 6},
		{Name: "more", Type: "demo/Greeting2", Array: true, Line: 7},
		{Name: "data", Type: "uint8", Array: true, Line: 8},
	}
	if !reflect.DeepEqual(s.Fields, wantFields) {
		t.Errorf("fields\n got %+v\nwant %+v", s.Fields, wantFields)
	}
	wantConsts := []Constant{{Type: "int32", Name: "COUNT", Value: "3", Line: 4}, {Type: "string", Name: "PREFIX", Value: "#こんにちは # all of it", Line: 5}}
	if !reflect.DeepEqual(s.Constants, wantConsts) {
		t.Errorf("constants\n got %+v\nwant %+v", s.Constants, wantConsts)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"int32", "f.msg:1: \"int32\": a field is a type and a name (string data)"},
		{"# ok\nint32 a b", "f.msg:2: \"int32 a b\": one type and one name per line"},
		{"int32[x] a", "f.msg:1: type \"int32[x]\": an array's size is a positive number"},
		{"int32 a\nstring a", "f.msg:2: a is defined twice (line 1)"},
		{"uint8 X=300", "f.msg:1: constant X: \"300\" does not fit a uint8"},
		{"time T=1", "f.msg:1: constant T: a constant's type is a number, bool or string type, not time"},
		{"a/b/c x", "f.msg:1: type \"a/b/c\": a message type is pkg/Type"},
		{"int32 名前", "f.msg:1: field name \"名前\": letters, digits and _ only, starting with a letter"},
	} {
		_, err := Parse("p", "M", "f.msg", c.text)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.text, err, c.want)
		}
	}
}

// TestNotFoundNamesThePaths: a type found nowhere names every path tried,
// and which type needed it.
func TestNotFoundNamesThePaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "demo", "msg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "demo", "msg", "Outer.msg"), []byte("Missing inner\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry([]string{dir, filepath.Join(dir, "other")})
	_, err := r.Message("demo/Outer")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("got %v", err)
	}
	want := `message type "demo/Missing" not found; searched ` + filepath.Join(dir, "demo/msg/Missing.msg") + ", " +
		filepath.Join(dir, "other/demo/msg/Missing.msg") + " (a field of demo/Outer needs it)"
	if err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if _, err := r.Message("nonsense"); err == nil || err.Error() != `message type "nonsense": a message type is written pkg/Type` {
		t.Errorf("got %v", err)
	}
}

// TestMissingPackage: a type whose whole package no root holds (a robot
// SDK's, the user's own) says the package is missing and what seat run
// needs, for seat check to warn of; a type missing from a package that is
// there (a directory on a root, a root that is the package, or goroslib's
// compiled types) stays a plain not-found error, with a close name.
func TestMissingPackage(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "robot", "msg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "robot", "msg", "Arm.msg"), []byte("baxter_core_msgs/JointCommand cmd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry([]string{dir})
	_, err := r.Message("robot/Arm")
	want := `message type "baxter_core_msgs/JointCommand": package baxter_core_msgs is not on this machine (searched ` + dir +
		`); a field of robot/Arm needs it; seat run needs baxter_core_msgs/msg/JointCommand.msg: install the ROS package baxter_core_msgs, or add the directory that holds baxter_core_msgs/ to ROS_PACKAGE_PATH`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if pkg, ok := MissingPackage(err); !ok || pkg != "baxter_core_msgs" {
		t.Errorf("MissingPackage = %q, %v", pkg, ok)
	}
	_, err = r.Service("my_tutorials.AddTwoInts")
	if pkg, ok := MissingPackage(err); !ok || pkg != "my_tutorials" || !strings.Contains(err.Error(), "seat run needs my_tutorials/srv/AddTwoInts.srv") {
		t.Errorf("service: MissingPackage = %q, %v (%v)", pkg, ok, err)
	}
	_, err = r.Action("my_tutorials/Fibonacci")
	if _, ok := MissingPackage(err); !ok || !strings.Contains(err.Error(), "seat run needs my_tutorials/action/Fibonacci.action") {
		t.Errorf("action: %v", err)
	}
	for _, c := range []struct {
		r          *Registry
		kind, name string
		suggest    string
	}{
		{r, "message", "robot/Armm", "robot/Arm"},                                                // a directory robot/ on a root
		{NewRegistry([]string{filepath.Join(dir, "robot")}), "message", "robot/Ar", "robot/Arm"}, // the root is the package
		{r, "message", "sensor_msgs/Joi", "sensor_msgs/Joy"},                                     // compiled
		{r, "service", "std_srvs/SetBol", "std_srvs/SetBool"},                                    // compiled service
	} {
		var err error
		if c.kind == "service" {
			_, err = c.r.Service(c.name)
		} else {
			_, err = c.r.Message(c.name)
		}
		if _, ok := MissingPackage(err); ok || err == nil || !strings.Contains(err.Error(), "not found; searched") || !strings.HasSuffix(err.Error(), "did you mean "+c.suggest+"?") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, ok := MissingPackage(errors.New("other")); ok {
		t.Error("MissingPackage of another error")
	}
}

// TestOwnTypes: types of a package on the search path (not Debian's),
// using each other and std_msgs/Header, are built with fields a script
// can fill; eSEAT's pkg.Type spelling names the same type.
func TestOwnTypes(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("std_msgs/msg/Header.msg", "uint32 seq\ntime stamp\nstring frame_id\n")
	write("robot/msg/Joint.msg", "string name\nfloat64 angle\n")
	write("robot/msg/Pose.msg", "Header header\nJoint[] joints\nint8 MODE_A=1\n")
	r := NewRegistry([]string{dir})
	typ, err := r.Message("robot.Pose")
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(typ.New()).Elem()
	joints := v.FieldByName("FJoints")
	if joints.Kind() != reflect.Slice || joints.Type().Elem().Field(2).Tag.Get("rosname") != "name" {
		t.Fatalf("joints field: %v", joints.Type())
	}
	if f, _ := typ.Go.FieldByName("FHeader"); f.Tag.Get("rosname") != "header" {
		t.Errorf("header tag %q", f.Tag)
	}
	// The definition goroslib sends in its connection headers.
	def, err := msgproc.Definition(reflect.Zero(typ.Go).Interface())
	if err != nil || !strings.Contains(def, "int8 MODE_A=1") || !strings.Contains(def, "MSG: robot/Joint") {
		t.Errorf("definition (%v):\n%s", err, def)
	}
	if again, _ := r.Message("robot/Pose"); again != typ {
		t.Error("the same type was built twice")
	}
}
