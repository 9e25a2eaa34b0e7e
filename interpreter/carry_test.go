package interpreter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/interpreter/seatml"
)

// reloadKeeping replaces h's machine with a new version of src, on the
// same clock, as the manager's reload does, keeping its state; it
// returns the new version's harness and what was not carried over.
func reloadKeeping(t *testing.T, h *harness, src string) (*harness, []string) {
	t.Helper()
	prog, diags := seatml.LoadBytes("t.seatml", []byte(src), seatml.LoadOptions{AllowShell: true})
	if prog == nil {
		t.Fatalf("load failed:\n%v", diags)
	}
	n := &harness{t: t, clock: h.clock, logs: h.logs, done: make(chan error, 1)}
	opts := h.m.opts
	opts.Trace = func(s string) {
		n.mu.Lock()
		n.trace = append(n.trace, s)
		n.mu.Unlock()
	}
	m, err := New(prog, opts)
	if err != nil {
		t.Fatal(err)
	}
	n.m = m
	ctx := context.Background()
	rep, err := m.OpenBeside(ctx, h.m, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.KeepState(); err != nil {
		t.Fatal(err)
	}
	rep.Switch(true)
	h.stop()
	if err := rep.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	n.cancel = cancel
	go func() { n.done <- m.Run(rctx) }()
	t.Cleanup(n.stop)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	report, kept := rep.Kept(wctx)
	if !kept {
		t.Fatal("the state was not kept")
	}
	return n, report
}

// TestReloadKeepsTimers: a countdown at 3 s of 10 s when the behavior is
// reloaded fires 7 s later, in the new version; so does a nested state's
// own, and the onexec tick keeps its phase. The new version's onentry
// does not run for the state it was already in.
func TestReloadKeepsTimers(t *testing.T) {
	src := func(v string) string {
		return doc("", `<state name="外">
  <onentry>`+msg("外 "+v)+`</onentry>
  <ontimeout timeout="10">`+msg("外 timeout "+v)+`</ontimeout>
  <state name="内">
    <onentry>`+msg("内 "+v)+`</onentry>
    <ontimeout timeout="4">`+msg("内 timeout "+v)+`</ontimeout>
  </state>
</state>`)
	}
	h := start(t, src("v1"))
	if diff := cmp.Diff([]string{"chat:外 v1", "chat:内 v1"}, h.sends()); diff != "" {
		t.Fatalf("start (-want +got):\n%s", diff)
	}
	h.advance(3 * time.Second)
	n, report := reloadKeeping(t, h, src("v2"))
	if len(report) != 0 {
		t.Errorf("not carried over: %q", report)
	}
	n.settle()
	if got := n.sends(); len(got) != 0 {
		t.Fatalf("the kept states' onentry ran: %q", got)
	}
	n.advance(999 * time.Millisecond)
	if got := n.sends(); len(got) != 0 {
		t.Fatalf("fired early: %q", got)
	}
	n.advance(time.Millisecond) // 内's 4 s
	if diff := cmp.Diff([]string{"chat:内 timeout v2"}, n.sends()); diff != "" {
		t.Fatalf("at 4 s (-want +got):\n%s", diff)
	}
	n.advance(4 * time.Second) // 内's again, 4 s later
	if diff := cmp.Diff([]string{"chat:内 timeout v2"}, n.sends()); diff != "" {
		t.Fatalf("at 8 s (-want +got):\n%s", diff)
	}
	n.advance(2 * time.Second) // 外's 10 s
	if diff := cmp.Diff([]string{"chat:外 timeout v2"}, n.sends()); diff != "" {
		t.Fatalf("at 10 s (-want +got):\n%s", diff)
	}
}

// TestReloadKeepsStackAndGlobals: the push stack comes back by state
// names, the plain globals (a table in a table, eSEAT's self) with their
// values, a function the new version makes is its own; one it does not
// make, and a table that holds itself, are reported.
func TestReloadKeepsStackAndGlobals(t *testing.T) {
	src := func(v string) string {
		g := `<script>count = 0; function greet() return "` + v + `" end</script>`
		if v == "v1" {
			g = `<script>count = 0; function greet() return "v1" end; function gone() end</script>`
		}
		return doc(g, `<state name="a">`+
			rule("", `<key>push</key><script>count = count + 1; visitor = {name = "山田", tags = {"vip", 2}}; self.x = 7; loop = {}; loop.me = loop</script><statetransition func="push">b</statetransition>`)+
			`</state><state name="b">`+
			rule("", `<key>pop</key><statetransition func="pop"/>`)+
			rule("", `<key>show</key><script>seat.send("chat", greet() .. " " .. count .. " " .. visitor.name .. " " .. visitor.tags[1] .. visitor.tags[2] .. " " .. self.x)</script>`)+
			`</state>`)
	}
	h := start(t, src("v1"))
	h.event("chat", "push")
	h.take()
	n, report := reloadKeeping(t, h, src("v2"))
	want := []string{"global gone is a function, and the new version does not make it: not carried over",
		"global loop holds itself, and the new version does not make it: not carried over"}
	if diff := cmp.Diff(want, report); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if got := n.state(); got != "b" {
		t.Fatalf("state %q, want b", got)
	}
	n.event("chat", "show")
	if diff := cmp.Diff([]string{"chat:v2 1 山田 vip2 7"}, n.sends()); diff != "" {
		t.Errorf("globals (-want +got):\n%s", diff)
	}
	n.event("chat", "pop")
	if got := n.state(); got != "a" {
		t.Errorf("after pop: state %q, want a", got)
	}
	if !strings.Contains(strings.Join(n.logged(0), "\n"), "reload: not carried over") {
		t.Errorf("the log does not say what was not carried over")
	}
}

// TestReloadKeepsHistory: a deep history recorded before the reload
// brings the dialogue back after it; a state that is gone is reported
// and its parent entered anew.
func TestReloadKeepsHistory(t *testing.T) {
	src := doc("", `<state name="会話" initial="待機">
  <history name="続き" type="deep"/>
  <rule><key>中断</key><statetransition>中断</statetransition></rule>
  <state name="待機"><rule><key>こんにちは</key><statetransition>接客</statetransition></rule></state>
  <state name="接客" initial="用件">
    <state name="用件"><onentry>`+msg("用件")+`</onentry><rule><key>名前</key><statetransition>確認</statetransition></rule></state>
    <state name="確認"><onentry>`+msg("確認")+`</onentry></state>
  </state>
</state>
<state name="中断"><rule><key>再開</key><statetransition>続き</statetransition></rule></state>`)
	h := start(t, src)
	h.event("chat", "こんにちは")
	h.event("chat", "名前")
	h.event("chat", "中断")
	h.take()
	n, report := reloadKeeping(t, h, src)
	if len(report) != 0 {
		t.Errorf("not carried over: %q", report)
	}
	n.event("chat", "再開")
	if got := n.state(); got != "確認" {
		t.Fatalf("history brought back %q, want 確認", got)
	}
	n.take()
	// 確認 gone: the state around it, 接客, entered anew at 用件.
	n2, report := reloadKeeping(t, n, strings.NewReplacer(`"確認"`, `"確かめ"`, `>確認<`, `>確かめ<`).Replace(src))
	if diff := cmp.Diff([]string{"state 確認 is gone: entered 接客, the state around it"}, report); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if got := n2.state(); got != "用件" {
		t.Errorf("state %q, want 用件", got)
	}
	if diff := cmp.Diff([]string{"chat:用件"}, n2.sends()); diff != "" {
		t.Errorf("用件's onentry (-want +got):\n%s", diff)
	}
}

// TestReloadKeepsAFlatBehavior: a flat behavior goes on in its state,
// whose countdown keeps its time left, without its onentry; the onexec
// ticks keep their phase.
func TestReloadKeepsAFlatBehavior(t *testing.T) {
	src := func(v string) string {
		return doc("", `<state name="a">`+rule("", `<key>go</key><statetransition>b</statetransition>`)+`</state>
<state name="b"><onentry>`+msg("b "+v)+`</onentry><ontimeout timeout="10">`+msg("b timeout "+v)+`</ontimeout>
<onexec>`+msg("tick "+v)+`</onexec></state>`)
	}
	h := start(t, strings.Replace(src("v1"), `name="t"`, `name="t" rate="0.25"`, 1))
	h.event("chat", "go")
	h.advance(3 * time.Second)
	h.take()
	n, report := reloadKeeping(t, h, strings.Replace(src("v2"), `name="t"`, `name="t" rate="0.25"`, 1))
	if len(report) != 0 {
		t.Errorf("not carried over: %q", report)
	}
	if got := n.state(); got != "b" {
		t.Fatalf("state %q, want b", got)
	}
	n.advance(999 * time.Millisecond)
	if got := n.sends(); len(got) != 0 {
		t.Fatalf("at 3.999 s: %q", got)
	}
	n.advance(time.Millisecond) // the tick, every 4 s from the entry
	if diff := cmp.Diff([]string{"chat:tick v2"}, n.sends()); diff != "" {
		t.Fatalf("at 4 s (-want +got):\n%s", diff)
	}
	n.advance(6 * time.Second) // 8 s: a tick; 10 s: the timeout
	if diff := cmp.Diff([]string{"chat:tick v2", "chat:b timeout v2"}, n.sends()); diff != "" {
		t.Fatalf("at 10 s (-want +got):\n%s", diff)
	}
}
