package seattest

import (
	"strings"
	"testing"

	"github.com/seatml/seat/interpreter/record"
)

const twoBehaviors = `{"t":0,"kind":"recording"}
{"t":0.001,"kind":"start","behavior":"kiosk","file":"kiosk.seatml"}
{"t":0.002,"kind":"start","behavior":"robot","file":"robot.seatml"}
{"t":0.003,"kind":"state","behavior":"kiosk","state":"attract"}
{"t":0.003,"kind":"state","behavior":"robot","state":"idle"}
{"t":1.003,"kind":"in","behavior":"robot","source":"memory","key":"Head/Touch","text":"1"}
{"t":1.5,"kind":"in","behavior":"kiosk","source":"visitor","peer":"a:1","text":"hello"}
{"t":1.5001,"kind":"fire","behavior":"kiosk","at":"kiosk.seatml:49"}
{"t":1.5002,"kind":"state","behavior":"kiosk","state":"menu"}
{"t":1.5003,"kind":"out","behavior":"kiosk","source":"visitor","text":"Visitor #1"}
{"t":21.5004,"kind":"timer","behavior":"kiosk","timer":"timeout","state":"menu"}
{"t":21.5005,"kind":"out","behavior":"kiosk","source":"visitor","text":"Still there?"}
{"t":22,"kind":"in","behavior":"kiosk","source":"visitor","peer":"b:2","text":"map"}
`

// TestFromRecording: one behavior's part of a recording becomes a
// transcript: time from its initial state, the clock moved to a timer
// before its message, a second peer named, device events left out.
func TestFromRecording(t *testing.T) {
	lines, _, err := record.Read("r.jsonl", strings.NewReader(twoBehaviors))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromRecording("r.jsonl", lines, ""); err == nil || !strings.Contains(err.Error(), "holds 2 behaviors (kiosk, robot): choose one with --name") {
		t.Errorf("no name: %v", err)
	}
	if _, err := FromRecording("r.jsonl", lines, "kiosc"); err == nil || !strings.Contains(err.Error(), `did you mean "kiosk"?`) {
		t.Errorf("bad name: %v", err)
	}
	tr, err := FromRecording("r.jsonl", lines, "kiosk")
	if err != nil {
		t.Fatal(err)
	}
	want := `behavior: kiosk.seatml
= attract
+1.497s
visitor@a:1> hello
visitor< Visitor #1
= menu
+20.0004s
visitor< Still there?
+499.6ms
visitor@b:2> map
`
	if got := Format(tr); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if r := tr.Steps[3].Recorded; r == nil || r.Rule != "kiosk.seatml:49" || r.Line != 10 || r.T.String() != "1.4973s" {
		t.Errorf("recorded rule of the first message: %+v", r)
	}
	// A behavior that only had device events has nothing to replay.
	if _, err := FromRecording("r.jsonl", lines, "robot"); err == nil || !strings.Contains(err.Error(), `behavior "robot" did nothing`) {
		t.Errorf("robot: %v", err)
	}
	// The transcript reads back as it was written.
	back, diags := Parse("r.seattest", []byte(Format(tr)))
	if diags.HasErrors() || len(back.Steps) != len(tr.Steps) || back.Steps[8].Peer != "b:2" {
		t.Errorf("read back: %v %+v", diags, back)
	}
}

// TestStructuredMessageSteps: a ROS message (NAME>> JSON) reaches the
// behavior's key-less rules as a table, from a transcript and from a
// recording, and bad JSON is an error naming the line.
func TestStructuredMessageSteps(t *testing.T) {
	behavior := `<seatml><general name="joy"><adaptor name="io" type="stdio"/></general>
<state name="s">
  <rule><key>.*</key><message sendto="io">a line</message></rule>
  <rule><script>if event.data then seat.send("io", "速度 " .. rtc_in_data.axes[2]) end</script></rule>
</state></seatml>`
	res, v := run(t, behavior, "io>> {\"axes\": [0, 0.5], \"buttons\": []}\nio< 速度 0.5\nio> {\"axes\": [0, 0.5]}\nio< a line\n")
	mustPass(t, res, v)
	// A service request (NAME:KEY>> JSON): the rule's result answers it,
	// and the answer is a message to the adaptor.
	service := `<seatml><general name="add"><adaptor name="add_two_ints" type="stdio"/></general>
<state name="s"><rule source="add_two_ints"><key>ros_service</key><script>return rtc_in_data.a + rtc_in_data.b</script></rule>
<rule source="add_two_ints"><key>ros_action</key><script>seat.reply({sequence = {0, 1, rtc_in_data.order}})</script></rule></state></seatml>`
	res2, v2 := run(t, service, "add_two_ints:ros_service>> {\"a\": 40, \"b\": 2}\nadd_two_ints< 42\nadd_two_ints:ros_action>> {\"order\": 3}\n< {\"sequence\":[0,1,3]}\n")
	mustPass(t, res2, v2)
	if !strings.Contains(v, `io>> {"axes": [0, 0.5], "buttons": []}`) {
		t.Errorf("the verbose run does not show the message:\n%s", v)
	}
	for _, bad := range []string{"io>> {axes: 1}\n", "io>> null\n", "io>>\n"} {
		if tr, diags := Parse("x.seattest", []byte(bad)); tr != nil || !strings.Contains(diags.Error(), "x.seattest:1:1: NAME>> wants a message as JSON") {
			t.Errorf("%q: %v", bad, diags)
		}
	}
	rec := `{"t":0,"kind":"recording"}
{"t":0.001,"kind":"start","behavior":"joy","file":"joy.seatml"}
{"t":0.002,"kind":"state","behavior":"joy","state":"s"}
{"t":1.002,"kind":"in","behavior":"joy","source":"io","text":"{\"axes\":[0,0.5]}","message":true}
{"t":1.003,"kind":"out","behavior":"joy","source":"io","text":"速度 0.5"}
{"t":1.5,"kind":"in","behavior":"joy","source":"io","text":"{\"a\":1}","message":true,"key":"ros_service"}
{"t":2.002,"kind":"in","behavior":"joy","source":"io","text":"{oops","message":true}
`
	lines, _, err := record.Read("r.jsonl", strings.NewReader(rec))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromRecording("r.jsonl", lines, ""); err == nil || err.Error() != "r.jsonl:7: the message is not JSON: invalid character 'o' looking for beginning of object key string, at character 2 of the JSON" {
		t.Errorf("bad message: %v", err)
	}
	tr, err := FromRecording("r.jsonl", lines[:6], "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Format(tr), "behavior: joy.seatml\n= s\n+1s\nio>> {\"axes\":[0,0.5]}\nio< 速度 0.5\n+498ms\nio:ros_service>> {\"a\":1}\n"; got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
}

// TestRecordedAnswer: a recording's answer to seat.call becomes NAME=>
// JSON before the input whose rule made the call (after the clock moves
// to it), a failed call NAME=> !REASON, and the transcript passes against
// the behavior.
func TestRecordedAnswer(t *testing.T) {
	rec := `{"t":0,"kind":"recording"}
{"t":0.001,"kind":"start","behavior":"robot","file":"b.seatml"}
{"t":0.002,"kind":"state","behavior":"robot","state":"s"}
{"t":2.002,"kind":"in","behavior":"robot","source":"io","text":"足して"}
{"t":2.003,"kind":"fire","behavior":"robot","at":"b.seatml:7"}
{"t":2.003,"kind":"out","behavior":"robot","source":"add_two_ints","text":"{\"a\":40,\"b\":2}"}
{"t":2.004,"kind":"answer","behavior":"robot","source":"add_two_ints","text":"{\"sum\":42}"}
{"t":2.004,"kind":"out","behavior":"robot","source":"io","text":"答え 42"}
{"t":3.002,"kind":"in","behavior":"robot","source":"io","text":"足して"}
{"t":3.003,"kind":"fire","behavior":"robot","at":"b.seatml:7"}
{"t":3.003,"kind":"out","behavior":"robot","source":"add_two_ints","text":"{\"a\":40,\"b\":2}"}
{"t":3.004,"kind":"answer","behavior":"robot","source":"add_two_ints","key":"error","text":"service /add_two_ints is not there"}
{"t":3.004,"kind":"out","behavior":"robot","source":"io","text":"失敗 seat.call(\"add_two_ints\"): service /add_two_ints is not there"}
`
	tr := transcriptOf(t, rec)
	if got, want := Format(tr), "behavior: b.seatml\n= s\n+2s\nadd_two_ints=> {\"sum\":42}\nio> 足して\nadd_two_ints< {\"a\":40,\"b\":2}\nio< 答え 42\n"+
		"+1s\nadd_two_ints=> !service /add_two_ints is not there\nio> 足して\nadd_two_ints< {\"a\":40,\"b\":2}\nio< 失敗 seat.call(\"add_two_ints\"): service /add_two_ints is not there\n"; got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	res, v := run(t, serviceBehavior, Format(tr))
	mustPass(t, res, v)
}

// serviceBehavior calls a service and serves an action goal.
const serviceBehavior = `<seatml><general name="robot">
  <adaptor name="io" type="stdio"/>
  <adaptor name="add_two_ints" type="ros_client" service="/add_two_ints" service_type="rospy_tutorials/AddTwoInts"/>
  <adaptor name="fib" type="ros_action_server" action_id="/fibonacci" action_type="actionlib_tutorials/Fibonacci"/>
</general>
<state name="s">
  <rule source="io"><key>足して</key><script>
    local r, err = seat.call("add_two_ints", {a = 40, b = 2})
    if r then seat.send("io", "答え " .. r.sum) else seat.send("io", "失敗 " .. err) end
  </script></rule>
  <rule source="fib"><key>ros_action</key><script>seat.publish("fib", {sequence = {0}})</script></rule>
  <rule source="io"><key>終わり</key><script>
    local ok, err = pcall(seat.result, "fib", {sequence = {0, 1, 1}})
    if not ok then seat.send("io", "エラー " .. tostring(err)) end
  </script></rule>
  <rule source="io"><key>中止</key><script>seat.result("fib", nil, "aborted")</script></rule>
</state></seatml>`

// TestServiceAnswersAndGoalResults: seat test stands in for a ROS
// service (NAME=> JSON answers the next seat.call, whose request is a
// message to NAME) and for an action server's seat.result (it answers the
// latest goal, after its status unless it succeeded); an answer no call
// took fails the transcript at its line.
func TestServiceAnswersAndGoalResults(t *testing.T) {
	behavior := serviceBehavior
	res, v := run(t, behavior, `add_two_ints=> {"sum": 42}
io> 足して
add_two_ints< {"a":40,"b":2}
io< 答え 42
io> 足して
add_two_ints< {"a":40,"b":2}
io<~ ^失敗 seat.call\("add_two_ints"\): the transcript gives no answer: write add_two_ints=> JSON before the step that calls it$
fib:ros_action>> {"order": 3}
fib< {"sequence":[0]}
io> 終わり
fib< {"sequence":[0,1,1]}
io> 終わり
io<~ ^エラー .*fib: no goal in progress
fib:ros_action>> {"order": 1}
fib< {"sequence":[0]}
io> 中止
fib< aborted {}
`)
	mustPass(t, res, v)
	res, v = run(t, behavior, "io> 足して\nadd_two_ints=> {\"sum\": 1}\nadd_two_ints< {\"a\":40,\"b\":2}\n...\n")
	if res.Failure == nil || res.Failure.Step.Pos.Line != 2 || !strings.Contains(res.Failure.What, "no seat.call took this answer") {
		t.Errorf("an answer given after the call: %+v\n%s", res.Failure, v)
	}
	// Answers given first are there for the initial onentry's calls.
	atStart := strings.Replace(serviceBehavior, `<state name="s">`, `<state name="s"><onentry><script>
    local r = seat.call("add_two_ints", {a = 1, b = 1}); seat.send("io", "始め " .. r.sum)
  </script></onentry>`, 1)
	res, v = run(t, atStart, "add_two_ints=> {\"sum\": 2}\nadd_two_ints< {\"a\":1,\"b\":1}\nio< 始め 2\n")
	mustPass(t, res, v)
	for bad, want := range map[string]string{
		"add=>\n":       "NAME=> wants the service's answer as JSON",
		"add=> {sum}\n": "NAME=> wants the service's answer as JSON",
		"add=> !\n":     "NAME=> ! wants the reason the call fails",
		"=> {}\n":       "=> wants the adaptor that calls the service",
	} {
		if tr, diags := Parse("x.seattest", []byte(bad)); tr != nil || !strings.Contains(diags.Error(), "x.seattest:1:1: "+want) {
			t.Errorf("%q: %v", bad, diags)
		}
	}
}

// TestCancelStandIn: seat.cancel on an action client's stand-in cancels
// the goal sent (a message to the adaptor) until the transcript gives its
// result, and reports false otherwise; adaptors of other types refuse
// seat.call, seat.result and seat.cancel, as the real ones do.
func TestCancelStandIn(t *testing.T) {
	behavior := `<seatml><general name="robot">
  <adaptor name="io" type="stdio"/>
  <adaptor name="move" type="ros_action_client" action_id="/move" action_type="actionlib_tutorials/Fibonacci"/>
</general>
<state name="s">
  <rule source="io"><key>行け</key><script>seat.publish("move", {order = 5})</script></rule>
  <rule source="io"><key>止まれ</key><script>seat.send("io", seat.cancel("move") and "止めます" or "動いていません")</script></rule>
  <rule source="move"><key>ros_action_result</key><script>seat.send("io", "結果 " .. rtc_in_data.status)</script></rule>
  <rule source="io"><key>間違い</key><script>
    for _, f in ipairs({function() seat.call("io", {}) end, function() seat.result("io", {}) end, function() seat.cancel("io") end}) do
      local ok, err = pcall(f)
      seat.send("io", (tostring(err):match("is not an adaptor that [%a ]+"):gsub(" $", "")))
    end
  </script></rule>
</state></seatml>`
	res, v := run(t, behavior, `io> 止まれ
io< 動いていません
io> 行け
move< {"order":5}
io> 止まれ
move< cancel
io< 止めます
move:ros_action_result>> {"status": "preempted", "result": {"sequence": []}}
io< 結果 preempted
io> 止まれ
io< 動いていません
io> 間違い
io< is not an adaptor that calls a service
io< is not an adaptor that works on goals
io< is not an adaptor that sends goals
`)
	mustPass(t, res, v)
}

// TestSessionCallsService: a session's script calls the host's ros_client
// (seat.call reaches it through the session's shared adaptor).
func TestSessionCallsService(t *testing.T) {
	behavior := `<seatml><general name="desk">
  <adaptor name="chat" type="socket" role="server" port="0" session="peer"/>
  <adaptor name="add_two_ints" type="ros_client" service="/add_two_ints" service_type="rospy_tutorials/AddTwoInts"/>
</general>
<state name="s">
  <rule source="chat"><key>足して</key><script>
    local r, err = seat.call("add_two_ints", {a = 1, b = 2})
    seat.reply(r and ("答え " .. r.sum) or err)
  </script></rule>
</state></seatml>`
	res, v := run(t, behavior, `@connect chat ann
add_two_ints=> {"sum": 3}
chat@ann> 足して
add_two_ints< {"a":1,"b":2}
chat< 答え 3
`)
	mustPass(t, res, v)
}

// TestRaisedEventsAreNotInput: an internal event in a recording (a raise
// line, or an input from "event" as recordings before the raise kind
// wrote it) is not a step of the transcript: the replayed behavior
// raises it itself.
func TestRaisedEventsAreNotInput(t *testing.T) {
	rec := `{"t":0,"kind":"recording","wall":"2026-11-27T00:00:00Z","seat":"0.1.0"}
{"t":0,"kind":"start","behavior":"受付","file":"受付.seatml"}
{"t":0.001,"kind":"state","behavior":"受付","state":"待機"}
{"t":0.5,"kind":"in","behavior":"受付","source":"係員","peer":"a:1","text":"中断して"}
{"t":0.5001,"kind":"raise","behavior":"受付","key":"中断"}
{"t":0.5002,"kind":"in","behavior":"受付","source":"event","text":"","key":"再開"}
{"t":0.5003,"kind":"out","behavior":"受付","source":"係員","text":"再開しました"}
`
	tr := transcriptOf(t, rec)
	want := "behavior: 受付.seatml\n= 待機\n+499ms\n係員@a:1> 中断して\n係員< 再開しました\n"
	if got := Format(tr); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
}

// TestPreemptedGoalStandIn: seat test stands in for an action server's
// goals as the real adaptor does: seat.result and feedback are for the
// goal a rule took (a goal no rule took is not theirs), may name it by
// its peer (seat.result's fourth argument, seat.publish's third), and
// after a NAME:ros_action_preempted>> step no rule answered, seat.result
// returns false and says the goal was preempted; a rule's answer to a
// cancel ends the goal.
func TestPreemptedGoalStandIn(t *testing.T) {
	behavior := `<seatml><general name="robot">
  <adaptor name="io" type="stdio"/>
  <adaptor name="fib" type="ros_action_server" action_type="actionlib_tutorials/Fibonacci"/>
</general>
<state name="待機">
  <rule source="fib"><key>ros_action</key><script>goal = event.peer</script><statetransition>計算</statetransition></rule>
</state>
<state name="計算">
  <rule source="io"><key>途中</key><script>seat.publish("fib", {sequence = {0}}, goal)</script></rule>
  <rule source="io"><key>終わり</key><script>
    local ok, err = seat.result("fib", {sequence = {0, 1}})
    seat.send("io", ok and "送りました" or "送れません " .. err)
  </script><statetransition>待機</statetransition></rule>
  <rule source="fib"><key>ros_action_cancel</key><script>return {sequence = {0}}</script><statetransition>待機</statetransition></rule>
  <rule source="io"><key>名指し</key><script>
    local ok, err = pcall(seat.result, "fib", {sequence = {1}}, nil, "己")
    seat.send("io", err)
    seat.result("fib", {sequence = {1}}, nil, goal)
  </script></rule>
</state></seatml>`
	res, v := run(t, behavior, `fib:ros_action@甲>> {"order": 3}
io> 途中
fib< {"sequence":[0]}
fib:ros_action_preempted@甲>> {"goal_id": "甲", "by": "乙"}
fib:ros_action@乙>> {"order": 1}
io> 終わり
io< 送れません seat.result("fib"): fib: goal "甲" was preempted by a new goal: the goal has ended
= 待機
fib:ros_action@丙>> {"order": 2}
io> 終わり
fib< {"sequence":[0,1]}
io< 送りました
fib:ros_action@丁>> {"order": 2}
fib:ros_action_cancel@丁>> {"goal_id": "丁"}
fib< {"sequence":[0]}
= 待機
fib:ros_action@戊>> {"order": 1}
io> 名指し
io<~ fib: no goal "己" in progress$
fib< {"sequence":[1]}
`)
	mustPass(t, res, v)
}

// TestCutEventIsLeftOut: the input seat was handling when it stopped (a
// cut line: SIGTERM stopped its script, here while seat.call waited) is
// left out of the transcript with what it did so far, the call's answer
// included: it was not handled, and a replay of it would do more.
func TestCutEventIsLeftOut(t *testing.T) {
	rec := `{"t":0,"kind":"recording","wall":"2026-11-27T00:00:00Z","seat":"0.1.0"}
{"t":0,"kind":"start","behavior":"計算","file":"計算.seatml"}
{"t":0.001,"kind":"state","behavior":"計算","state":"待機"}
{"t":0.5,"kind":"in","behavior":"計算","source":"/ask","text":"40たす2"}
{"t":0.5001,"kind":"out","behavior":"計算","source":"add","text":"[40,2]"}
{"t":0.5002,"kind":"answer","behavior":"計算","source":"add","text":"{\"sum\":42}"}
{"t":0.5003,"kind":"out","behavior":"計算","source":"/answer","text":"答えは42"}
{"t":0.7,"kind":"in","behavior":"計算","source":"/ask","text":"1たす1"}
{"t":0.7001,"kind":"out","behavior":"計算","source":"add","text":"[1,1]"}
{"t":0.9,"kind":"answer","behavior":"計算","source":"add","key":"error","text":"no answer from add: context canceled"}
{"t":0.9001,"kind":"cut","behavior":"計算"}
`
	tr := transcriptOf(t, rec)
	want := "behavior: 計算.seatml\n= 待機\n+499ms\nadd=> {\"sum\":42}\n/ask> 40たす2\nadd< [40,2]\n/answer< 答えは42\n+200ms\n"
	if got := Format(tr); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
}

// transcriptOf is the transcript of a recording's only behavior.
func transcriptOf(t *testing.T, rec string) *Transcript {
	t.Helper()
	lines, _, err := record.Read("r.jsonl", strings.NewReader(rec))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := FromRecording("r.jsonl", lines, "")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
