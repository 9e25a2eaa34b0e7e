package ros

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/ros/rostest"
)

// TestActionServerWithRospyClient: a goal from actionlib's simple client
// (rospy) reaches a ros_action_server as an event keyed ros_action; the
// feedback it publishes reaches the client, and the goal ends with the
// result.
func TestActionServerWithRospyClient(t *testing.T) {
	m := rostest.Start(t)
	ad, s := openWith(t, m, NewActionServer, "fibonacci", map[string]string{"action_type": "actionlib_tutorials.Fibonacci"})
	go func() {
		for ev := range s {
			if ev.Key != GoalKey {
				continue
			}
			ev.From.(adaptors.Taker).Take() // as a rule firing on it does
			order := ev.Data.(map[string]any)["order"].(int64)
			seq := []any{0.0, 1.0}
			for i := 1; i < int(order); i++ {
				seq = append(seq, seq[i].(float64)+seq[i-1].(float64))
				if err := ad.(adaptors.MessageSender).SendMessage(map[string]any{"sequence": seq}); err != nil {
					t.Error(err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := ev.From.(adaptors.Answerer).SendMessage(map[string]any{"sequence": seq}); err != nil {
				t.Error(err)
			}
		}
	}()
	out := m.Peer(t, "call_fibonacci", "fibonacci", "5")()
	for _, want := range []string{"feedback [0, 1, 1, 2, 3, 5]\n", "state 3 result [0, 1, 1, 2, 3, 5]\n"} { // 3: SUCCEEDED (feedback sent before the client's feedback subscriber is connected is lost, as with rospy's servers: the first is not required)
		if !strings.Contains(out, want) {
			t.Errorf("the rospy client printed:\n%s\nwithout %q", out, want)
		}
	}
	if err := ad.(adaptors.Finisher).Finish("", nil, Succeeded); err == nil || errors.Is(err, adaptors.ErrGoalEnded) {
		t.Errorf("a goal ended twice: %v", err)
	}
}

// TestActionClientWithRospyServer: a goal sent through a
// ros_action_client reaches actionlib's simple server (rospy), even sent
// before the server's topics are connected, and its feedback and result
// come back as events.
func TestActionClientWithRospyServer(t *testing.T) {
	m := rostest.Start(t)
	m.Peer(t, "serve_fibonacci", "fibonacci")
	ad, s := openWith(t, m, NewActionClient, "fibonacci", map[string]string{"action_type": "actionlib_tutorials/Fibonacci"})
	// Sent at once: it waits for the server's topics to connect.
	if err := ad.(adaptors.MessageSender).SendMessage(map[string]any{"order": 4.0}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var feedback []any
	for {
		select {
		case ev := <-s:
			switch ev.Key {
			case FeedbackKey:
				feedback = append(feedback, ev.Data.(map[string]any)["sequence"])
			case ResultKey:
				want := map[string]any{"status": "succeeded", "result": map[string]any{"sequence": []any{int64(0), int64(1), int64(1), int64(2), int64(3)}}}
				if diff := cmp.Diff(want, ev.Data); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
				if len(feedback) != 3 {
					t.Errorf("feedback %v", feedback)
				}
				return
			}
		case <-time.After(time.Until(deadline)):
			t.Fatalf("no result within 30 s; feedback %v", feedback)
		}
	}
}

// TestActionGoalLostOnMasterRestart: a goal in progress when the master
// restarts can get no answer any more (the node is made again): it ends
// with the status "lost", once, and a goal sent after that is answered.
func TestActionGoalLostOnMasterRestart(t *testing.T) {
	t.Cleanup(func(d time.Duration) func() { return func() { checkEvery = d } }(checkEvery))
	checkEvery = 100 * time.Millisecond
	m := rostest.Start(t)
	m.Peer(t, "serve_fibonacci", "fibonacci")
	ad, s := openWith(t, m, NewActionClient, "fibonacci", map[string]string{"action_type": "actionlib_tutorials/Fibonacci"})
	if err := ad.(adaptors.MessageSender).SendMessage(map[string]any{"order": 400.0}); err != nil { // 20 s of feedback
		t.Fatal(err)
	}
	next := func(what string) adaptors.Event {
		t.Helper()
		select {
		case ev := <-s:
			return ev
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s within 30 s", what)
			return adaptors.Event{}
		}
	}
	if ev := next("feedback"); ev.Key != FeedbackKey {
		t.Fatalf("first event %s %s", ev.Key, ev.Text)
	}
	m.Restart()
	for {
		ev := next("result")
		if ev.Key == FeedbackKey {
			continue // sent before the restart
		}
		if ev.Key != ResultKey || ev.Text != `{"result":{"sequence":[]},"status":"lost"}` {
			t.Fatalf("after the restart: %s %s", ev.Key, ev.Text)
		}
		break
	}
	// rospy's server does not register again with a restarted master; a
	// new one does, and answers the next goal. No second "lost" comes in
	// between.
	m.Peer(t, "serve_fibonacci", "fibonacci")
	if err := ad.(adaptors.MessageSender).SendMessage(map[string]any{"order": 3.0}); err != nil {
		t.Fatal(err)
	}
	for {
		ev := next("the second goal's result")
		if ev.Key == FeedbackKey {
			continue
		}
		if ev.Key != ResultKey || ev.Text != `{"result":{"sequence":[0,1,1,2]},"status":"succeeded"}` {
			t.Fatalf("second goal: %s %s", ev.Key, ev.Text)
		}
		break
	}
}

// TestActionClientCancels: seat.cancel's CancelGoal asks rospy's server
// to cancel the goal in progress, which ends "preempted"; with no goal in
// progress it reports false; a goal still waiting for its server is
// dropped and ends "recalled".
func TestActionClientCancels(t *testing.T) {
	m := rostest.Start(t)
	ad, s := openWith(t, m, NewActionClient, "fibonacci", map[string]string{"action_type": "actionlib_tutorials/Fibonacci"})
	cancel := ad.(adaptors.Canceler)
	if ok, err := cancel.CancelGoal(); ok || err != nil {
		t.Errorf("with no goal: %v, %v", ok, err)
	}
	result := func() string {
		t.Helper()
		for {
			select {
			case ev := <-s:
				if ev.Key == ResultKey {
					return ev.Text
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no result within 30 s")
			}
		}
	}
	// No server yet: the goal waits for it, and is dropped.
	if err := ad.(adaptors.MessageSender).SendMessage(map[string]any{"order": 3.0}); err != nil {
		t.Fatal(err)
	}
	if ok, err := cancel.CancelGoal(); !ok || err != nil {
		t.Errorf("a waiting goal: %v, %v", ok, err)
	}
	if got := result(); got != `{"result":{"sequence":[]},"status":"recalled"}` {
		t.Errorf("the waiting goal's result: %s", got)
	}
	m.Peer(t, "serve_fibonacci", "fibonacci")
	if err := ad.(adaptors.MessageSender).SendMessage(map[string]any{"order": 400.0}); err != nil { // 20 s of feedback
		t.Fatal(err)
	}
	select {
	case ev := <-s:
		if ev.Key != FeedbackKey {
			t.Fatalf("first event %s %s", ev.Key, ev.Text)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no feedback within 30 s")
	}
	if ok, err := cancel.CancelGoal(); !ok || err != nil {
		t.Errorf("a goal in progress: %v, %v", ok, err)
	}
	if got := result(); !strings.Contains(got, `"status":"preempted"`) {
		t.Errorf("the canceled goal's result: %s", got)
	}
	if ok, err := cancel.CancelGoal(); ok || err != nil {
		t.Errorf("after the result: %v, %v", ok, err)
	}
}

// TestActionCanceled: a client's cancel request reaches the server's
// behavior as an event keyed ros_action_cancel; a goal no rule ended by
// then is canceled (PREEMPTED for the client), and is over: feedback is
// dropped and seat.result says the goal was canceled.
func TestActionCanceled(t *testing.T) {
	m := rostest.Start(t)
	ad, s := openWith(t, m, NewActionServer, "fibonacci", map[string]string{"action_type": "actionlib_tutorials/Fibonacci"})
	canceled := make(chan struct{})
	go func() {
		var stop chan struct{}
		for ev := range s {
			switch ev.Key {
			case GoalKey:
				ev.From.(adaptors.Taker).Take()
				// Feedback until the cancel: one sent before the client's
				// feedback subscriber has connected is lost (actionlib's
				// design), which once left the client waiting.
				stop = make(chan struct{})
				go func(stop chan struct{}) {
					tick := time.NewTicker(100 * time.Millisecond)
					defer tick.Stop()
					for ad.(adaptors.MessageSender).SendMessage(map[string]any{"sequence": []any{0.0, 1.0}}) == nil {
						select {
						case <-stop:
							return
						case <-tick.C:
						}
					}
				}(stop)
			case CancelKey:
				close(stop)
				close(canceled)
			}
			if ev.Done != nil {
				ev.Done(true)
			}
		}
	}()
	out := m.Peer(t, "cancel_fibonacci", "fibonacci", "10")()
	if !strings.Contains(out, "state 2\n") { // PREEMPTED
		t.Errorf("the rospy client printed:\n%s", out)
	}
	select {
	case <-canceled:
	default:
		t.Error("no ros_action_cancel event")
	}
	// The goal is over: feedback is dropped (logged once), and a result
	// says how it ended.
	if err := ad.(adaptors.MessageSender).SendMessage(map[string]any{"sequence": []any{1.0}}); err != nil {
		t.Errorf("feedback after the cancel: %v", err)
	}
	if err := ad.(adaptors.Finisher).Finish("", nil, Succeeded); !errors.Is(err, adaptors.ErrGoalEnded) || !strings.Contains(err.Error(), "was canceled at its client's request") {
		t.Errorf("a result after the cancel: %v", err)
	}
}

// TestActionGoalPreempted: a second client's goal preempts the goal in
// progress. The behavior is told first (ros_action_preempted, whose peer
// is the old goal's id, naming the new one), then given the new goal
// (its peer its id). A goal no rule took is rejected, and seat.result
// without an id never reaches it: it says the old goal was preempted.
// An id reaches only a goal the behavior took.
func TestActionGoalPreempted(t *testing.T) {
	m := rostest.Start(t)
	ad, s := openWith(t, m, NewActionServer, "fibonacci", map[string]string{"action_type": "actionlib_tutorials/Fibonacci"})
	f := ad.(adaptors.Finisher)
	next := func(key string) adaptors.Event {
		t.Helper()
		select {
		case ev := <-s:
			if ev.Key != key {
				t.Fatalf("got %s %s, want %s", ev.Key, ev.Text, key)
			}
			return ev
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s within 30 s", key)
		}
		return adaptors.Event{}
	}
	a := m.Peer(t, "call_fibonacci", "fibonacci", "45")
	goalA := next(GoalKey)
	goalA.From.(adaptors.Taker).Take() // a rule fires on it
	goalA.Done(true)
	idA := goalA.From.Peer()
	if !strings.HasPrefix(idA, "/peer_call_fibonacci_") {
		t.Errorf("goal id %q", idA)
	}
	if err := f.Feedback(idA, map[string]any{"sequence": []any{0.0, 1.0, 1.0}}); err != nil {
		t.Error(err)
	}

	b := m.Peer(t, "call_fibonacci", "fibonacci", "3")
	pre := next(PreemptedKey)
	goalB := next(GoalKey)
	idB := goalB.From.Peer()
	if want := map[string]any{"goal_id": idA, "by": idB}; pre.From.Peer() != idA || !cmp.Equal(pre.Data, want) || idB == idA {
		t.Errorf("preempted: peer %q, data %v; want peer %q, data %v", pre.From.Peer(), pre.Data, idA, want)
	}
	pre.Done(true)   // no rule ended A: canceled
	goalB.Done(true) // no rule took B: rejected
	err := f.Finish("", map[string]any{"sequence": []any{0.0, 1.0}}, Succeeded)
	if !errors.Is(err, adaptors.ErrGoalEnded) || !strings.Contains(err.Error(), "was preempted by goal "+idB) {
		t.Errorf("seat.result after the preemption: %v", err)
	}
	if err := f.Feedback(idB, map[string]any{"sequence": []any{0.0}}); err == nil || !strings.Contains(err.Error(), "no goal \""+idB+"\" in progress") {
		t.Errorf("feedback naming the goal no rule took: %v", err)
	}
	if out := a(); !strings.Contains(out, "state 2 result []\n") { // PREEMPTED
		t.Errorf("client A printed:\n%s", out)
	}
	if out := b(); !strings.Contains(out, "state 5 result []\n") { // REJECTED
		t.Errorf("client B printed:\n%s", out)
	}

	c := m.Peer(t, "call_fibonacci", "fibonacci", "2")
	goalC := next(GoalKey)
	goalC.From.(adaptors.Taker).Take()
	goalC.Done(true)
	if err := f.Finish(goalC.From.Peer(), map[string]any{"sequence": []any{0.0, 1.0, 1.0}}, Succeeded); err != nil {
		t.Error(err)
	}
	if out := c(); !strings.Contains(out, "state 3 result [0, 1, 1]\n") {
		t.Errorf("client C printed:\n%s", out)
	}
}
