package interpreter

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seatml/seat/adaptors"
)

// TestStructuredMessages: a structured message (a ROS message other
// than a String) fires key-less rules only, and scripts read it as a
// table in event.data and rtc_in_data (the same table), with arrays
// 1-based and event.text its JSON. seat.publish sends a table as JSON to
// an adaptor that takes no messages, and a string as seat.send does.
func TestStructuredMessages(t *testing.T) {
	h := start(t, doc("", `<state name="s">
  <rule source="chat"><key>.*</key><message sendto="chat">keyed</message></rule>
  <rule source="chat"><script>
    if event.data == nil then seat.send("chat", "a line: " .. rtc_in_data) return end
    seat.send("chat", "axes " .. rtc_in_data.axes[1] .. " " .. #event.data.axes .. " " .. tostring(rtc_in_data == event.data))
    seat.send("chat", "名前 " .. event.data.header.frame_id .. " " .. event.text)
    seat.publish("chat", {linear = {x = event.data.axes[2]}, angular = {1, 2, 3}})
    seat.publish("chat", "そのまま")
  </script></rule>
</state>`))
	joy := map[string]any{"axes": []any{0.5, -1.0}, "buttons": []any{int64(1), int64(0)}, "header": map[string]any{"frame_id": "ジョイ"}}
	text := `{"axes":[0.5,-1],"buttons":[1,0],"header":{"frame_id":"ジョイ"}}`
	if err := h.m.Deliver(context.Background(), adaptors.Event{Source: "chat", Text: text, Data: joy}); err != nil {
		t.Fatal(err)
	}
	h.sync()
	want := []string{
		"chat:axes 0.5 2 true",
		"chat:名前 ジョイ " + text,
		`chat:{"angular":[1,2,3],"linear":{"x":-1}}`,
		"chat:そのまま",
	}
	if got := h.sends(); !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
	// The same text as a line fires the keyed rule, and event.data is nil.
	h.event("chat", text)
	if got, want := h.sends(), []string{"chat:keyed", "chat:a line: " + text}; !slices.Equal(got, want) {
		t.Errorf("a line: sent %q, want %q", got, want)
	}
}

// TestPublishErrors: seat.publish names what is wrong: an adaptor not
// declared, a value JSON cannot hold.
func TestPublishErrors(t *testing.T) {
	h := start(t, doc("", `<state name="s">
  <rule><key>undeclared</key><script>seat.publish("chta", {1})</script></rule>
  <rule><key>nan</key><script>seat.publish("chat", {x = 0/0})</script></rule>
</state>`))
	for _, c := range []struct{ in, want string }{
		{"undeclared", `seat.publish: "chta" is not a declared adaptor; did you mean "chat"?`},
		{"nan", "bad argument #2 to publish (json: unsupported value: NaN)"},
	} {
		h.event("chat", c.in)
		if got := strings.Join(h.logged(0), "\n"); !strings.Contains(got, c.want) {
			t.Errorf("%s: logged %s\nwant %s", c.in, got, c.want)
		}
		if s := h.sends(); len(s) != 0 {
			t.Errorf("%s: sent %q", c.in, s)
		}
	}
}

// TestReplyAndCallInProcess: seat.reply with a table answers a plain peer
// with JSON; seat.call on an adaptor that calls no service is a Lua error
// naming it, and a script's result goes to no one when the event is not
// a request.
func TestReplyAndCallInProcess(t *testing.T) {
	h := start(t, doc("", `<state name="s">
  <rule><key>json</key><script>seat.reply({ok = true, n = 2})</script></rule>
  <rule><key>call</key><script>seat.call("chat", 1, 2)</script></rule>
  <rule><key>result</key><script>return 42</script></rule>
</state>`))
	peer := &recordingConn{}
	for _, in := range []string{"json", "call", "result"} {
		if err := h.m.Deliver(context.Background(), adaptors.Event{Source: "chat", Text: in, From: peer}); err != nil {
			t.Fatal(err)
		}
		h.sync()
	}
	if got := peer.sent(); !slices.Equal(got, []string{`{"n":2,"ok":true}`}) {
		t.Errorf("the peer got %q", got)
	}
	if got := strings.Join(h.logged(0), "\n"); !strings.Contains(got, `seat.call: "chat" is not an adaptor that calls a service (a ros_client)`) {
		t.Errorf("logged %s", got)
	}
}

// recordingConn is a peer connection that keeps what it is sent.
type recordingConn struct {
	mu   sync.Mutex
	text []string
}

func (c *recordingConn) Send(s string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text = append(c.text, s)
	return nil
}
func (c *recordingConn) String() string { return "peer" }
func (c *recordingConn) Peer() string   { return "127.0.0.1:1" }
func (c *recordingConn) sent() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.text)
}
