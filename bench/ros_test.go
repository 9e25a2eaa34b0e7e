package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"

	"github.com/seatml/seat/adaptors/ros/rostest"
	"github.com/seatml/seat/interpreter/seatml"
)

// rosEcho is seat's echo: each std_msgs/String on /ping goes back on
// /pong, from a key-less rule's Lua.
const rosEcho = `<seatml><general name="echo">
  <adaptor name="/ping" type="ros_sub"/>
  <adaptor name="/pong" type="ros_pub"/>
</general>
<state name="s"><rule source="/ping"><script>seat.send("/pong", rtc_in_data)</script></rule></state></seatml>`

// BenchmarkROSEchoRatio: round trips of std_msgs/String through Debian's
// master's topics from a goroslib driver node, to seat echoing (/ping to
// /pong, a key-less rule's Lua) and, side by side in the same run, to a
// rospy echo node (/rping to /rpong) and to a goroslib echo node in Go,
// the floor (/gping to /gpong). Two ways: one at a time (latency bound),
// and with 16 in flight (throughput). It reports each one's round trips
// per second and seat's over rospy's (the goal is at least 5) and over
// the floor's.
func BenchmarkROSEchoRatio(b *testing.B) {
	m := rostest.Start(b)
	b.Setenv("ROS_MASTER_URI", m.URI)
	prog, diags := seatml.LoadBytes("echo.seatml", []byte(rosEcho), seatml.LoadOptions{})
	if prog == nil {
		b.Fatal(diags)
	}
	_, stop := serve(b, prog)
	defer stop()
	m.Peer(b, "echo", "/rping", "/rpong")
	stopFloor := goEcho(b, m, "/gping", "/gpong")
	defer stopFloor()
	seat := newRoundTripper(b, m, "/ping", "/pong")
	defer seat.close()
	rospy := newRoundTripper(b, m, "/rping", "/rpong")
	defer rospy.close()
	floor := newRoundTripper(b, m, "/gping", "/gpong")
	defer floor.close()
	n := b.N
	b.ResetTimer()
	for _, window := range []int{1, 16} {
		seatRate := seat.run(b, n, window)
		rospyRate := rospy.run(b, n, window)
		floorRate := floor.run(b, n, window)
		w := fmt.Sprintf("w%d-", window)
		b.ReportMetric(seatRate, w+"seat-rt/s")
		b.ReportMetric(rospyRate, w+"rospy-rt/s")
		b.ReportMetric(floorRate, w+"goroslib-rt/s")
		b.ReportMetric(seatRate/rospyRate, w+"seat/rospy")
		b.ReportMetric(seatRate/floorRate, w+"seat/goroslib")
	}
}

// goEcho is the floor: a goroslib node echoing in Go, with nothing in
// between.
func goEcho(b *testing.B, m *rostest.Master, in, out string) (stop func()) {
	n, err := goroslib.NewNode(quiet(goroslib.NodeConf{Name: "goecho", MasterAddress: m.Addr, Host: "127.0.0.1"}))
	if err != nil {
		b.Fatal(err)
	}
	pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: n, Topic: out, Msg: &std_msgs.String{}})
	if err != nil {
		b.Fatal(err)
	}
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{Node: n, Topic: in, Callback: func(msg *std_msgs.String) { pub.Write(msg) }})
	if err != nil {
		b.Fatal(err)
	}
	return func() { sub.Close(); pub.Close(); n.Close() }
}

// roundTripper publishes Strings and checks that they come back.
type roundTripper struct {
	node *goroslib.Node
	pub  *goroslib.Publisher
	sub  *goroslib.Subscriber
	back chan string
}

func newRoundTripper(b *testing.B, m *rostest.Master, out, in string) *roundTripper {
	b.Helper()
	n, err := goroslib.NewNode(quiet(goroslib.NodeConf{Name: "driver" + in[1:], MasterAddress: m.Addr, Host: "127.0.0.1"}))
	if err != nil {
		b.Fatal(err)
	}
	r := &roundTripper{node: n, back: make(chan string, 1024)}
	if r.pub, err = goroslib.NewPublisher(goroslib.PublisherConf{Node: n, Topic: out, Msg: &std_msgs.String{}}); err != nil {
		b.Fatal(err)
	}
	if r.sub, err = goroslib.NewSubscriber(goroslib.SubscriberConf{Node: n, Topic: in, Callback: func(msg *std_msgs.String) {
		r.back <- msg.Data
	}}); err != nil {
		b.Fatal(err)
	}
	// The connections take a moment: send until something comes back.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r.pub.Write(&std_msgs.String{Data: "warm up"})
		select {
		case <-r.back:
			time.Sleep(100 * time.Millisecond) // warm-up replies still on their way
			for len(r.back) > 0 {
				<-r.back
			}
			return r
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Fatalf("no echo on %s within 30 s", in)
		}
	}
}

// run makes n round trips with up to window in flight, checking that
// every reply comes back in order, and returns their rate.
func (r *roundTripper) run(b *testing.B, n, window int) float64 {
	start := time.Now()
	sent := 0
	for got := 0; got < n; got++ {
		for sent < n && sent-got < window {
			r.pub.Write(&std_msgs.String{Data: fmt.Sprintf("ping %d", sent)})
			sent++
		}
		select {
		case reply := <-r.back:
			if want := fmt.Sprintf("ping %d", got); reply != want {
				b.Fatalf("reply %q, want %q", reply, want)
			}
		case <-time.After(10 * time.Second):
			b.Fatalf("no reply to ping %d within 10 s", got)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

func (r *roundTripper) close() {
	r.sub.Close()
	r.pub.Close()
	r.node.Close()
}

// quiet keeps a node's log off standard output, where go test -bench
// writes its results.
func quiet(c goroslib.NodeConf) goroslib.NodeConf {
	c.LogDestinations = goroslib.LogDestinationCallback
	c.OnLog = func(goroslib.LogLevel, string) {}
	return c
}
