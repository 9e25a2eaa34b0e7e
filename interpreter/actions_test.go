package interpreter

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
)

func (h *harness) gui(id, text string) {
	h.t.Helper()
	if err := h.m.Deliver(context.Background(), adaptors.Event{Source: "gui", ID: id, Text: text}); err != nil {
		h.t.Fatal(err)
	}
	h.sync()
}

func TestWidgetEvents(t *testing.T) {
	h := start(t, doc(rule(`source="gui"`, msg("gui data")),
		`<state name="s">
<button label="OK">`+msg("clicked")+`</button>
<button label="Plain"/>
<input id="say"><message sendto="chat" input="s:say"/></input>
<text id="notes"/>`+
			rule(`source="gui"`, `<key>Plain</key><script sendto="chat">return "plain via rules: " .. event.key .. "/" .. event.text</script>`)+
			rule(`source="gui"`, `<key>notes</key><script sendto="chat">return "notes: " .. seat.get_text("s:notes")</script>`)+
			`</state>`))
	h.take()
	h.gui("OK", "")
	h.gui("Plain", "")
	h.gui("say", "typed text")
	h.gui("notes", "a\nb")
	h.gui("missing", "") // a stale page: ignored, data rules included
	want := []string{
		"chat:clicked", "chat:gui data",
		"chat:plain via rules: Plain/Plain", "chat:gui data",
		"chat:typed text", "chat:gui data",
		"chat:notes: a\nb", "chat:gui data",
	}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	warns := h.logged(zapcore.WarnLevel)
	if len(warns) != 1 || warns[0] != "widget event for a widget the current state does not have" {
		t.Errorf("warnings %q", warns)
	}
}

func TestShell(t *testing.T) {
	h := start(t, doc("", `<state name="s">`+
		rule("", `<key>echo</key><shell sendto="chat">printf 'one\ntwo\n'</shell>`+msg("after"))+
		rule("", `<key>fail</key><shell>echo oops >&amp;2; exit 3</shell>`+msg("list goes on"))+
		rule("", `<key>slow</key><shell>sleep 30</shell>`+msg("not reached"))+
		`</state>`), func(o *Options) { o.ScriptTimeout = 200 * time.Millisecond })
	h.take()
	h.event("chat", "echo")
	h.event("chat", "fail")
	start := time.Now()
	h.event("chat", "slow")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("overrunning shell took %v; it must be killed at the time limit", d)
	}
	want := []string{"chat:one\ntwo", "chat:after", "chat:list goes on"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	want = []string{"shell command wrote to standard error", "shell command failed", "shell command stopped: time limit exceeded"}
	if diff := cmp.Diff(want, h.logged(zapcore.WarnLevel)); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

// TestShellNoInjectionFromEventText sends event texts built to break out of
// a shell command; the command run is the file's text alone, so none of
// them creates its file, and none reaches the command's environment.
func TestShellNoInjectionFromEventText(t *testing.T) {
	dir := t.TempDir()
	h := start(t, doc("", `<state name="s">`+
		rule("", `<key>say .*</key><shell sendto="chat">echo said; env | grep -c pwned || true</shell>`)+
		`</state>`))
	h.take()
	attacks := []string{
		"say $(touch " + dir + "/pwned1)",
		"say `touch " + dir + "/pwned2`",
		"say ; touch " + dir + "/pwned3",
		"say ' ; touch " + dir + "/pwned4 ; '",
		"say \\\ntouch " + dir + "/pwned5",
		"say | touch " + dir + "/pwned6",
	}
	for _, a := range attacks {
		h.event("chat", a)
	}
	got := h.sends()
	for i, s := range got {
		if s != "chat:said\n0" {
			t.Errorf("attack %d answered %q, want the command's own output", i, s)
		}
	}
	if len(got) != len(attacks) {
		t.Errorf("%d answers for %d attacks", len(got), len(attacks))
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("event text reached a shell: %v", files)
	}
}

func TestShellRefusedWithoutFlag(t *testing.T) {
	src := doc("", `<state name="s">`+rule("", `<key>x</key><shell>true</shell>`)+`</state>`)
	if prog, diags := seatml.LoadBytes("t.seatml", []byte(src), seatml.LoadOptions{}); prog != nil || !strings.Contains(diags.Error(), "<shell> is disabled; start seat with --allow-shell") {
		t.Fatalf("shell loaded without --allow-shell: %v", diags)
	}
}

func TestIncludedRulesRun(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "lib", "more"), 0o755)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.seatml", doc("", `<state name="s"><rule file="lib/common.seatml:greet"/>`+rule("", "<key>own</key>"+msg("own"))+`</state><state name="t"/>`))
	write("lib/common.seatml", `<seatml><general name="c"><adaptor name="chat" type="socket" port="1"/></general>
<state name="first"/><state name="t"/>
<state name="greet">
<rule><key>hi</key><message sendto="chat">hello from common</message></rule>
<rule file="more/deep.seatml"/>
</state></seatml>`)
	write("lib/more/deep.seatml", `<seatml><general name="d"><adaptor name="chat" type="socket" port="1"/></general>
<state name="x">
<rule><key>deep</key><script execfile="deep.lua"/><statetransition>t</statetransition></rule>
</state><state name="t"/></seatml>`)
	write("lib/more/deep.lua", "seat.send('chat', 'from deep.lua')\n")
	prog, diags := seatml.Load(filepath.Join(dir, "main.seatml"), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	h := startProgram(t, prog)
	h.take()
	h.event("chat", "hi")
	h.event("chat", "own")
	h.event("chat", "deep")
	want := []string{"chat:hello from common", "chat:own", "chat:from deep.lua"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := h.state(); got != "t" {
		t.Errorf("state %q, want t", got)
	}
}

func TestEncodeAndIgnoredAdaptors(t *testing.T) {
	h := start(t, doc(`<adaptor name="rtc" type="provider"/>`, `<state name="s">`+
		rule("", `<key>sjis</key><message sendto="chat" encode="Shift_JIS">こんにちは</message>`)+
		rule("", `<key>euc</key><message sendto="chat" encode="euc-jp">はい</message>`)+
		rule("", `<key>rtc</key><message sendto="rtc">dropped</message>`+msg("after"))+
		rule(`source="rtc"`, msg("never"))+
		`</state>`))
	h.take()
	h.event("chat", "sjis")
	h.event("chat", "euc")
	h.event("chat", "rtc")
	want := []string{"chat:\x82\xb1\x82\xf1\x82\xc9\x82\xbf\x82\xcd", "chat:\xa4\xcf\xa4\xa4", "rtc:dropped", "chat:after"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if w := h.logged(zapcore.WarnLevel); len(w) != 0 {
		t.Errorf("a message to an ignored eSEAT adaptor must be dropped quietly; warnings %q", w)
	}
}

func TestEncodeAsPythonDoesAndNeverDrops(t *testing.T) {
	// Issue 11: 〜 or − in a Shift_JIS message dropped the whole message.
	// They encode as Python's codecs (eSEAT's) encode them; what no
	// Japanese encoding holds becomes "?", logged once per message.
	h := start(t, doc("", `<state name="s">`+
		rule("", `<key>wave</key><message sendto="chat" encode="shift_jis">10時〜12時、−5℃ ¥100</message>`)+
		rule("", `<key>euc</key><message sendto="chat" encode="EUC_JP">〜−‖¢£¬—</message>`)+
		rule("", `<key>emoji</key><message sendto="chat" encode="sjis">はい😀です</message>`)+
		`</state>`))
	h.take()
	h.event("chat", "wave")
	h.event("chat", "euc")
	h.event("chat", "emoji")
	h.event("chat", "emoji")
	// Python: "10時〜12時、−5℃ ¥100".encode("shift_jis"), and the euc_jp and
	// errors="replace" counterparts.
	want := []string{
		"chat:10\x8e\x9e\x81\x6012\x8e\x9e\x81\x41\x81\x7c5\x81\x8e \\100",
		"chat:\xa1\xc1\xa1\xdd\xa1\xc2\xa1\xf1\xa1\xf2\xa2\xcc\xa1\xbd",
		"chat:\x82\xcd\x82\xa2?\x82\xc5\x82\xb7",
		"chat:\x82\xcd\x82\xa2?\x82\xc5\x82\xb7",
	}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	warns := h.logged(zapcore.WarnLevel)
	if len(warns) != 1 || !strings.Contains(warns[0], `'😀' (U+1F600) cannot be encoded; sent as "?"`) {
		t.Errorf("warnings %q, want one for the emoji", warns)
	}
}

// TestMessagesWithNowhereToGo: what is logged for a message that cannot
// be delivered, as docs/seatml.md §6 says (issue 12: the docs and the code
// disagreed).
func TestMessagesWithNowhereToGo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close() // nothing listens: the client adaptor stays disconnected
	h := start(t, doc(`<adaptor name="up" type="socket" role="client" port="`+port+`"/>
<adaptor name="page" type="web" port="0"/>
<adaptor name="rtc" type="provider"/>`, `<state name="s">`+
		rule("", `<key>server</key><message sendto="chat">x</message>`)+
		rule("", `<key>web</key><message sendto="page">x</message>`)+
		rule("", `<key>client</key><message sendto="up">x</message>`)+
		rule("", `<key>rtc</key><message sendto="rtc">x</message>`)+
		`</state>`), func(o *Options) { o.Trace = nil }) // the traced path sends by name; the fast one by slot
	type entry struct{ level, msg string }
	for _, c := range []struct {
		key  string
		want entry
	}{
		{"server", entry{"debug", "no client connected; message dropped"}},
		{"web", entry{"debug", "no client connected; message dropped"}},
		{"client", entry{"warn", "message not sent: not connected"}},
		{"rtc", entry{"debug", "message to an adaptor seat does not run; dropped"}},
	} {
		n := h.logs.Len()
		h.event("chat", c.key)
		var got []entry
		for _, e := range h.logs.All()[n:] {
			if e.Message == "unmatched event" || e.Message == "rule fired" {
				continue
			}
			msg := e.Message
			if v, ok := e.ContextMap()["error"]; ok {
				msg += ": " + v.(string)
			}
			got = append(got, entry{e.Level.String(), msg})
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: logged %v, want %v", c.key, got, c.want)
		}
	}
}
