package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seatml/seat/adaptors/ros/rostest"
)

// TestROSTopicsOnTheRealBinary: seat run with eSEAT's topic adaptors
// (named after their topics) against Debian's rosmaster: rostopic pub's
// Japanese line on /chatter fires a keyed rule whose reply reaches
// rostopic echo on /reply, and another rule publishes a Twist from
// eSEAT's list text on /cmd_vel.
func TestROSTopicsOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	f := filepath.Join(t.TempDir(), "listener.seatml")
	if err := os.WriteFile(f, []byte(`<seatml><general name="listener">
  <adaptor name="/chatter" type="ros_sub" datatype="std_msgs/String"/>
  <adaptor name="/reply" type="ros_pub" datatype="std_msgs/String"/>
  <adaptor name="/cmd_vel" type="ros_pub" datatype="geometry_msgs/Twist"/>
</general>
<state name="待機">
  <rule source="/chatter"><key>こんにちは</key><message sendto="/reply">ようこそ</message></rule>
  <rule source="/chatter"><key>進め</key><message sendto="/cmd_vel">[[2.0,0,0],[0,0,1.8]]</message></rule>
</state></seatml>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, log := startSeat(t, "run", f)
	waitFor(t, func() bool { return strings.Contains(log.String(), `"to": "待機"`) })

	m.Publish(t, "chatter", "std_msgs/String", "data: こんにちは")
	got := m.EchoOne(t, "reply", func() {})
	if want := `data: "\u3088\u3046\u3053\u305D"`; !strings.Contains(got, want) { // ようこそ, as rostopic prints it
		t.Errorf("rostopic echo /reply printed:\n%s\nwithout %s; seat logged:\n%s", got, want, log.String())
	}
	m.Publish(t, "chatter", "std_msgs/String", "data: 進め")
	got = m.EchoOne(t, "cmd_vel", func() {})
	if want := "linear: \n  x: 2.0\n  y: 0.0\n  z: 0.0\nangular: \n  x: 0.0\n  y: 0.0\n  z: 1.8"; !strings.Contains(got, want) {
		t.Errorf("rostopic echo /cmd_vel printed:\n%s\nwithout\n%s; seat logged:\n%s", got, want, log.String())
	}
}
