package schema

import (
	"strings"
	"testing"
)

// TestSnippet: the line of code of a run-time error, numbered, its
// indentation left out, with a caret under the column given, counted in
// characters, a wide one (かな, 漢字) taking two columns; no caret for
// column 0; Text puts it under the message, indented.
func TestSnippet(t *testing.T) {
	for _, c := range []struct {
		line int
		code string
		col  int
		want string
	}{
		{7, "    seat.replly(x)", 5, "7 | seat.replly(x)\n  | ^"},
		{12, "\tlocal s = \"こんにちは\" .. nosuch", 23, "12 | local s = \"こんにちは\" .. nosuch\n   | " + strings.Repeat(" ", 26) + "^"},
		{3, "  x = y + 1", 0, "3 | x = y + 1"},
	} {
		if got := Snippet(c.line, c.code, c.col); got != c.want {
			t.Errorf("Snippet(%d, %q, %d):\n%s\nwant\n%s", c.line, c.code, c.col, got, c.want)
		}
	}
	d := Diagnostic{Pos: Pos{File: "受付.seatml", Line: 7}, Msg: "attempt to call seat.replly, which is nil", Detail: Snippet(7, "seat.replly(x)", 1)}
	if got, want := d.Text(), "受付.seatml:7: attempt to call seat.replly, which is nil\n    7 | seat.replly(x)\n      | ^"; got != want {
		t.Errorf("Text:\n%s\nwant\n%s", got, want)
	}
	if d.Detail = ""; d.Text() != d.Error() {
		t.Errorf("Text without a detail: %q", d.Text())
	}
}

// TestSnippetCaretAfterEmojiAndTab: the caret stands under the
// column it names as a terminal shows the line: after an emoji outside
// the ranges isWide knows (🤖 U+1F916, East Asian Width W: two columns),
// and after a tab inside the line (kept as a tab in the caret line, so
// that it reaches the same tab stop).
func TestSnippetCaretAfterEmojiAndTab(t *testing.T) {
	// `s = "🤖" .. x`: x is the 12th character; before it 11 characters, one of them two columns wide.
	if got, want := Snippet(3, `s = "🤖" .. x`, 12), "3 | s = \"🤖\" .. x\n  | "+strings.Repeat(" ", 12)+"^"; got != want {
		t.Errorf("emoji:\n got %q\nwant %q", got, want)
	}
	// `a\t= x`: x is the 5th character, after a tab.
	got := Snippet(3, "a\t= x", 5)
	caret := got[strings.Index(got, "\n")+1:]
	if !strings.Contains(caret, "\t") {
		t.Errorf("tab:\n%s\nthe caret line has no tab: it stands under %q on a terminal (8-column tab stops), not under x", got, "\t")
	}
}
