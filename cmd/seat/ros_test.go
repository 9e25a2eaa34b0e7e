package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/ros/rostest"
)

// TestROSTopicsOnTheRealBinary: seat run with eSEAT's topic adaptors
// (named after their topics) against Debian's rosmaster: rostopic pub's
// Japanese line on /chatter fires a keyed rule whose reply reaches
// rostopic echo on /reply, and another rule publishes a Twist from
// eSEAT's list text on /cmd_vel. A publisher of another type on /chatter
// is refused and shows in seat ctl status.
func TestROSTopicsOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	control := freePort(t)
	_, log := runROS(t, `<seatml><general name="listener">
  <adaptor name="/chatter" type="ros_sub" datatype="std_msgs/String"/>
  <adaptor name="/reply" type="ros_pub" datatype="std_msgs/String"/>
  <adaptor name="/cmd_vel" type="ros_pub" datatype="geometry_msgs/Twist"/>
</general>
<state name="待機">
  <rule source="/chatter"><key>こんにちは</key><message sendto="/reply">ようこそ</message></rule>
  <rule source="/chatter"><key>進め</key><message sendto="/cmd_vel">[[2.0,0,0],[0,0,1.8]]</message></rule>
</state></seatml>`, "待機", "--control", control)

	// Each adaptor says at info that it is on the graph, with its type.
	for _, want := range []string{
		`INFO	ROS subscriber registered	{"behavior": "listener", "adaptor": "/chatter", "topic": "/chatter", "type": "std_msgs/String", "node": "/listener"}`,
		`INFO	ROS publisher registered	{"behavior": "listener", "adaptor": "/reply", "topic": "/reply", "type": "std_msgs/String", "node": "/listener"}`,
		`INFO	ROS publisher registered	{"behavior": "listener", "adaptor": "/cmd_vel", "topic": "/cmd_vel", "type": "geometry_msgs/Twist", "node": "/listener"}`,
	} {
		if strings.Count(log.String(), want) != 1 {
			t.Errorf("seat did not log once\n%s", want)
		}
	}

	// A publisher of another type on /chatter is refused and counted; the
	// conversation goes on.
	m.Publish(t, "chatter", "std_msgs/Int32", "data: 5")
	waitForWithin(t, 30*time.Second, func() bool {
		out, _, _ := ctlAt(control, "status", "listener")
		return strings.Contains(out, "wrong_type=1")
	})
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

// TestROSMessagesOnTheRealBinary: eSEAT's js4turtlesim in Lua on the real
// binary: a sensor_msgs/Joy from rostopic pub reaches a key-less rule as
// rtc_in_data, which publishes a Twist and a JointState with
// seat.publish (checked by rostopic echo); a value that does not fit its
// field is a logged error naming the field, and the behavior goes on.
func TestROSMessagesOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	_, log := runROS(t, `<seatml><general name="Joy2TurtleSim">
  <adaptor name="/turtle1/cmd_vel" type="ros_pub" datatype="geometry_msgs/Twist" size="1"/>
  <adaptor name="/joy" type="ros_sub" datatype="sensor_msgs/Joy"/>
  <adaptor name="/joint_states" type="ros_pub" datatype="sensor_msgs/JointState"/>
  <adaptor name="/chatter" type="ros_sub"/>
</general>
<state name="main_mode">
  <rule source="/joy"><script>
    local lv, rv = rtc_in_data.axes[2], rtc_in_data.axes[1]
    seat.publish("/turtle1/cmd_vel", {{lv, 0, 0}, {0, 0, rv}})
    if event.data.buttons[1] == 1 then
      seat.publish("/joint_states", {header = {frame_id = "腕"}, name = {"joint2", "joint3"}, position = {-0.25, 0.5}})
    end
  </script></rule>
  <rule source="/chatter"><key>壊れ</key><script>seat.publish("/joint_states", {position = "高い"})</script></rule>
</state></seatml>`, "main_mode")

	m.Publish(t, "joy", "sensor_msgs/Joy", "{axes: [-0.5, 1.5], buttons: [1, 0]}")
	got := m.EchoOne(t, "turtle1/cmd_vel", func() {})
	if want := "linear: \n  x: 1.5\n  y: 0.0\n  z: 0.0\nangular: \n  x: 0.0\n  y: 0.0\n  z: -0.5"; !strings.Contains(got, want) {
		t.Errorf("rostopic echo /turtle1/cmd_vel printed:\n%s\nwithout\n%s; seat logged:\n%s", got, want, log.String())
	}
	got = m.EchoOne(t, "joint_states", func() {})
	for _, want := range []string{`frame_id: "\u8155"`, "name: \n  - joint2\n  - joint3\n", `position: [-0.25, 0.5]`} {
		if !strings.Contains(got, want) {
			t.Errorf("rostopic echo /joint_states printed:\n%s\nwithout %s; seat logged:\n%s", got, want, log.String())
		}
	}
	m.Publish(t, "chatter", "std_msgs/String", "data: 壊れ")
	waitFor(t, func() bool {
		return strings.Contains(log.String(), `seat.publish(\"/joint_states\"): sensor_msgs/JointState position: \"高い\" is not a list`)
	})
}

// TestROSMasterRestartOnTheRealBinary: the master is restarted mid-run;
// seat registers again and the conversation goes on where it was (its
// count of greetings is kept), one node for the behavior all along.
func TestROSMasterRestartOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	_, log := runROS(t, `<seatml><general name="受付">
  <adaptor name="/chatter" type="ros_sub"/>
  <adaptor name="/reply" type="ros_pub"/>
  <script>count = 0</script>
</general>
<state name="待機">
  <rule source="/chatter"><key>こんにちは</key><script>
    count = count + 1
    seat.send("/reply", count .. "回目のこんにちは")
  </script><statetransition>会話</statetransition></rule>
</state>
<state name="会話">
  <rule source="/chatter"><key>こんにちは</key><script>
    count = count + 1
    seat.send("/reply", "また会いましたね: " .. count .. "回目")
  </script></rule>
</state></seatml>`, "待機")
	greet := func() string {
		stop := m.Publish(t, "chatter", "std_msgs/String", "data: こんにちは")
		defer stop()
		return m.EchoOne(t, "reply", func() {})
	}
	if got := greet(); !strings.Contains(got, `\u56DE\u76EE`) { // 回目
		t.Fatalf("before the restart, rostopic echo printed:\n%s\nseat logged:\n%s", got, log.String())
	}
	m.Restart()
	waitForWithin(t, 20*time.Second, func() bool { return strings.Contains(log.String(), "registering again") })
	got := greet()
	if !strings.Contains(got, `\u307E\u305F\u4F1A\u3044`) { // また会い: the state and its count are kept
		t.Errorf("after the restart, rostopic echo printed:\n%s\nseat logged:\n%s", got, log.String())
	}
	// The behavior's one node, 受付 written in the characters ROS allows.
	out, err := m.Command(context.Background(), "rosnode", "list").CombinedOutput()
	if err != nil || strings.Count(string(out), "/seat_f1828b55\n") != 1 {
		t.Errorf("rosnode list: %v\n%s", err, out)
	}
}

// TestROSServicesOnTheRealBinary: eSEAT's add_two_ints_server3 in Lua is
// called by a rospy client (the tutorial's AddTwoInts), a SetBool served
// with seat.reply is called by rosservice, and seat.call calls a rospy
// AddTwoInts server from a rule fired by Japanese text, its sum published
// for rostopic echo. The run's recording then replays without ROS.
func TestROSServicesOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	m.Peer(t, "serve_add_two_ints", "/rospy_add")
	rec := filepath.Join(t.TempDir(), "services.jsonl")
	cmd, log := runROS(t, `<seatml><general name="RosService">
  <adaptor name="add_two_ints" type="ros_server" service_type="rospy_tutorials.AddTwoInts"/>
  <adaptor name="/set_led" type="ros_server" service_type="std_srvs/SetBool"/>
  <adaptor name="rospy_add" type="ros_client" service_type="rospy_tutorials/AddTwoInts"/>
  <adaptor name="/gone" type="ros_client" service_type="std_srvs/Empty"/>
  <adaptor name="/ask" type="ros_sub"/>
  <adaptor name="/answer" type="ros_pub"/>
  <adaptor name="/error" type="ros_pub"/>
</general>
<state name="main_mode">
  <rule source="add_two_ints"><key>ros_service</key><script>
    return rtc_in_data.a + rtc_in_data.b
  </script></rule>
  <rule source="/set_led"><key>ros_service</key><script>
    seat.reply({success = true, message = event.data.data and "点けました" or "消しました"})
  </script></rule>
  <rule source="/ask"><key>(\d+)たす(\d+)</key><script>
    local res, err = seat.call("rospy_add", tonumber(event.captures[1]), tonumber(event.captures[2]))
    seat.send("/answer", res and ("答えは" .. res.sum) or err)
  </script></rule>
  <rule source="/ask"><key>消えた</key><script>
    local res, err = seat.call("/gone", {}, 0.3)
    seat.send("/error", err or "答えがあった")
  </script></rule>
</state></seatml>`, "main_mode", "--record", rec)

	if out := m.Peer(t, "call_add_two_ints", "/add_two_ints", "40", "2")(); !strings.Contains(out, "sum 42") {
		t.Errorf("rospy's AddTwoInts client printed:\n%s\nseat logged:\n%s", out, log.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := m.Command(ctx, "rosservice", "call", "/set_led", "data: true").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `message: "\u70B9\u3051\u307E\u3057\u305F"`) { // 点けました
		t.Errorf("rosservice call: %v\n%s\nseat logged:\n%s", err, out, log.String())
	}
	m.Publish(t, "ask", "std_msgs/String", "data: 40たす2")
	got := m.EchoOne(t, "answer", func() {})
	if want := `data: "\u7B54\u3048\u306F42"`; !strings.Contains(got, want) { // 答えは42
		t.Errorf("rostopic echo /answer printed:\n%s\nwithout %s; seat logged:\n%s", got, want, log.String())
	}
	// A call to a service nobody serves fails within its time limit.
	m.Publish(t, "ask", "std_msgs/String", "data: 消えた")
	if got := m.EchoOne(t, "error", func() {}); !strings.Contains(got, `seat.call(\"/gone\")`) {
		t.Errorf("rostopic echo /error printed:\n%s", got)
	}
	// The recording replays with no ROS at all: the requests come back
	// from it, and so do rospy's answer to seat.call and the failed call.
	data := stopAndReplay(t, cmd, rec)
	for _, want := range []string{`"kind":"answer","behavior":"RosService","source":"rospy_add","text":"{\"sum\":42}"}`,
		`"kind":"answer","behavior":"RosService","source":"/gone","text":"`} {
		if !strings.Contains(data, want) {
			t.Errorf("the recording has no %s:\n%s", want, data)
		}
	}
	if !strings.Contains(data, `"key":"error"`) {
		t.Errorf("the failed call is not recorded as one:\n%s", data)
	}
}

// TestROSActionsOnTheRealBinary: the Fibonacci action of actionlib's
// tutorial, served by seat a step per onexec tick with feedback, and
// called by rospy's simple client; then seat's client calls a rospy
// server, fired by Japanese text, sends the next goal from the result's
// own rule (goroslib calls back holding its locks: this once hung), and
// reports both results and how much feedback came on a topic for rostopic
// echo.
func TestROSActionsOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	m.Peer(t, "serve_fibonacci", "/rospy_fibonacci")
	_, log := runROS(t, `<seatml><general name="Fibonacci" rate="20">
  <adaptor name="fibonacci" type="ros_action_server" action_type="actionlib_tutorials.Fibonacci"/>
  <adaptor name="fib" type="ros_action_client" action_type="actionlib_tutorials/Fibonacci" action_id="/rospy_fibonacci"/>
  <adaptor name="/ask" type="ros_sub"/>
  <adaptor name="/answer" type="ros_pub"/>
  <rule source="/ask"><key>フィボナッチ(\d+)</key><script>
    if asked then return end -- rostopic pub repeats it
    asked, got = true, 0
    seat.publish("fib", {order = tonumber(event.captures[1])})
  </script></rule>
  <rule source="fib"><key>ros_action_feedback</key><script>got = got + 1</script></rule>
  <rule source="fib"><key>ros_action_result</key><script>
    if not chained then -- the next goal, sent from the result's own rule
      chained, first = true, table.concat(rtc_in_data.result.sequence, ",")
      seat.publish("fib", {order = 3})
      return
    end
    answer = rtc_in_data.status .. " " .. first .. " " .. table.concat(rtc_in_data.result.sequence, ",") .. " 途中" .. got .. "回"
  </script></rule>
</general>
<state name="待機">
  <onexec><script>if answer then seat.send("/answer", answer) end -- until rostopic echo has it</script></onexec>
  <rule source="fibonacci"><key>ros_action</key><script>order, seq = rtc_in_data.order, {0, 1}</script>
    <statetransition>計算</statetransition></rule>
</state>
<state name="計算">
  <onexec><script>
    if #seq > order then
      seat.result("fibonacci", {sequence = seq})
      seat.transition("待機")
      return
    end
    seq[#seq + 1] = seq[#seq] + seq[#seq - 1]
    seat.publish("fibonacci", {sequence = seq})
  </script></onexec>
</state></seatml>`, "待機")

	out := m.Peer(t, "call_fibonacci", "/fibonacci", "5")()
	for _, want := range []string{"feedback [0, 1, 1, 2, 3, 5]\n", "state 3 result [0, 1, 1, 2, 3, 5]\n"} { // 3: SUCCEEDED (feedback sent before the client's feedback subscriber is connected is lost, as with rospy's servers: the first is not required)
		if !strings.Contains(out, want) {
			t.Errorf("the rospy client printed:\n%s\nwithout %q; seat logged:\n%s", out, want, log.String())
		}
	}
	m.Publish(t, "ask", "std_msgs/String", "data: フィボナッチ6")
	got := m.EchoOne(t, "answer", func() {})
	if want := `data: "succeeded 0,1,1,2,3,5,8 0,1,1,2 \u9014\u4E2D7\u56DE"`; !strings.Contains(got, want) { // 途中7回: 5 and 2
		t.Errorf("rostopic echo /answer printed:\n%s\nwithout %s; seat logged:\n%s", got, want, log.String())
	}
}

// TestROSActionRecordingReplays: an action server's feedback and its
// seat.result, for a rospy client's goal, are in the recording as
// messages, and the recording replays without ROS.
func TestROSActionRecordingReplays(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	rec := filepath.Join(t.TempDir(), "fibonacci.jsonl")
	cmd, _ := runROS(t, `<seatml><general name="即答">
  <adaptor name="fibonacci" type="ros_action_server" action_type="actionlib_tutorials/Fibonacci"/>
</general>
<state name="待機">
  <rule source="fibonacci"><key>ros_action</key><script>
    local seq = {0, 1}
    for i = 3, rtc_in_data.order + 1 do seq[i] = seq[i - 1] + seq[i - 2] end
    seat.publish("fibonacci", {sequence = {0}})
    seat.result("fibonacci", {sequence = seq}, rtc_in_data.order > 5 and "aborted" or "succeeded")
  </script></rule>
</state></seatml>`, "待機", "--record", rec)
	if out := m.Peer(t, "call_fibonacci", "/fibonacci", "4")(); !strings.Contains(out, "state 3 result [0, 1, 1, 2, 3]\n") {
		t.Errorf("the rospy client printed:\n%s", out)
	}
	if data := stopAndReplay(t, cmd, rec); !strings.Contains(data, `"kind":"out","behavior":"即答","source":"fibonacci","text":"{\"sequence\":[0,1,1,2,3]}"`) {
		t.Errorf("the result is not in the recording:\n%s", data)
	}
}

// TestROSActionCancelOnTheRealBinary: Japanese text on a topic sends a
// long goal to a rospy action server, and 止まれ cancels it with
// seat.cancel: the result is preempted, published for rostopic echo.
func TestROSActionCancelOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	m.Peer(t, "serve_fibonacci", "/rospy_fibonacci")
	_, log := runROS(t, `<seatml><general name="移動">
  <adaptor name="fib" type="ros_action_client" action_type="actionlib_tutorials/Fibonacci" action_id="/rospy_fibonacci"/>
  <adaptor name="/ask" type="ros_sub"/>
  <adaptor name="/answer" type="ros_pub"/>
</general>
<state name="待機">
  <rule source="/ask"><key>行け</key><script>
    if not sent then sent = true; seat.publish("fib", {order = 400}) end -- rostopic pub repeats it
  </script></rule>
  <rule source="/ask"><key>止まれ</key><script>
    if seat.cancel("fib") then seat.log("info", "止めます") end
  </script></rule>
  <rule source="fib"><key>ros_action_feedback</key><script>
    if not moving then moving = true; seat.log("info", "動いています") end
  </script></rule>
  <rule source="fib"><key>ros_action_result</key><script>answer = rtc_in_data.status</script></rule>
  <onexec><script>if answer then seat.send("/answer", answer) end -- until rostopic echo has it</script></onexec>
</state></seatml>`, "待機")
	stop := m.Publish(t, "ask", "std_msgs/String", "data: 行け")
	waitForWithin(t, 30*time.Second, func() bool { return strings.Contains(log.String(), "動いています") })
	stop()
	m.Publish(t, "ask", "std_msgs/String", "data: 止まれ")
	if got, want := m.EchoOne(t, "answer", func() {}), `data: "preempted"`; !strings.Contains(got, want) {
		t.Errorf("rostopic echo /answer printed:\n%s\nwithout %s", got, want)
	}
	if !strings.Contains(log.String(), "止めます") {
		t.Error("seat.cancel reported no goal in progress")
	}
}

// TestROSTurtleExample: examples/ros/turtle.seatml as the README runs it:
// a Joy from rostopic pub drives the Twist rostopic echo sees, the
// brake, set with rosservice call, keeps it still, and button 2 calls a
// rospy /reset service.
func TestROSTurtleExample(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	_, log := startSeat(t, "run", "../../examples/ros/turtle.seatml")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), `"to": "運転"`) })
	stop := m.Publish(t, "joy", "sensor_msgs/Joy", "{axes: [0.5, 1.0], buttons: [0]}")
	if got, want := m.EchoOne(t, "turtle1/cmd_vel", func() {}), "linear: \n  x: 1.0\n  y: 0.0\n  z: 0.0\nangular: \n  x: 0.0\n  y: 0.0\n  z: 0.5"; !strings.Contains(got, want) {
		t.Errorf("rostopic echo printed:\n%s\nwithout\n%s", got, want)
	}
	stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := m.Command(ctx, "rosservice", "call", "/brake", "data: true").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "success: True") {
		t.Fatalf("rosservice call /brake: %v\n%s", err, out)
	}
	stop = m.Publish(t, "joy", "sensor_msgs/Joy", "{axes: [0.5, 1.0], buttons: [0]}")
	if got, want := m.EchoOne(t, "turtle1/cmd_vel", func() {}), "linear: \n  x: 0.0"; !strings.Contains(got, want) {
		t.Errorf("with the brake on, rostopic echo printed:\n%s\nwithout\n%s", got, want)
	}
	stop()
	// Button 2 calls /reset (std_srvs/Empty, here a rospy service that
	// answers one call and ends).
	reset := m.Peer(t, "serve_empty", "/reset")
	m.Publish(t, "joy", "sensor_msgs/Joy", "{axes: [0.5, 1.0], buttons: [0, 1]}")
	if out := reset(); !strings.Contains(out, "called") {
		t.Errorf("/reset was not called: %s", out)
	}
}

// TestROSReloadKeepsAdaptors: seat ctl reload hands the open ROS adaptors
// to the new version (the same declarations): the one node keeps its
// registrations, and the new version's rules answer.
func TestROSReloadKeepsAdaptors(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	f := filepath.Join(t.TempDir(), "reload.seatml")
	write := func(answer string) {
		if err := os.WriteFile(f, []byte(`<seatml><general name="受付">
  <adaptor name="/chatter" type="ros_sub"/>
  <adaptor name="/reply" type="ros_pub"/>
</general>
<state name="待機"><rule source="/chatter"><key>こんにちは</key><message sendto="/reply">`+answer+`</message></rule></state></seatml>`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ようこそ")
	control := freePort(t)
	_, log := startSeat(t, "run", "--control", control, f)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), `"to": "待機"`) })
	m.Publish(t, "chatter", "std_msgs/String", "data: こんにちは")
	if got := m.EchoOne(t, "reply", func() {}); !strings.Contains(got, `\u3088\u3046\u3053\u305D`) { // ようこそ
		t.Fatalf("before the reload, rostopic echo printed:\n%s", got)
	}
	write("いらっしゃいませ")
	if out, errOut, code := ctlAt(control, "reload", "受付"); code != 0 {
		t.Fatalf("seat ctl reload: exit %d\n%s%s", code, out, errOut)
	}
	if got := m.EchoOne(t, "reply", func() {}); !strings.Contains(got, `\u3044\u3089\u3063\u3057\u3083\u3044\u307E\u305B`) { // いらっしゃいませ
		t.Errorf("after the reload, rostopic echo printed:\n%s", got)
	}
	if strings.Contains(log.String(), "registration failed") || strings.Contains(log.String(), "not reachable") {
		t.Errorf("the reload registered twice")
	}
}

// runROS runs a behavior, written to a file, with seat run (args before
// the file) against the test's ROS master (ROS_MASTER_URI), and returns
// once it is in state; seat's log is shown when the test fails.
func runROS(t *testing.T, behavior, state string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "behavior.seatml")
	if err := os.WriteFile(f, []byte(behavior), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, log := startSeat(t, append(append([]string{"run"}, args...), f)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), `"to": "`+state+`"`) })
	return cmd, log
}

// stopAndReplay stops seat, which completes its recording, and checks
// that seat replay matches it without ROS; it returns the recording.
func stopAndReplay(t *testing.T, cmd *exec.Cmd, rec string) string {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if stdout, errOut, code := runSeat("replay", rec); code != 0 || !strings.Contains(stdout, "messages match") {
		t.Errorf("seat replay: exit %d\n%s%s\nthe recording:\n%s", code, stdout, errOut, data)
	}
	return string(data)
}

// fibonacciBehavior is docs/ros.md's Fibonacci server, a step per onexec
// tick, at 10 Hz (45 steps take 4.5 s: time for a second client to start
// on a loaded machine); extra is more rules for its 計算 state.
func fibonacciBehavior(extra string) string {
	return `<seatml><general name="Fibonacci" rate="10">
  <adaptor name="fibonacci" type="ros_action_server" action_type="actionlib_tutorials/Fibonacci"/>
</general>
<state name="待機">
  <rule source="fibonacci"><key>ros_action</key><script>
    order, seq = rtc_in_data.order, {0, 1}
    seat.log("info", "計算します " .. order)
  </script><statetransition>計算</statetransition></rule>
</state>
<state name="計算">` + extra + `
  <onexec><script>
    if #seq > order then
      seat.result("fibonacci", {sequence = seq})
      seat.transition("待機")
      return
    end
    seq[#seq + 1] = seq[#seq] + seq[#seq - 1]
    seat.publish("fibonacci", {sequence = seq})
  </script></onexec>
</state></seatml>`
}

// TestROSPreemptedGoalOnTheRealBinary (issue 32 #11): client B's goal
// arrives while the documented Fibonacci behavior computes client A's
// 46 numbers, in a state with no rule for a goal. A's result must not
// end B's goal: A is preempted, B is rejected (no rule took it), and the
// behavior, whose seat.result finds its goal preempted, goes back to 待機
// and serves the next goal.
func TestROSPreemptedGoalOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	_, log := runROS(t, fibonacciBehavior(""), "待機")
	a := m.Peer(t, "call_fibonacci", "/fibonacci", "45")
	waitForWithin(t, 30*time.Second, func() bool { return strings.Contains(log.String(), "計算します 45") })
	b := m.Peer(t, "call_fibonacci", "/fibonacci", "3")
	outA, outB := a(), b()
	if !strings.Contains(outA, "state 2 ") { // PREEMPTED
		t.Errorf("client A printed:\n%s", outA)
	}
	if !strings.Contains(outB, "state 5 result []\n") { // REJECTED
		t.Errorf("client B printed:\n%s", outB)
	}
	waitForWithin(t, 30*time.Second, func() bool { return strings.Count(log.String(), `"to": "待機"`) >= 2 })
	for _, want := range []string{"action goal rejected", "result not sent", "was preempted by goal /peer_call_fibonacci_"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("seat did not log %q", want)
		}
	}
	if out := m.Peer(t, "call_fibonacci", "/fibonacci", "5")(); !strings.Contains(out, "state 3 result [0, 1, 1, 2, 3, 5]\n") {
		t.Errorf("the next goal: client C printed:\n%s", out)
	}
}

// TestROSPreemptionHandledOnTheRealBinary: a behavior that handles the
// preemption: its rule on ros_action_preempted answers A's goal with the
// numbers so far (PREEMPTED for A) and goes back to 待機, where B's goal
// is taken and answered with B's own numbers.
func TestROSPreemptionHandledOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	_, log := runROS(t, fibonacciBehavior(`
  <rule source="fibonacci"><key>ros_action_preempted</key><script>
    seat.log("info", "中断 " .. event.peer .. " " .. rtc_in_data.by)
    return {sequence = seq}
  </script><statetransition>待機</statetransition></rule>`), "待機")
	a := m.Peer(t, "call_fibonacci", "/fibonacci", "45")
	waitForWithin(t, 30*time.Second, func() bool { return strings.Contains(log.String(), "計算します 45") })
	b := m.Peer(t, "call_fibonacci", "/fibonacci", "3")
	outA, outB := a(), b()
	// PREEMPTED, with the numbers so far: at least one step's (B may
	// arrive after only one tick on a quick machine).
	if !strings.Contains(outA, "state 2 result [0, 1, 1") {
		t.Errorf("client A printed:\n%s", outA)
	}
	if !strings.Contains(outB, "state 3 result [0, 1, 1, 2]\n") {
		t.Errorf("client B printed:\n%s", outB)
	}
	if !strings.Contains(log.String(), "中断 /peer_call_fibonacci_") {
		t.Errorf("the preemption named no goal")
	}
}

// TestROSOversizedMessageOnTheRealBinary (issue 32 #12): a 50 MB String
// on a ros_sub's topic is skipped, logged once for its publisher and
// counted in seat ctl status's TOO LONG column, and every message the
// publisher sends after it reaches the behavior's rule: before, goroslib
// closed the connection silently and the next 5 s of messages were lost.
func TestROSOversizedMessageOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	control := freePort(t)
	_, log := runROS(t, `<seatml><general name="受信係">
  <adaptor name="/big" type="ros_sub"/>
</general>
<state name="待機">
  <rule source="/big"><key>small (\d+)</key><script>seat.log("info", "受信 " .. event.captures[1])</script></rule>
</state></seatml>`, "待機", "--control", control)
	m.Peer(t, "publish_big", "/big", "50000000") // twice, before small 0 and after small 4
	waitForWithin(t, 30*time.Second, func() bool { return strings.Contains(log.String(), "受信 9\t") })
	for n := range 10 {
		if !strings.Contains(log.String(), fmt.Sprintf("受信 %d\t", n)) {
			t.Errorf("small %d was lost", n)
		}
	}
	if c := strings.Count(log.String(), "over the limit"); c != 1 {
		t.Errorf("logged %d times, want once for the publisher", c)
	}
	out, errOut, code := ctlAt(control, "status", "受信係")
	var row []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 6 && f[0] == "/big" {
			row = f
		}
	}
	if code != 0 || row == nil || row[6] != "2" { // ADAPTOR TYPE ADDRESS OPEN ACCEPTED REFUSED TOO-LONG
		t.Errorf("seat ctl status: exit %d, TOO LONG of /big not 2:\n%s%s", code, out, errOut)
	}
}

// TestROSActionReloadOnTheRealBinary: seat ctl reload hands an open
// ros_action_server and ros_server to the new version, whose rules
// answer the next goal and request. Before, the adaptors stopped at the
// reload: they delivered until the context they were opened with ended,
// with the old version (the goal waited for ever).
func TestROSActionReloadOnTheRealBinary(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	f := filepath.Join(t.TempDir(), "reload.seatml")
	write := func(n string) {
		if err := os.WriteFile(f, []byte(`<seatml><general name="即答">
  <adaptor name="fibonacci" type="ros_action_server" action_type="actionlib_tutorials/Fibonacci"/>
  <adaptor name="add_two_ints" type="ros_server" service_type="rospy_tutorials/AddTwoInts"/>
</general>
<state name="待機">
  <rule source="fibonacci"><key>ros_action</key><script>return {sequence = {`+n+`}}</script></rule>
  <rule source="add_two_ints"><key>ros_service</key><script>return rtc_in_data.a + rtc_in_data.b + `+n+`</script></rule>
</state></seatml>`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1")
	control := freePort(t)
	_, log := startSeat(t, "run", "--control", control, f)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), `"to": "待機"`) })
	if out := m.Peer(t, "call_fibonacci", "/fibonacci", "1")(); !strings.Contains(out, "state 3 result [1]\n") {
		t.Fatalf("before the reload, the client printed:\n%s", out)
	}
	if out := m.Peer(t, "call_add_two_ints", "/add_two_ints", "40", "1")(); !strings.Contains(out, "sum 42\n") {
		t.Fatalf("before the reload, the service's client printed:\n%s", out)
	}
	write("2")
	if out, errOut, code := ctlAt(control, "reload", "即答"); code != 0 {
		t.Fatalf("seat ctl reload: exit %d\n%s%s", code, out, errOut)
	}
	if out := m.Peer(t, "call_add_two_ints", "/add_two_ints", "40", "0")(); !strings.Contains(out, "sum 42\n") {
		t.Errorf("after the reload, the service's client printed:\n%s", out)
	}
	if out := m.Peer(t, "call_fibonacci", "/fibonacci", "1")(); !strings.Contains(out, "state 3 result [2]\n") {
		t.Errorf("after the reload, the client printed:\n%s", out)
	}
}
