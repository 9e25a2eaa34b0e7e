package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seatml/seat/adaptors/openrtm/omnitest"
	"github.com/seatml/seat/adaptors/ros"
	"github.com/seatml/seat/adaptors/ros/rosmsg"
	"github.com/seatml/seat/interpreter/scxml/irptest"

	"go.uber.org/goleak"
)

// TestMain runs the real main when SEAT_TEST_MAIN is set, so tests can start
// seat as a process and send it signals. Otherwise it runs the tests, with
// a leak check. The stdio adaptor's reader may stay blocked on a pipe
// nobody closes: the documented cost of reading a terminal, not a leak of
// the machine.
//
// The tutorial ROS types Debian does not package (testdata/ros) are on
// ROS_PACKAGE_PATH for seat processes, and in the types of this one.
func TestMain(m *testing.M) {
	if os.Getenv("SEAT_TEST_MAIN") == "1" {
		main()
		return
	}
	if dir, err := filepath.Abs("../../testdata/ros"); err == nil {
		os.Setenv("ROS_PACKAGE_PATH", dir)
	}
	// Relative, so that messages naming the paths searched are the same
	// on every machine (the golden files run from testdata/check, two
	// levels down as well).
	ros.Types = rosmsg.NewRegistry(append([]string{"../../testdata/ros"}, rosmsg.DefaultRoots()[1:]...))
	irptest.Note(os.Stderr, "cmd/seat TestRunIRPOnTheRealClock") // a skip is silent without -v
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("io.(*pipe).read"), goleak.Cleanup(func(int) { omnitest.Cleanup() }))
}
