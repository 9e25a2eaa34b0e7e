package ros

import (
	"os"
	"testing"

	"github.com/seatml/seat/adaptors/ros/rosmsg"
)

// TestMain adds the tutorial types Debian does not package
// (testdata/ros) to the types the adaptors find.
func TestMain(m *testing.M) {
	Types = rosmsg.NewRegistry(append([]string{"../../testdata/ros"}, rosmsg.DefaultRoots()...))
	os.Exit(m.Run())
}
