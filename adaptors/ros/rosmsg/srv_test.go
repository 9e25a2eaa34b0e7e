package rosmsg

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seatml/seat/adaptors/ros/rostest"
)

// TestServiceMD5SameAsRospy builds every service type Debian's ROS
// packages define and checks its MD5 sum against rospy's.
func TestServiceMD5SameAsRospy(t *testing.T) {
	files, _ := filepath.Glob("/usr/share/*/srv/*.srv")
	if len(files) == 0 {
		rostest.RequireTools(t, "no ROS service definitions under /usr/share")
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(filepath.Dir(filepath.Dir(f)))+"/"+strings.TrimSuffix(filepath.Base(f), ".srv"))
	}
	sums := rospySums(t, "service", names)
	r := NewRegistry([]string{"/usr/share"})
	checked := 0
	for _, n := range names {
		s, err := r.Service(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if want, ok := sums[n]; ok {
			checked++
			if s.MD5 != want {
				t.Errorf("%s: MD5 %s, rospy says %s", n, s.MD5, want)
			}
		}
	}
	if checked == 0 {
		t.Error("no service checked against rospy")
	}
	t.Logf("%d service types checked against rospy", checked)
}

// TestServiceAndAction: a package's own service and action (eSEAT's
// pkg.Type spelling too), with the parts' names and fields; a definition
// with the wrong number of parts is refused with its file.
func TestServiceAndAction(t *testing.T) {
	r := NewRegistry([]string{"testdata", "/usr/share"})
	s, err := r.Service("demo.AddTwoInts")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "demo/AddTwoInts" || s.Request.Spec.FullName() != "demo/AddTwoIntsRequest" || s.Response.Spec.Fields[0].Name != "sum" {
		t.Errorf("service %s: request %s, response %+v", s.Name, s.Request.Spec.FullName(), s.Response.Spec.Fields)
	}
	// rospy_tutorials/AddTwoInts has this sum (its md5 is in every ROS tutorial's rosservice info).
	if s.MD5 != "6a2e34150c00229791cc89ff309fff21" {
		t.Errorf("AddTwoInts MD5 %s", s.MD5)
	}
	a, err := r.Action("demo/Fibonacci")
	if err != nil {
		t.Fatal(err)
	}
	if f := a.Feedback.Spec.Fields[0]; a.Goal.Spec.Fields[0].Name != "order" || f.Name != "sequence" || !f.Array {
		t.Errorf("action parts: %+v %+v", a.Goal.Spec.Fields, a.Feedback.Spec.Fields)
	}
	if a.Go.Field(1).Type != a.Goal.Go || reflect.New(a.Result.Go).Elem().Field(2).Kind() != reflect.Slice {
		t.Errorf("action Go type %v", a.Go)
	}
	if _, err := r.Service("demo/Broken"); err == nil || !strings.Contains(err.Error(), "Broken.srv:1: a service definition is a request and a response separated by a --- line, not 3 parts") {
		t.Errorf("got %v", err)
	}
	if _, err := r.Action("demo/AddTwoInts"); err == nil || !strings.HasPrefix(err.Error(), `action type "demo/AddTwoInts" not found; searched testdata/demo/action/AddTwoInts.action, /usr/share/demo/action/AddTwoInts.action`) {
		t.Errorf("got %v", err)
	}
}
