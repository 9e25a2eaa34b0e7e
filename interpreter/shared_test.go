package interpreter

import (
	"context"
	"errors"
	"testing"

	"github.com/seatml/seat/adaptors"
)

// TestSharedAdaptorsHaveTheirKindsCapabilities: a session's view of one
// of the host's adaptors has exactly the capabilities of the adaptor's
// kind, so that a script's seat.call, seat.result, seat.cancel and
// seat.publish reach the host's adaptor, and a script asking a kind for
// what it cannot do is told so, as outside a session. Before, the view
// was one type for every kind, and scripts reached the host's adaptor
// through Underlying().
func TestSharedAdaptorsHaveTheirKindsCapabilities(t *testing.T) {
	for _, tc := range []struct {
		kind                                       string
		topics, messages, calls, finishes, cancels bool
	}{
		{kind: "socket"},
		{kind: "web"},
		{kind: "mqtt", topics: true},
		{kind: "ros_pub", messages: true},
		{kind: "ros_client", calls: true},
		{kind: "ros_action_server", messages: true, finishes: true},
		{kind: "ros_action_client", messages: true, cancels: true},
	} {
		k, ok := adaptors.LookupKind(tc.kind)
		if !ok {
			t.Fatalf("no kind %q", tc.kind)
		}
		a := newShared("a", &hostAdaptor{}, k)
		_, topics := a.(adaptors.TopicSender)
		_, messages := a.(adaptors.MessageSender)
		_, calls := a.(adaptors.Caller)
		_, finishes := a.(adaptors.Finisher)
		_, cancels := a.(adaptors.Canceler)
		if topics != tc.topics || messages != tc.messages || calls != tc.calls || finishes != tc.finishes || cancels != tc.cancels {
			t.Errorf("%s: topics %v, messages %v, calls %v, finishes %v, cancels %v; want %v %v %v %v %v", tc.kind,
				topics, messages, calls, finishes, cancels, tc.topics, tc.messages, tc.calls, tc.finishes, tc.cancels)
		}
	}
}

// TestSharedAdaptorOfAHostThatCouldNotOpenIt: a call through a session's
// view of an adaptor the host has not open is "not connected", not a
// crash.
func TestSharedAdaptorOfAHostThatCouldNotOpenIt(t *testing.T) {
	k, _ := adaptors.LookupKind("ros_client")
	h := &hostAdaptor{host: &Machine{env: &env{binding: binding{adaptors: map[string]adaptors.Adaptor{}}}}, name: "srv"}
	a := newShared("srv", h, k)
	if _, err := a.(adaptors.Caller).Call(context.Background(), nil); !errors.Is(err, adaptors.ErrNotConnected) {
		t.Errorf("Call: %v, want not connected", err)
	}
	if err := a.Send("x"); !errors.Is(err, adaptors.ErrNotConnected) {
		t.Errorf("Send: %v, want not connected", err)
	}
}

// TestSharedViewsOfAnUnopenedHostSayNotConnected: through a session's
// view of any kind of adaptor the host could not open, what the kind can
// do fails with "not connected", as seat.call's does. Before, a topic
// message to an MQTT adaptor the host had not open read "the adaptor does
// not publish to topics", as if MQTT could not.
func TestSharedViewsOfAnUnopenedHostSayNotConnected(t *testing.T) {
	h := &hostAdaptor{host: &Machine{env: &env{binding: binding{adaptors: map[string]adaptors.Adaptor{}}}}, name: "a"}
	for _, name := range adaptors.KindsWith(0) {
		k, _ := adaptors.LookupKind(name)
		if k.New == nil {
			continue // a foreign kind seat ignores
		}
		a := newShared("a", h, k)
		check := func(what string, err error) {
			if !errors.Is(err, adaptors.ErrNotConnected) {
				t.Errorf("%s: %s: %v, want not connected", name, what, err)
			}
		}
		check("Send", a.Send("x"))
		if ts, ok := a.(adaptors.TopicSender); ok {
			check("SendTopic", ts.SendTopic("t", "x", false))
		}
		if ms, ok := a.(adaptors.MessageSender); ok {
			check("SendMessage", ms.SendMessage(map[string]any{}))
		}
		if c, ok := a.(adaptors.Caller); ok {
			_, err := c.Call(context.Background(), nil)
			check("Call", err)
		}
		if f, ok := a.(adaptors.Finisher); ok {
			check("Finish", f.Finish("g", nil, "succeeded"))
			check("Feedback", f.Feedback("g", nil))
		}
		if c, ok := a.(adaptors.Canceler); ok {
			_, err := c.CancelGoal()
			check("CancelGoal", err)
		}
	}
}
