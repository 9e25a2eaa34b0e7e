package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"
)

func msg(text string) string { return `<message sendto="chat">` + text + `</message>` }

func rule(attrs, body string) string { return "<rule " + attrs + ">" + body + "</rule>\n" }

func TestMatchingTableOfSpec(t *testing.T) {
	// SEATML §5: state rules he, hello, num\d+, in that order.
	h := start(t, doc("", `<state name="s">`+
		rule("", "<key>he</key>"+msg("he"))+
		rule("", "<key>hello</key>"+msg("hello"))+
		rule("", `<key>num\d+</key>`+msg("num"))+
		"</state>"))
	cases := []struct{ text, fires string }{
		{"hello", "hello"},       // exact pass beats the earlier prefix he
		{"hex", "he"},            // prefix
		{"hello,world", "hello"}, // L = hello
		{"num42", "num"},         // pattern
		{"xhello", ""},           // anchored at the start
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			h.take()
			h.event("chat", c.text)
			var want []string
			if c.fires != "" {
				want = []string{"chat:" + c.fires}
			}
			if diff := cmp.Diff(want, h.sends()); diff != "" {
				t.Errorf("event %q (-want +got):\n%s", c.text, diff)
			}
		})
	}
}

func TestScopeOrder(t *testing.T) {
	// §5 step 2: state+source, state, general+source, general.
	all := func(skip string) string {
		general := ""
		if skip != "general-src" {
			general += rule(`source="chat"`, "<key>x</key>"+msg("general-src"))
		}
		if skip != "general" {
			general += rule("", "<key>x</key>"+msg("general"))
		}
		state := `<state name="s">`
		if skip != "state" {
			state += rule("", "<key>x</key>"+msg("state"))
		}
		if skip != "state-src" {
			state += rule(`source="chat"`, "<key>x</key>"+msg("state-src"))
		}
		return doc(general, state+"</state>")
	}
	for _, c := range []struct{ skip, want string }{
		{"", "state-src"},
		{"state-src", "state"},
		{"state", "state-src"},
	} {
		t.Run("without "+c.skip, func(t *testing.T) {
			h := start(t, all(c.skip))
			h.event("chat", "x")
			if diff := cmp.Diff([]string{"chat:" + c.want}, h.sends()); diff != "" {
				t.Error(diff)
			}
		})
	}
	t.Run("general rules after the state's", func(t *testing.T) {
		h := start(t, doc(rule(`source="chat"`, "<key>g</key>"+msg("general-src"))+rule("", "<key>g</key>"+msg("general")),
			`<state name="s">`+rule("", "<key>other</key>"+msg("state"))+`</state>`))
		h.event("chat", "g")
		h.event("other", "g")
		if diff := cmp.Diff([]string{"chat:general-src", "chat:general"}, h.sends()); diff != "" {
			t.Error(diff)
		}
	})
}

func TestSourceRestrictsRule(t *testing.T) {
	// eSEAT difference 5: a source= rule fires only for its adaptor; a key's
	// own source overrides the rule's.
	h := start(t, doc("", `<state name="s">`+
		rule(`source="chat"`, "<key>a</key>"+msg("a"))+
		rule(`source="chat"`, `<key>b</key><key source="other">c</key>`+msg("bc"))+
		"</state>"))
	h.event("other", "a")
	h.event("chat", "a")
	h.event("other", "b")
	h.event("chat", "c")
	h.event("other", "c")
	if diff := cmp.Diff([]string{"chat:a", "chat:bc"}, h.sends()); diff != "" {
		t.Error(diff)
	}
}

func TestExactBeforePatternAcrossDeclarationOrder(t *testing.T) {
	h := start(t, doc("", `<state name="s">`+
		rule("", `<key>h\w+</key>`+msg("pattern"))+
		rule("", "<key>hi</key>"+msg("exact"))+
		"</state>"))
	h.event("chat", "hi")
	h.event("chat", "hid")
	if diff := cmp.Diff([]string{"chat:exact", "chat:pattern"}, h.sends()); diff != "" {
		t.Error(diff)
	}
}

func TestFirstTrueCondFires(t *testing.T) {
	// eSEAT difference 7: a false cond passes to the next candidate.
	h := start(t, doc(`<var name="muted" value="yes"/>`, `<state name="s">`+
		rule("", "<key>go</key><cond>muted == 'no'</cond>"+msg("first"))+
		rule("", "<key>go</key><cond>event.text == 'go now'</cond>"+msg("second"))+
		rule("", "<key>go</key>"+msg("third"))+
		"</state>"))
	h.event("chat", "go now")
	h.event("chat", "go")
	if diff := cmp.Diff([]string{"chat:second", "chat:third"}, h.sends()); diff != "" {
		t.Error(diff)
	}
}

func TestCondTruthAndErrors(t *testing.T) {
	h := start(t, doc("", `<state name="s">`+
		rule("", "<key>zero</key><cond>0</cond>"+msg("zero is true"))+
		rule("", "<key>empty</key><cond>''</cond>"+msg("empty is true"))+
		rule("", "<key>nil</key><cond>nil</cond>"+msg("nil is false"))+
		rule("", "<key>boom</key><cond>undefined_fn()</cond>"+msg("error is false"))+
		rule("", "<key>boom</key>"+msg("next after error"))+
		"</state>"))
	for _, e := range []string{"zero", "empty", "nil", "boom"} {
		h.event("chat", e)
	}
	if diff := cmp.Diff([]string{"chat:zero is true", "chat:empty is true", "chat:next after error"}, h.sends()); diff != "" {
		t.Error(diff)
	}
	// The cond is on line 10 of the file.
	want := []string{"cond failed: t.seatml:10: attempt to call undefined_fn, which is nil (a global not defined when this ran; check its spelling)"}
	if diff := cmp.Diff(want, h.logged(zapcore.ErrorLevel)); diff != "" {
		t.Errorf("logged errors (-want +got):\n%s", diff)
	}
}

func TestRuleTriedOncePerEvent(t *testing.T) {
	h := start(t, doc(`<script>tries = 0; function bump() tries = tries + 1; return false end</script>`, `<state name="s">`+
		rule("", "<key>(ab|a\\w)</key><cond>bump()</cond>")+
		rule("", `<key>count</key><script sendto="chat">return tries</script>`)+
		"</state>"))
	h.take()
	h.event("chat", "ab")
	h.event("chat", "count")
	if diff := cmp.Diff([]string{"chat:1"}, h.sends()); diff != "" {
		t.Error(diff)
	}
}

func TestCommaTruncation(t *testing.T) {
	h := start(t, doc("", `<state name="s">`+
		rule("", `<key>yes$</key><script sendto="chat">return rtc_in_data .. "|" .. event.text .. "|" .. event.key</script>`)+
		"</state>"))
	h.event("chat", "yes,0.93")
	h.event("chat", "yes 0.93")
	if diff := cmp.Diff([]string{"chat:yes,0.93|yes,0.93|yes$"}, h.sends()); diff != "" {
		t.Error(diff)
	}
}

func TestDataRules(t *testing.T) {
	h := start(t, doc(rule("", msg("general-data"))+rule(`source="other"`, msg("general-other")),
		`<state name="s">`+
			rule("", "<key>k</key>"+msg("keyed"))+
			rule("", "<key>go</key><statetransition>t</statetransition>")+
			rule(`source="chat"`, msg("state-data"))+
			rule("", `<cond>event.text == "skip"</cond>`+msg("never for others"))+
			"</state>"+
			`<state name="t">`+rule("", "<cond>event.text == 'back'</cond><statetransition>s</statetransition>")+rule("", msg("t-data"))+`</state>`))
	h.take()
	h.event("chat", "k")
	if diff := cmp.Diff([]string{"chat:keyed", "chat:state-data", "chat:general-data"}, h.sends()); diff != "" {
		t.Errorf("keyed then data rules (-want +got):\n%s", diff)
	}
	h.event("other", "anything")
	if diff := cmp.Diff([]string{"chat:general-data", "chat:general-other"}, h.sends()); diff != "" {
		t.Errorf("data rules by source (-want +got):\n%s", diff)
	}
	// A keyed rule that changes state skips the data rules.
	h.event("chat", "go")
	if diff := cmp.Diff([]string(nil), h.sends()); diff != "" {
		t.Errorf("after a transition (-want +got):\n%s", diff)
	}
	// A data rule that changes state ends the data step.
	h.event("chat", "back")
	if got := h.state(); got != "s" {
		t.Errorf("state = %q, want s", got)
	}
	if diff := cmp.Diff([]string(nil), h.sends()); diff != "" {
		t.Errorf("after a data-rule transition (-want +got):\n%s", diff)
	}
}

func TestUnmatchedIsCountedNotAnError(t *testing.T) {
	h := start(t, doc("", `<state name="s">`+rule("", "<key>a</key>"+msg("a"))+"</state>"))
	h.event("chat", "zzz")
	if got := h.sends(); len(got) != 0 {
		t.Errorf("sends = %q", got)
	}
	var n uint64
	_ = h.m.Sync(t.Context(), func() { n = h.m.b.(*seatmlBehavior).unmatched })
	if n != 1 {
		t.Errorf("unmatched = %d, want 1", n)
	}
	if errs := h.logged(zapcore.WarnLevel); len(errs) != 0 {
		t.Errorf("unmatched event logged as a problem: %q", errs)
	}
}

func TestJapaneseKeysFire(t *testing.T) {
	// Issue 11: key expansion walked keys byte by byte, so no key with
	// non-ASCII text ever fired.
	h := start(t, doc("", `<state name="待機">`+
		rule("", "<key>こんにちは</key>"+msg("挨拶"))+
		rule("", "<key>(はい|いいえ)$</key>"+`<script>seat.send("chat", "答え:" .. event.key)</script>`)+
		rule("", "<key>お願い[します]$</key>"+msg("承知"))+
		rule("", "<key>さよう.ら</key>"+msg("別れ"))+
		rule("", "<key>^おはよう$</key>"+msg("朝"))+
		rule("", `<key>名前は\p{Han}+です</key>`+`<script>seat.send("chat", "全文:" .. event.text)</script>`)+
		"</state>"))
	cases := []struct{ text, want string }{
		{"こんにちは", "chat:挨拶"},
		{"こんにちは、ロボットさん", "chat:挨拶"}, // a prefix
		{"はい,0.93", "chat:答え:はい$"},  // a speech result: L = はい
		{"いいえ", "chat:答え:いいえ$"},
		{"お願い", "chat:承知"},
		{"お願いします", "chat:承知"},
		{"さようなら", "chat:別れ"},
		{"おはよう", "chat:朝"},
		{"名前は山田です,0.8", "chat:全文:名前は山田です,0.8"},
		{"おはようございます", ""}, // ^おはよう$ needs the whole text
		{"はいはい", ""},      // (はい|いいえ)$ likewise
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			h.take()
			h.event("chat", c.text)
			var want []string
			if c.want != "" {
				want = []string{c.want}
			}
			if diff := cmp.Diff(want, h.sends()); diff != "" {
				t.Errorf("event %q (-want +got):\n%s", c.text, diff)
			}
		})
	}
}

func TestJapaneseWidgets(t *testing.T) {
	// Widget labels and ids in Japanese: a button's own actions, a button
	// without actions going through keyed matching on its label, and an
	// input whose contents a message sends.
	h := start(t, doc("", `<state name="受付">
<button label="はい">`+msg("了解")+`</button>
<button label="いいえ、結構です"/>
<input id="お名前"><message sendto="chat" input="受付:お名前"/></input>
`+rule(`source="gui"`, `<key>いいえ、結構です</key>`+msg("承知しました"))+`</state>`))
	h.take()
	h.gui("はい", "")
	h.gui("いいえ、結構です", "")
	h.gui("お名前", "山田太郎")
	want := []string{"chat:了解", "chat:承知しました", "chat:山田太郎"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if w := h.logged(zapcore.WarnLevel); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}
