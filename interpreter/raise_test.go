package interpreter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"
)

// TestRaisedSideBySide: internal events raised side by side by one rule
// are all handled, however many (up to the queue's bound): the limit of
// 100 counts a chain, each raised by the one before. Before, one rule
// raising item 150 times had 100 handled and the log said each had
// raised another.
func TestRaisedSideBySide(t *testing.T) {
	h := start(t, doc(`<script>n = 0</script>`, `<state name="棚卸し">
  <rule><key>数えて</key><script>for i = 1, 150 do seat.raise("品物") end</script><raise event="集計"/></rule>
  <rule source="event"><key>品物</key><script>n = n + 1</script></rule>
  <rule source="event"><key>集計</key><script sendto="chat">return "品物 " .. n</script></rule>
</state>`))
	h.take()
	h.event("chat", "数えて")
	if diff := cmp.Diff([]string{"send:chat:品物 150"}, sends(h.take())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if errs := h.logged(zapcore.ErrorLevel); len(errs) != 0 {
		t.Errorf("logged %q", errs)
	}
}

// TestRaiseChainCut: a chain of internal events, each raised while the
// one before it is handled, is cut at 100 with one error naming the
// event and where it was raised; the behavior goes on. A rule that
// raises the event it handles is the usual cause.
func TestRaiseChainCut(t *testing.T) {
	h := start(t, doc(`<script>n = 0</script>`, `<state name="反響">
  <rule><key>始め</key><raise event="こだま"/></rule>
  <rule source="event"><key>こだま</key><script>n = n + 1</script>
    <raise event="こだま"/></rule>
  <rule><key>数</key><script sendto="chat">return "こだま " .. n</script></rule>
</state>`))
	h.take()
	h.event("chat", "始め")
	h.event("chat", "数")
	if diff := cmp.Diff([]string{"send:chat:こだま 100"}, sends(h.take())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	errs := h.logged(zapcore.ErrorLevel)
	if len(errs) != 1 || !strings.Contains(errs[0], "each raised while handling the one before") {
		t.Fatalf("logged %q, want one error about the chain", errs)
	}
	e := h.logs.FilterMessageSnippet("chain").All()[0].ContextMap()
	if e["event"] != "こだま" || e["raised_at"] != "t.seatml:10:5" || e["limit"] != int64(100) {
		t.Errorf("the error's fields %v: want event こだま, raised_at t.seatml:10:5, limit 100", e)
	}
}

// TestRaisedQueueFull: internal events are bounded by the queue's
// length: past it, a raise is dropped, with one error for the handling
// that dropped them, naming how many, the bound and the first dropped.
func TestRaisedQueueFull(t *testing.T) {
	h := start(t, doc(`<script>n = 0</script>`, `<state name="洪水">
  <rule><key>溢れ</key><script>for i = 1, 50 do seat.raise("滴") end</script></rule>
  <rule source="event"><key>滴</key><script>n = n + 1</script></rule>
  <rule><key>数</key><script sendto="chat">return "滴 " .. n</script></rule>
</state>`), func(o *Options) { o.QueueLen = 20 })
	h.take()
	h.event("chat", "溢れ")
	h.event("chat", "数")
	if diff := cmp.Diff([]string{"send:chat:滴 20"}, sends(h.take())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	errs := h.logged(zapcore.ErrorLevel)
	if len(errs) != 1 || !strings.Contains(errs[0], "internal event queue full") {
		t.Fatalf("logged %q, want one error about the full queue", errs)
	}
	e := h.logs.FilterMessageSnippet("queue full").All()[0].ContextMap()
	if e["dropped"] != int64(30) || e["limit"] != int64(20) || e["event"] != "滴" || e["raised_at"] != "t.seatml:8" {
		t.Errorf("the error's fields %v", e)
	}
}

// TestRaiseFanOutCut: a rule that raises its event twice each time it
// handles it would double them at every step of the chain; at most 10,000
// are handled after one event, with one error, and the behavior answers
// the next event. (With chains counted, not events in a row, nothing else
// bounded such a fan-out.)
func TestRaiseFanOutCut(t *testing.T) {
	h := start(t, doc(`<script>n = 0</script>`, `<state name="木">
  <rule><key>始め</key><raise event="枝"/></rule>
  <rule source="event"><key>枝</key><script>n = n + 1</script><raise event="枝"/><raise event="枝"/></rule>
  <rule><key>数</key><script sendto="chat">return "枝 " .. n</script></rule>
</state>`))
	h.take()
	h.event("chat", "始め")
	h.event("chat", "数")
	if diff := cmp.Diff([]string{"chat:枝 10000"}, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	errs := h.logged(zapcore.ErrorLevel)
	if len(errs) != 2 || !strings.Contains(errs[0], "10000 handled after one event") || !strings.Contains(errs[1], "queue full") {
		t.Errorf("logged %q, want the cut and the full queue, once each", errs)
	}
}
