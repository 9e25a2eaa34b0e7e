package ros

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

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
	return openWith(t, m, func(cfg adaptors.Config) (adaptors.Adaptor, error) { return NewTopic(cfg, pub) }, name, attrs)
}

// openWith builds an adaptor of behavior "svc" on m's master with the
// factory, and opens it on a sink of its own; it is closed when the test
// ends.
func openWith(t *testing.T, m *rostest.Master, factory adaptors.Factory, name string, attrs map[string]string) (adaptors.Adaptor, sink) {
	t.Helper()
	a := map[string]string{"master": m.URI}
	for k, v := range attrs {
		a[k] = v
	}
	return openConfig(t, factory, adaptors.Config{Behavior: "svc", Name: name, Attrs: a})
}

// openLogged opens a topic adaptor of behavior on m's master whose log,
// from level up, the test reads.
func openLogged(t *testing.T, m *rostest.Master, behavior, name string, pub bool, level zapcore.Level) (adaptors.Adaptor, sink, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(level)
	ad, s := openConfig(t, func(cfg adaptors.Config) (adaptors.Adaptor, error) { return NewTopic(cfg, pub) },
		adaptors.Config{Behavior: behavior, Name: name, Log: zap.New(core), Attrs: map[string]string{"master": m.URI}})
	return ad, s, logs
}

// openConfig builds an adaptor with the factory and opens it on a sink
// of its own; it is closed when the test ends.
func openConfig(t *testing.T, factory adaptors.Factory, cfg adaptors.Config) (adaptors.Adaptor, sink) {
	t.Helper()
	ad, err := factory(cfg)
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

// TestSubReadsAnyType: a ros_sub of sensor_msgs/Joy delivers what
// rostopic pub sends as structured data, keyed by the ROS field names,
// with its JSON as the text.
func TestSubReadsAnyType(t *testing.T) {
	m := rostest.Start(t)
	_, s := open(t, m, "/joy", false, map[string]string{"datatype": "sensor_msgs/Joy"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop := m.Publish(t, "/joy", "sensor_msgs/Joy", "{header: {frame_id: ジョイ}, axes: [0.1, -0.5], buttons: [1, 0, 1]}")
	select {
	case ev := <-s:
		want := map[string]any{
			"header":  map[string]any{"seq": int64(0), "stamp": 0.0, "frame_id": "ジョイ"},
			"axes":    []any{0.1, -0.5},
			"buttons": []any{int64(1), int64(0), int64(1)},
		}
		got, _ := ev.Data.(map[string]any)
		if got != nil {
			delete(got["header"].(map[string]any), "seq") // rostopic pub counts
		}
		delete(want["header"].(map[string]any), "seq")
		if diff := cmp.Diff(want, got); diff != "" || ev.Source != "/joy" || ev.Topic != "/joy" {
			t.Errorf("event from %q on %q (-want +got):\n%s", ev.Source, ev.Topic, diff)
		}
		if !strings.HasPrefix(ev.Text, `{"axes":[0.1,-0.5],"buttons":[1,0,1],"header":{"frame_id":"ジョイ",`) {
			t.Errorf("text %s", ev.Text)
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
	// Plain values, as seat.publish gives a Lua table.
	got = m.EchoOne(t, "cmd_vel", func() {
		if err := twist.(adaptors.MessageSender).SendMessage(map[string]any{"angular": map[string]any{"z": -0.5}}); err != nil {
			t.Error(err)
		}
	})
	if want := "angular: \n  x: 0.0\n  y: 0.0\n  z: -0.5"; !strings.Contains(got, want) {
		t.Errorf("rostopic echo printed:\n%s\nwithout\n%s", got, want)
	}
	err := twist.(adaptors.MessageSender).SendMessage([]any{[]any{1.0, "x"}})
	var bad *adaptors.InvalidMessageError
	if !errors.As(err, &bad) || err.Error() != `geometry_msgs/Twist linear.y: "x" is not a number` {
		t.Errorf("a bad value: %v", err)
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

// TestNodeNames: a node is named after the behavior, in the characters
// ROS allows; an anonymous one gets rospy's suffix.
func TestNodeNames(t *testing.T) {
	for in, want := range map[string]string{"listener": "listener", "受付係 robot/1": "robot_1_2bb1816a", "受付": "seat_f1828b55", "案内": "seat_d2fa283a", "_9": "seat_9", "a__b": "a_b"} {
		if got := nodeName(in, false); got != want {
			t.Errorf("nodeName(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := nodeName("listener", true), fmt.Sprintf("listener_%d_", os.Getpid()); !strings.HasPrefix(got, want) || got == nodeName("listener", false) {
		t.Errorf("anonymous: %q, want %s…", got, want)
	}
}

// TestOneNodePerBehavior: a behavior's adaptors share one node named
// after it (rosnode list shows it once); an anonymous behavior's node
// has a suffix of its own, so two runs of it live side by side.
func TestOneNodePerBehavior(t *testing.T) {
	m := rostest.Start(t)
	for _, c := range []struct {
		name string
		pub  bool
	}{{"/chatter", false}, {"/reply", true}, {"/cmd_vel", true}} {
		ad, err := NewTopic(adaptors.Config{Behavior: "listener", Name: c.name, Attrs: map[string]string{"master": m.URI}}, c.pub)
		if err != nil {
			t.Fatal(err)
		}
		if err := ad.Open(context.Background(), make(sink, 1)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ad.Close() })
	}
	anon, err := NewTopic(adaptors.Config{Behavior: "listener", Anonymous: true, Name: "/reply", Attrs: map[string]string{"master": m.URI}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := anon.Open(context.Background(), make(sink, 1)); err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	out, err := m.Command(context.Background(), "rosnode", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("rosnode list: %v\n%s", err, out)
	}
	var names []string
	for _, l := range strings.Fields(string(out)) {
		if strings.HasPrefix(l, "/listener") {
			names = append(names, l)
		}
	}
	if len(names) != 2 || names[0] != "/listener" || names[1] != "/"+nodeName("listener", true) {
		t.Errorf("rosnode list: %q", out)
	}
}

// TestHungMasterDelaysOnlyItsBehavior: a master that takes connections
// and never answers holds up the behavior that uses it (its Open waits
// for goroslib's read timeout), not another behavior on a working
// master, which opens, publishes and closes meanwhile.
func TestHungMasterDelaysOnlyItsBehavior(t *testing.T) {
	m := rostest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{})
	go func() { // accepts, reads nothing, answers nothing
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if held = append(held, c); len(held) == 1 {
				close(accepted)
			}
		}
	}()
	hung, err := NewTopic(adaptors.Config{Behavior: "hung", Name: "/out", Attrs: map[string]string{"master": "http://" + ln.Addr().String()}}, true)
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() { opened <- hung.Open(context.Background(), make(sink, 1)) }()
	select {
	case <-accepted: // the hung behavior is connecting
	case <-time.After(10 * time.Second):
		t.Fatal("the hung master was never called")
	}
	fine, err := NewTopic(adaptors.Config{Behavior: "fine", Name: "/reply", Attrs: map[string]string{"master": m.URI}}, true)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := fine.Open(context.Background(), make(sink, 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-opened:
		t.Errorf("the other behavior's Open waited %v, until the hung master's Open ended (%v)", time.Since(start), err)
		opened <- err
	default:
	}
	got := m.EchoOne(t, "reply", func() { _ = fine.Send("はい") })
	if !strings.Contains(got, `data: "\u306F\u3044"`) {
		t.Errorf("rostopic echo printed:\n%s", got)
	}
	if err := fine.Close(); err != nil {
		t.Error(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("the hung master's Open: %v", err) // it returns, and keeps trying in the background
	}
	if err := hung.Close(); err != nil {
		t.Error(err)
	}
}

// TestMasterRestarted: when the master is restarted, the node registers
// again, with its publisher and subscriber, and messages flow as before.
func TestMasterRestarted(t *testing.T) {
	t.Cleanup(func(d time.Duration) func() { return func() { checkEvery = d } }(checkEvery))
	checkEvery = 100 * time.Millisecond
	m := rostest.Start(t)
	pub, _ := open(t, m, "reply", true, nil)
	_, s := open(t, m, "chatter", false, nil)
	check := func(when string) {
		t.Helper()
		got := m.EchoOne(t, "reply", func() { _ = pub.Send("はい") })
		if !strings.Contains(got, `data: "\u306F\u3044"`) {
			t.Errorf("%s: rostopic echo printed:\n%s", when, got)
		}
		stop := m.Publish(t, "chatter", "std_msgs/String", "data: もしもし")
		defer stop()
		select {
		case ev := <-s:
			if ev.Text != "もしもし" {
				t.Errorf("%s: got %q", when, ev.Text)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: nothing arrived within 30 s; rostopic pub said:\n%s", when, stop())
		}
	}
	check("before the restart")
	m.Restart()
	check("after the restart")
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
		{map[string]string{"master": "127.0.0.1:11311", "datatype": "sensor_msgs/Joi"}, false, `message type "sensor_msgs/Joi" not found; searched ../../testdata/ros/sensor_msgs/msg/Joi.msg, /usr/share/sensor_msgs/msg/Joi.msg; did you mean sensor_msgs/Joy?`},
	} {
		if _, err := NewTopic(adaptors.Config{Name: "x", Attrs: c.attrs}, c.pub); err == nil || err.Error() != c.want {
			t.Errorf("%v:\n got %v\nwant %s", c.attrs, err, c.want)
		}
	}
}

// TestOversizedMessageSkipped (issue 32 #12): a message over the 16 MiB
// limit (50 MB from rospy) is skipped without being read into memory,
// counted (line_too_long, seat ctl status's TOO LONG) and logged once per
// publisher, and the connection goes on: every message after it arrives,
// in order. goroslib closed the connection and made it again 5 s later,
// silently: the messages of those 5 s were lost.
func TestOversizedMessageSkipped(t *testing.T) {
	m := rostest.Start(t)
	ad, s, logs := openLogged(t, m, "listener", "/big", false, zapcore.WarnLevel)
	m.Peer(t, "publish_big", "/big", "50000000") // twice, before small 0 and after small 4
	deadline := time.After(30 * time.Second)
	for n := 0; n < 10; n++ {
		select {
		case ev := <-s:
			if want := fmt.Sprintf("small %d", n); ev.Text != want {
				t.Fatalf("got %.40q, want %q (the messages after the big one were lost)", ev.Text, want)
			}
		case <-deadline:
			t.Fatalf("small %d did not arrive within 30 s", n)
		}
	}
	if n := ad.(adaptors.StatsReporter).Stats().LineTooLong; n != 2 {
		t.Errorf("line_too_long %d, want 2", n)
	}
	if l := logs.FilterMessageSnippet("over the limit").All(); len(l) != 1 || !strings.HasPrefix(fmt.Sprint(l[0].ContextMap()["publisher"]), "/peer_publish_big_") {
		t.Errorf("logged %v, want one line naming the publisher", logs.All())
	}
}

// TestWrongTypePublisherCounted: a publisher of another message type on a
// subscriber's topic is refused (rospy and goroslib refuse the
// connection), logged once and counted as wrong_type; a publisher of the
// right type on the same topic still gets through.
func TestWrongTypePublisherCounted(t *testing.T) {
	t.Cleanup(func(d time.Duration) func() { return func() { checkEvery = d } }(checkEvery))
	checkEvery = 100 * time.Millisecond
	m := rostest.Start(t)
	ad, s, logs := openLogged(t, m, "listener", "/chatter", false, zapcore.WarnLevel)
	m.Publish(t, "chatter", "std_msgs/Int32", "data: 5")
	deadline := time.Now().Add(30 * time.Second)
	for ad.(adaptors.StatsReporter).Stats().WrongType == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the Int32 publisher was not counted within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	m.Publish(t, "chatter", "std_msgs/String", "data: 正しい型")
	select {
	case ev := <-s:
		if ev.Text != "正しい型" {
			t.Errorf("got %q", ev.Text)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the String publisher's message did not arrive within 30 s")
	}
	if n := ad.(adaptors.StatsReporter).Stats().WrongType; n != 1 {
		t.Errorf("wrong_type %d, want 1 (each publisher once)", n)
	}
	if l := logs.FilterMessage("ROS publisher refused: it publishes another message type on the topic").All(); len(l) != 1 || l[0].ContextMap()["type"] != "std_msgs/Int32" {
		t.Errorf("logged %v", logs.All())
	}
}

// TestPublisherLeavingIsNoWarning: a publisher that is done (rostopic
// pub -1 exits) closes its connection; goroslib reports an EOF, which is
// no fault: seat logs it at debug level, not as a warning.
func TestPublisherLeavingIsNoWarning(t *testing.T) {
	m := rostest.Start(t)
	_, s, logs := openLogged(t, m, "listener", "/chatter", false, zapcore.DebugLevel)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := m.Command(ctx, "rostopic", "pub", "-1", "/chatter", "std_msgs/String", "data: 一度だけ").CombinedOutput(); err != nil {
		t.Fatalf("rostopic pub -1: %v\n%s", err, out)
	}
	select {
	case ev := <-s:
		if ev.Text != "一度だけ" {
			t.Errorf("got %q", ev.Text)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the message did not arrive within 30 s")
	}
	eof := func() []observer.LoggedEntry {
		return logs.Filter(func(e observer.LoggedEntry) bool { return strings.HasSuffix(e.Message, ": EOF") }).All()
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(eof()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no EOF logged within 30 s after the publisher left: %v", logs.All())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, e := range eof() {
		if e.Level != zapcore.DebugLevel {
			t.Errorf("logged at %v: %s", e.Level, e.Message)
		}
	}
}

// TestNodeNameTaken: a second node registering the behavior's node name
// makes the master shut seat's node down; seat says so instead of
// publishing into nothing unawares.
func TestNodeNameTaken(t *testing.T) {
	t.Cleanup(func(d time.Duration) func() { return func() { checkEvery = d } }(checkEvery))
	checkEvery = 100 * time.Millisecond
	m := rostest.Start(t)
	ad, _, logs := openLogged(t, m, "twice", "/say", true, zapcore.ErrorLevel)
	nd := ad.(*topic).node
	for deadline := time.Now().Add(10 * time.Second); ; { // until the watch has noted its own address
		nd.mu.Lock()
		noted := nd.uri != ""
		nd.mu.Unlock()
		if noted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the node's address was not noted within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	other, err := goroslib.NewNode(goroslib.NodeConf{Name: "twice", MasterAddress: m.Addr, Host: "127.0.0.1",
		LogDestinations: goroslib.LogDestinationCallback, OnLog: func(goroslib.LogLevel, string) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	deadline := time.Now().Add(10 * time.Second)
	for logs.FilterMessageSnippet("another ROS node took this node's name").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing logged within 10 s: %v", logs.All())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSubReadsItsOwnNode: a behavior's ros_sub reads what its own
// ros_pub publishes on the topic: one node, connected to itself.
func TestSubReadsItsOwnNode(t *testing.T) {
	m := rostest.Start(t)
	pub, _ := open(t, m, "/self", true, nil)
	_, s := open(t, m, "/self", false, nil)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("nothing arrived within 30 s")
		}
		if err := pub.Send("自分宛て"); err != nil { // until the subscriber has connected
			t.Fatal(err)
		}
		select {
		case ev := <-s:
			if ev.Text != "自分宛て" {
				t.Errorf("got %q", ev.Text)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// BenchmarkSubscriberMessage: std_msgs/String messages from a goroslib
// publisher in this process to a ros_sub, 16 in flight, each delivered
// in order (the per-message path of a ros_sub, with the publisher's).
// SEAT_BENCH_MASTER=127.0.0.1:PORT uses a master already running instead
// of starting one: callgrind aborts on the signals of a child process.
func BenchmarkSubscriberMessage(b *testing.B) {
	addr := os.Getenv("SEAT_BENCH_MASTER")
	if addr == "" {
		addr = rostest.Start(b).Addr
	}
	ad, err := NewTopic(adaptors.Config{Behavior: "bench", Name: "/bench", Attrs: map[string]string{"master": "http://" + addr}}, false)
	if err != nil {
		b.Fatal(err)
	}
	s := make(sink, 64)
	if err := ad.Open(context.Background(), s); err != nil {
		b.Fatal(err)
	}
	defer ad.Close()
	n, err := goroslib.NewNode(goroslib.NodeConf{Name: "bench_pub", MasterAddress: addr, Host: "127.0.0.1",
		LogDestinations: goroslib.LogDestinationCallback, OnLog: func(goroslib.LogLevel, string) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: n, Topic: "/bench", Msg: &std_msgs.String{}})
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	for deadline := time.Now().Add(30 * time.Second); ; { // until connected
		pub.Write(&std_msgs.String{Data: "warm up"})
		select {
		case <-s:
		case <-time.After(100 * time.Millisecond):
			if time.Now().After(deadline) {
				b.Fatal("not connected within 30 s")
			}
			continue
		}
		break
	}
	time.Sleep(200 * time.Millisecond)
	for len(s) > 0 {
		<-s
	}
	b.ResetTimer()
	sent := 0
	for got := 0; got < b.N; got++ {
		for ; sent < b.N && sent-got < 16; sent++ {
			pub.Write(&std_msgs.String{Data: "メッセージ " + strconv.Itoa(sent)})
		}
		select {
		case ev := <-s:
			if want := "メッセージ " + strconv.Itoa(got); ev.Text != want {
				b.Fatalf("got %q, want %q", ev.Text, want)
			}
		case <-time.After(10 * time.Second):
			b.Fatalf("message %d did not arrive within 10 s", got)
		}
	}
}

// TestRegistrationsLoggedAtInfo: each ROS adaptor says at info level that
// it is on the graph, with its topic, service or action and its type;
// before, a behavior's log showed nothing of them at info.
func TestRegistrationsLoggedAtInfo(t *testing.T) {
	m := rostest.Start(t)
	core, logs := observer.New(zapcore.InfoLevel)
	log := zap.New(core)
	for _, c := range []struct {
		factory adaptors.Factory
		name    string
		attrs   map[string]string
	}{
		{func(cfg adaptors.Config) (adaptors.Adaptor, error) { return NewTopic(cfg, true) }, "/speech", nil},
		{func(cfg adaptors.Config) (adaptors.Adaptor, error) { return NewTopic(cfg, false) }, "/joy", map[string]string{"datatype": "sensor_msgs/Joy"}},
		{NewServer, "/set_led", map[string]string{"service_type": "std_srvs.SetBool"}},
		{NewClient, "add_two_ints", map[string]string{"service_type": "rospy_tutorials/AddTwoInts"}},
		{NewActionServer, "fibonacci", map[string]string{"action_type": "actionlib_tutorials.Fibonacci"}},
		{NewActionClient, "/fib", map[string]string{"action_type": "actionlib_tutorials/Fibonacci"}},
	} {
		attrs := map[string]string{"master": m.URI}
		for k, v := range c.attrs {
			attrs[k] = v
		}
		openConfig(t, c.factory, adaptors.Config{Behavior: "受付", Name: c.name, Log: log, Attrs: attrs})
	}
	var got []string
	for _, e := range logs.All() {
		f := e.ContextMap()
		got = append(got, fmt.Sprintf("%s %s: %v %v %v %v", e.Level, e.Message, f["topic"], f["service"], f["action"], f["type"]))
	}
	want := []string{
		"info ROS publisher registered: /speech <nil> <nil> std_msgs/String",
		"info ROS subscriber registered: /joy <nil> <nil> sensor_msgs/Joy",
		"info ROS service server registered: <nil> /set_led <nil> std_srvs/SetBool",
		"info ROS service client registered: <nil> add_two_ints <nil> rospy_tutorials/AddTwoInts",
		"info ROS action server registered: <nil> <nil> fibonacci actionlib_tutorials/Fibonacci",
		"info ROS action client registered: <nil> <nil> /fib actionlib_tutorials/Fibonacci",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("info lines (-want +got):\n%s", diff)
	}
}
