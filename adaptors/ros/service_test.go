package ros

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/ros/rostest"
)

func openService(t *testing.T, m *rostest.Master, server bool, name string, attrs map[string]string) (adaptors.Adaptor, sink) {
	t.Helper()
	if server {
		return openWith(t, m, NewServer, name, attrs)
	}
	return openWith(t, m, NewClient, name, attrs)
}

// TestServerAnswersRosservice: rosservice call reaches a ros_server as an
// event keyed ros_service with the request as data; the answer the
// behavior gives is the response rosservice prints, Japanese included. A
// request the behavior handles without answering fails the call, and a
// second answer is refused. A client of another type is refused.
func TestServerAnswersRosservice(t *testing.T) {
	m := rostest.Start(t)
	ad, s := openService(t, m, true, "/set_led", map[string]string{"service_type": "std_srvs.SetBool"})
	go func() {
		for ev := range s {
			req := ev.From.(adaptors.Answerer)
			d, _ := ev.Data.(map[string]any)
			if ev.Key == ServiceKey && d["data"] == true {
				if err := req.SendMessage(map[string]any{"success": true, "message": "点けました"}); err != nil {
					t.Error(err)
				}
				if err := req.SendMessage([]any{false}); err == nil || !req.Answered() {
					t.Error("a second answer was taken")
				}
			}
			ev.Done(true) // data: false is not answered
		}
	}()
	call := func(value string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := m.Command(ctx, "rosservice", "call", "/set_led", value).CombinedOutput()
		return string(out), err
	}
	out, err := call("data: true")
	if err != nil || !strings.Contains(out, "success: True") || !strings.Contains(out, `message: "\u70B9\u3051\u307E\u3057\u305F"`) {
		t.Errorf("rosservice call: %v\n%s", err, out)
	}
	if out, err := call("data: false"); err == nil || !strings.Contains(out, "responded with an error: b'the behavior did not answer the request'") {
		t.Errorf("an unanswered request: %v\n%s", err, out)
	}
	// A client with another definition of the service is refused, and
	// counted; the service goes on.
	out = m.Peer(t, "call_add_two_ints", "/set_led", "1", "2")()
	if !strings.Contains(out, "md5sums do not match") || ad.(adaptors.StatsReporter).Stats().WrongType != 1 {
		t.Errorf("a client of another type: refused %d; it printed:\n%s", ad.(adaptors.StatsReporter).Stats().WrongType, out)
	}
	if out, err := call("data: true"); err != nil || !strings.Contains(out, "success: True") {
		t.Errorf("after the refusal: %v\n%s", err, out)
	}
}

// TestClientCallsRospy: seat.call's side of a ros_client calls a rospy
// server (rospy_tutorials/AddTwoInts, its tutorial's sum) with the
// fields in order or by name; a value that does not fit is refused before
// anything is sent; a service that is gone is an error within the time
// limit.
func TestClientCallsRospy(t *testing.T) {
	m := rostest.Start(t)
	m.Peer(t, "serve_add_two_ints", "/add_two_ints")
	ad, _ := openService(t, m, false, "add_two_ints", map[string]string{"service_type": "rospy_tutorials/AddTwoInts"})
	c := ad.(adaptors.Caller)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, req := range []any{[]any{2.0, 40.0}, map[string]any{"a": -8.0, "b": 50.0}} {
		res, err := c.Call(ctx, req)
		if diff := cmp.Diff(map[string]any{"sum": int64(42)}, res); err != nil || diff != "" {
			t.Errorf("%v: %v %s", req, err, diff)
		}
	}
	var bad *adaptors.InvalidMessageError
	if _, err := c.Call(ctx, []any{1.5, 2.0}); !errors.As(err, &bad) || err.Error() != "rospy_tutorials/AddTwoIntsRequest a: 1.5 is not a whole number" {
		t.Errorf("a bad request: %v", err)
	}
	gone, _ := openService(t, m, false, "nobody", map[string]string{"service_type": "std_srvs/Trigger"})
	short, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	start := time.Now()
	if _, err := gone.(adaptors.Caller).Call(short, nil); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("a service that is gone: %v after %v", err, time.Since(start))
	}
}
