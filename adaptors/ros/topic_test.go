package ros

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/ros/rostest"
)

// sink collects the events an adaptor delivers.
type sink chan adaptors.Event

func (s sink) Deliver(ctx context.Context, ev adaptors.Event) error {
	select {
	case s <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (s sink) EndOfInput(string) {}

func open(t *testing.T, m *rostest.Master, name string, pub bool, attrs map[string]string) (adaptors.Adaptor, sink) {
	t.Helper()
	a := map[string]string{"master": m.URI}
	for k, v := range attrs {
		a[k] = v
	}
	ad, err := NewTopic(adaptors.Config{Name: name, Attrs: a}, pub)
	if err != nil {
		t.Fatal(err)
	}
	s := make(sink, 100)
	if err := ad.Open(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ad.Close() })
	return ad, s
}

// TestSubReadsJapanese: a ros_sub of std_msgs/String delivers the text
// rostopic pub sends, Japanese included, as a line from the adaptor.
func TestSubReadsJapanese(t *testing.T) {
	m := rostest.Start(t)
	_, s := open(t, m, "chatter", false, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop := m.Publish(t, "chatter", "std_msgs/String", "data: こんにちは、ロボット")
	select {
	case ev := <-s:
		if ev.Source != "chatter" || ev.Text != "こんにちは、ロボット" {
			t.Errorf("event %q from %q", ev.Text, ev.Source)
		}
	case <-ctx.Done():
		t.Fatalf("nothing arrived within 30 s; rostopic pub said:\n%s", stop())
	}
}

// TestPubSends: a ros_pub of std_msgs/String sends its text; one of
// geometry_msgs/Twist takes eSEAT's list form; a text that does not fit
// is refused naming the field.
func TestPubSends(t *testing.T) {
	m := rostest.Start(t)
	str, _ := open(t, m, "say", true, nil)
	got := m.EchoOne(t, "say", func() {
		if err := str.Send("右手を上げます"); err != nil {
			t.Error(err)
		}
	})
	if want := `data: "\u53F3\u624B\u3092\u4E0A\u3052\u307E\u3059"`; !strings.Contains(got, want) {
		t.Errorf("rostopic echo printed:\n%s\nwithout %s", got, want)
	}
	twist, _ := open(t, m, "cmd_vel", true, map[string]string{"datatype": "geometry_msgs/Twist"})
	got = m.EchoOne(t, "cmd_vel", func() {
		if err := twist.Send("[[2.0,0,0],[0,0,1.8]]"); err != nil {
			t.Error(err)
		}
	})
	if want := "linear: \n  x: 2.0\n  y: 0.0\n  z: 0.0\nangular: \n  x: 0.0\n  y: 0.0\n  z: 1.8"; !strings.Contains(got, want) {
		t.Errorf("rostopic echo printed:\n%s\nwithout\n%s", got, want)
	}
	if err := twist.Send("{linear: {x: fast}}"); err == nil || err.Error() != `geometry_msgs/Twist linear.x: "fast" is not a number` {
		t.Errorf("got %v", err)
	}
}

// TestMasterStartedLater: with no master at start, Open returns at once
// and the adaptor connects once the master runs; sending before that is
// an error, not a hang.
func TestMasterStartedLater(t *testing.T) {
	m := rostest.Start(t)
	m.Stop()
	start := time.Now()
	a, _ := open(t, m, "later", true, nil)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Open took %v with no master", d)
	}
	if err := a.Send("まだ"); err == nil || !strings.Contains(err.Error(), "not connected to the ROS master") {
		t.Errorf("send before the master: %v", err)
	}
	m.Restart()
	got := m.EchoOne(t, "later", func() { _ = a.Send("はい") })
	if !strings.Contains(got, `data: "\u306F\u3044"`) {
		t.Errorf("rostopic echo printed:\n%s", got)
	}
}

// TestNodeNames: a node is named after the behavior and the adaptor, in
// the characters ROS allows.
func TestNodeNames(t *testing.T) {
	for in, want := range map[string]string{"listener_/chatter": "listener_chatter", "受付係_/turtle1/cmd_vel": "turtle1_cmd_vel", "_9": "seat_9"} {
		if got := rosName(in); got != want {
			t.Errorf("rosName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	t.Setenv("ROS_MASTER_URI", "")
	for _, c := range []struct {
		attrs map[string]string
		pub   bool
		want  string
	}{
		{map[string]string{}, true, "no ROS master: set ROS_MASTER_URI (http://127.0.0.1:11311) or the adaptor's master attribute"},
		{map[string]string{"master": "http://127.0.0.1"}, true, `ROS master "http://127.0.0.1": give http://HOST:PORT`},
		{map[string]string{"master": "127.0.0.1:11311", "datatype": "sensor_msgs/Joy"}, false, "ros_sub x: only std_msgs/String is read so far, not sensor_msgs/Joy (docs/ros.md)"},
	} {
		if _, err := NewTopic(adaptors.Config{Name: "x", Attrs: c.attrs}, c.pub); err == nil || err.Error() != c.want {
			t.Errorf("%v:\n got %v\nwant %s", c.attrs, err, c.want)
		}
	}
}
