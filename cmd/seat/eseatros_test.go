package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/seatml/seat/adaptors/ros/rostest"
)

// TestESEATROSSamples is the acceptance test of the ROS adaptors: eSEAT's
// own ros_samples, carried over by seat port -w, each run on the real
// binary against Debian's master and checked by a peer. It needs a
// checkout of haraisao/eSEAT (MIT), named by SEAT_ESEAT_DIR; without one it
// skips. Samples that need hand work after seat port (Python loops, GUI
// buttons with no web adaptor) are listed with why, and
// checked to be reported as such.
func TestESEATROSSamples(t *testing.T) {
	repo := os.Getenv("SEAT_ESEAT_DIR")
	if repo == "" {
		t.Skip("set SEAT_ESEAT_DIR to a checkout of github.com/haraisao/eSEAT to run its ros_samples")
	}
	files, _ := filepath.Glob(filepath.Join(repo, "ros_samples", "*.seatml"))
	if len(files) == 0 {
		t.Fatalf("no ros_samples/*.seatml under %s", repo)
	}
	rostest.Start(t) // skips, or fails under SEAT_REQUIRE_TOOLS, without ROS
	dir := t.TempDir()
	var names []string
	handWork := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		names = append(names, name)
		out := filepath.Join(dir, name)
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runSeat("port", "-w", out)
		if code != 0 {
			handWork[name] = stderr
		}
	}
	sort.Strings(names)

	// What each runnable sample does, checked by a peer.
	peers := map[string]func(t *testing.T, m *rostest.Master, log *syncBuffer){
		"talker.seatml":  echoes("chatter", "hello world"),
		"talker2.seatml": echoes("chatter", "hello world"),
		"listener.seatml": func(t *testing.T, m *rostest.Master, log *syncBuffer) {
			m.Publish(t, "chatter", "std_msgs/String", "data: こんにちは")
			waitFor(t, func() bool { return strings.Contains(log.String(), "I heard こんにちは") })
		},
		"listener2.seatml": func(t *testing.T, m *rostest.Master, log *syncBuffer) {
			m.Publish(t, "chatter", "std_msgs/String", "data: こんにちは")
			waitFor(t, func() bool { return strings.Contains(log.String(), "I heard こんにちは") })
		},
		"js4turtlesim.seatml": func(t *testing.T, m *rostest.Master, log *syncBuffer) {
			m.Publish(t, "joy", "sensor_msgs/Joy", "{axes: [0.5, -1.0], buttons: [0]}")
			got := m.EchoOne(t, "turtle1/cmd_vel", func() {})
			if want := "linear: \n  x: -1.0\n  y: 0.0\n  z: 0.0\nangular: \n  x: 0.0\n  y: 0.0\n  z: 0.5"; !strings.Contains(got, want) {
				t.Errorf("rostopic echo printed:\n%s\nwithout\n%s", got, want)
			}
		},
		"add_two_ints_server.seatml":  adds("/add_two_ints"),
		"add_two_ints_server3.seatml": adds("/add_two_ints"),
	}
	// Why the others do not run after seat port alone.
	why := map[string]string{
		"add_two_ints_server2.seatml":     "its handler is in a Python file (myservice.py)",
		"add_two_ints_client.seatml":      "a GUI button calls the service, and the file has no web adaptor to show it",
		"add_two_ints_client2.seatml":     "an onexec loop reads standard input with Python",
		"add_two_ints_client2_gui.seatml": "a GUI button calls the service, and the file has no web adaptor to show it",
		"Fibonacci_server.seatml":         "its Python goal handler loops and sleeps until the goal ends",
		"Fibonacci_server2.seatml":        "its goal rule loops and sleeps until the goal ends",
		"Fibonacci_client.seatml":         "it waits for the result inside onentry",
		"Fibonacci_client1.seatml":        "it waits for the result inside onentry",
		"joint_publisher1.seatml":         "a GUI button builds a rospy message in Python, and the file has no web adaptor",
		"basic_shapes.seatml":             "a Tk combobox drives it, which seat does not show",
		"JoystickWeb.seatml":              "it splits text with Python",
		"SimpleIO_ros.seatml":             "it has a rule for an undeclared adaptor",
	}
	ran := 0
	for _, name := range names {
		t.Run(strings.TrimSuffix(name, ".seatml"), func(t *testing.T) {
			check := peers[name]
			if check == nil {
				reason, listed := why[name]
				if !listed {
					t.Fatalf("a sample this test does not know: %s", name)
				}
				_, stderr, code := seatProcess(t, dir, "check", name)
				if code == 0 && handWork[name] == "" && !strings.Contains(stderr, "warning") {
					t.Errorf("listed as not running (%s), but seat port and seat check report nothing", reason)
				}
				t.Logf("not run: %s", reason)
				return
			}
			if _, stderr, code := seatProcess(t, dir, "check", name); code != 0 { // a process: ROS_PACKAGE_PATH is read at start
				t.Fatalf("seat check after seat port:\n%s", stderr)
			}
			m := rostest.Start(t)
			t.Setenv("ROS_MASTER_URI", m.URI)
			_, log := startSeat(t, "run", filepath.Join(dir, name))
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("seat logged:\n%s", log.String())
				}
			})
			waitFor(t, func() bool { return strings.Contains(log.String(), `"to": "main_mode"`) })
			check(t, m, log)
			if !t.Failed() {
				ran++
			}
		})
	}
	t.Logf("%d of %d ros_samples run after seat port, each checked by a peer", ran, len(names))
}

// echoes checks that the behavior publishes text containing want on topic.
func echoes(topic, want string) func(t *testing.T, m *rostest.Master, log *syncBuffer) {
	return func(t *testing.T, m *rostest.Master, log *syncBuffer) {
		if got := m.EchoOne(t, topic, func() {}); !strings.Contains(got, want) {
			t.Errorf("rostopic echo /%s printed:\n%s\nwithout %q", topic, got, want)
		}
	}
}

// adds checks that the behavior serves AddTwoInts to a rospy client.
func adds(service string) func(t *testing.T, m *rostest.Master, log *syncBuffer) {
	return func(t *testing.T, m *rostest.Master, log *syncBuffer) {
		if out := m.Peer(t, "call_add_two_ints", service, "40", "2")(); !strings.Contains(out, "sum 42") {
			t.Errorf("rospy's AddTwoInts client printed:\n%s", out)
		}
	}
}
