package interpreter

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// TestAppendedTextIsBounded appends a Japanese line per event to a text
// widget, well past its 64 KiB, with a page open through the real web
// adaptor: the kept text is bounded, starts at a line, ends with the last
// line, and the open page and a page opened afterwards show the same.
func TestAppendedTextIsBounded(t *testing.T) {
	h := start(t, doc(`<adaptor name="panel" type="web" port="0"/>`, `<state name="s">
<text id="log"></text>
<rule source="chat"><key>add \d+</key><script>seat.append_text("s:log", "受付の記録 " .. event.text:sub(5) .. "\n")</script></rule>
<rule source="chat"><key>size</key><script sendto="chat">local t = seat.get_text("s:log"); return #t .. "|" .. t:sub(1, 60) .. "|" .. t:sub(-30)</script></rule>
</state>`))
	h.take()
	url := "ws://" + addrOf(t, h, "panel") + "/ws"
	open := func() *websocket.Conn {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// page reads frames until the text's value is want, applying them as
	// the page's script does.
	page := func(c *websocket.Conn, want string) string {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		var value string
		for value != want {
			var f struct {
				Type, ID, Op string
				Value        string
			}
			if err := c.ReadJSON(&f); err != nil {
				t.Fatalf("page: %v (value has %d bytes, want %d)", err, len(value), len(want))
			}
			if f.Type != "gui" || f.ID != "s:log" {
				continue
			}
			switch f.Op {
			case "set":
				value = f.Value
			case "append":
				value += f.Value
			case "clear":
				value = ""
			}
		}
		return value
	}
	first := open()
	page(first, "")    // the snapshot
	const lines = 5000 // about 105 KiB of lines
	for i := range lines {
		h.event("chat", fmt.Sprintf("add %d", i))
	}
	h.sync()
	h.take()
	h.event("chat", "size")
	h.sync()
	got := h.sends()
	if len(got) != 1 {
		t.Fatalf("sends %q", got)
	}
	parts := strings.SplitN(strings.TrimPrefix(got[0], "chat:"), "|", 3)
	var n int
	fmt.Sscan(parts[0], &n)
	last := fmt.Sprintf("受付の記録 %d\n", lines-1)
	if n > maxWidgetText || n < keptWidgetText/2 || !strings.HasPrefix(parts[1], "受付の記録 ") || !strings.HasSuffix(parts[2], last) {
		t.Errorf("kept text: %d bytes, starting %q, ending %q", n, parts[1], parts[2])
	}
	var kept string
	h.m.Sync(t.Context(), func() { kept = h.m.b.(*seatmlBehavior).widgets.values["s:log"] })
	if !utf8.ValidString(kept) || len(kept) != n {
		t.Errorf("kept text: valid UTF-8 %v, %d bytes (Lua saw %d)", utf8.ValidString(kept), len(kept), n)
	}
	if v := page(first, kept); v != kept {
		t.Errorf("the open page shows %d bytes, the behavior keeps %d", len(v), len(kept))
	}
	if v := page(open(), kept); v != kept {
		t.Errorf("a new page shows %d bytes, the behavior keeps %d", len(v), len(kept))
	}
}

func TestKeepTail(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"aaaa\nbbbbbbbbbbbbbbbb", 17, "bbbbbbbbbbbbbbbb"}, // a line start in the first quarter
		{"aaaaaaaaaa\nbbbbbbbb", 12, "aaa\nbbbbbbbb"},      // no line start in the first quarter
		{"日本語テキスト", 8, "スト"},                               // never inside a character
	} {
		if got := keepTail(tc.s, tc.n); got != tc.want {
			t.Errorf("keepTail(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// TestInputValueAttribute: eSEAT files give an entry's first text as
// value="…"; the element's text wins when both are given, with a warning.
func TestInputValueAttribute(t *testing.T) {
	h := start(t, doc("", `<state name="s">
<input id="name" width="50" value="山田"/>
<input id="both" value="other">text</input>`+
		rule("", `<key>read</key><script sendto="chat">return seat.get_entry("s:name") .. "/" .. seat.get_entry("s:both")</script>`)+
		`</state>`))
	h.take()
	h.event("chat", "read")
	h.sync()
	if got := h.sends(); len(got) != 1 || got[0] != "chat:山田/text" {
		t.Errorf("sends %q", got)
	}
	var warned bool
	for _, d := range h.m.prog.Diagnostics {
		warned = warned || strings.Contains(d.Error(), `value="other"; the text is its first value`)
	}
	if !warned {
		t.Errorf("no warning for text and value both given: %v", h.m.prog.Diagnostics)
	}
}

// TestSelfTable: eSEAT scripts keep their values on self; in seat, self is
// a table of the behavior's own.
func TestSelfTable(t *testing.T) {
	h := start(t, doc(`<script>self._cnt = 0</script>`, `<state name="s">`+
		rule("", `<key>count</key><script sendto="chat">self._cnt = self._cnt + 1; self.last = event.text; return self._cnt .. " " .. self.last</script>`)+
		`</state>`))
	h.take()
	h.event("chat", "count")
	h.event("chat", "count")
	h.sync()
	if got := h.sends(); len(got) != 2 || got[1] != "chat:2 count" {
		t.Errorf("sends %q", got)
	}
}

// TestSpeechResults: a recogniser sends "text,confidence"; scripts get the
// lookup text and the confidence as fields, and a pattern group's match as
// event.captures, without changing §5's exact-then-pattern order.
func TestSpeechResults(t *testing.T) {
	h := start(t, doc("", `<state name="s">`+
		rule("", `<key>(\d+)個</key><script sendto="chat">return event.captures[1] .. "|" .. event.lookup .. "|" .. tostring(event.confidence)</script>`)+
		rule("", `<key>\d+$</key><script sendto="chat">return tostring(tonumber(event.lookup) * 2) .. "|" .. tostring(event.confidence)</script>`)+
		rule("", `<key>(はい|ええ)</key><script sendto="chat">return "yes " .. event.lookup .. " " .. #event.captures</script>`)+
		rule("", `<key>(\S+)です</key><script sendto="chat">return "desu " .. event.captures[1]</script>`)+
		rule("", `<key>山田です</key><script sendto="chat">return "exact"</script>`)+
		`</state>`))
	h.take()
	for _, text := range []string{"3個,0.91", "21,0.5", "はい,0.93", "山田です,0.8", "田中です", "42"} {
		h.event("chat", text)
	}
	h.sync()
	want := []string{"chat:3|3個|0.91", "chat:42|0.5", "chat:yes はい 0", "chat:exact", "chat:desu 田中", "chat:84|nil"}
	if got := h.sends(); !slices.Equal(got, want) {
		t.Errorf("sends\n%q\nwant\n%q", got, want)
	}
}
