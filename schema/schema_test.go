package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSuggest(t *testing.T) {
	cands := []string{"state", "general", "role", "rule", "chat", "gui", "受付", "ご案内中", "音声認識", "名前"}
	for _, c := range []struct{ name, want string }{
		{"stat", "state"},
		{"rol", "role"},
		{"rulle", "rule"},
		{"caht", "chat"},
		{"STATE", "state"},
		{"gu", "gui"},
		{"xyz", ""},
		{"state", ""}, // an exact name is no suggestion
		{"generalities", ""},
		// Distances count characters: one Japanese character off is close.
		{"受け", "受付"},
		{"ご案内", "ご案内中"},
		{"音声認織", "音声認識"},
		{"終了", ""},
		// A word in kana for one in kanji is two characters off.
		{"名まえ", "名前"},
		{"音せい認識", "音声認識"},
		// A part of a name, when only one candidate has it.
		{"transition", ""}, // not among these candidates
	} {
		if got := Suggest(c.name, cands); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name  string
		cands []string
		want  string
	}{
		{"transition", []string{"message", "statetransition", "script", "log"}, "statetransition"},
		{"onconnected", []string{"onconnect", "ondisconnect", "onentry"}, "onconnect"},
		{"tran", []string{"statetransition", "transit"}, ""}, // two: no guess
		{"log", []string{"catalog"}, ""},                     // too short to guess from a part
		{"generalities", []string{"general"}, ""},            // more than any candidate
		{"abc", []string{"axy"}, ""},                         // two letters off a short ASCII name: no guess
		{"名まえ", []string{"名前", "名まい"}, "名まい"},                // the closer one
		{"なまえ", []string{"名前"}, ""},                          // nothing shared
		{"名まえ", []string{"名前", "受付"}, "名前"},
		{"名まえ", []string{"名前", "名ふだ"}, ""}, // two as close: no guess
	} {
		if got := Suggest(c.name, c.cands); got != c.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", c.name, c.cands, got, c.want)
		}
	}
	if got := DidYouMean("rol", cands, "%q"); got != `; did you mean "role"?` {
		t.Errorf("DidYouMean = %q", got)
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"待機", "名前"}, "待機, 名前"},
		{[]string{"a", "b", "c", "d"}, "a, b, … and 2 more"},
	} {
		if got := Names(c.names, 2); got != c.want {
			t.Errorf("Names(%q) = %q, want %q", c.names, got, c.want)
		}
	}
}

func TestListSortAndFormat(t *testing.T) {
	var l List
	l.Errorf(Pos{File: "b.seatml", Line: 1, Col: 1}, "in b")
	l.Warnf(Pos{File: "a.seatml", Line: 10, Col: 2}, "late %s", "warning")
	l.Errorf(Pos{File: "a.seatml", Line: 2, Col: 9}, "second")
	l.Errorf(Pos{File: "a.seatml", Line: 2, Col: 3}, "first")
	l.Errorf(Pos{File: "a.seatml", Line: 2, Col: 3}, "first") // a repeat
	l.Sort()
	want := "a.seatml:2:3: first\na.seatml:2:9: second\na.seatml:10:2: warning: late warning\nb.seatml:1:1: in b"
	if diff := cmp.Diff(want, l.Error()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if l.Err() == nil || !l.HasErrors() {
		t.Error("a list with errors reports none")
	}
	warnings := List{{Pos: Pos{File: "x", Line: 1}, Severity: Warning, Msg: "w"}}
	if warnings.Err() != nil {
		t.Error("warnings alone are an error")
	}
	if got := (Pos{File: "f", Line: 3}).String(); got != "f:3" {
		t.Errorf("Pos without a column = %q", got)
	}
	if got := (Pos{File: "f", Line: 1, Col: 5}).Advance("ab\ncd"); got != (Pos{File: "f", Line: 2, Col: 3}) {
		t.Errorf("Advance = %v", got)
	}
}

func TestCheckValues(t *testing.T) {
	for _, c := range []struct {
		kind  Kind
		value string
		ok    bool
	}{
		{PosFloat, "2.5", true}, {PosFloat, "0", false}, {PosFloat, "Inf", false}, {PosFloat, "1e3", true},
		{PosInt, "3", true}, {PosInt, "3.0", false}, {NonNegInt, "0", true}, {NonNegInt, "-1", false},
		{Port, "0", true}, {Port, "65535", true}, {Port, "65536", false},
		{Color, "red", true}, {Color, "#abc", true}, {Color, "#abcd", false}, {Color, "#00ff00", true},
		{Identifier, "greeting", true}, {Identifier, "_x1", true}, {Identifier, "end", false}, {Identifier, "a-b", false},
	} {
		if got := checkValue(AttrSpec{Kind: c.kind}, c.value) == ""; got != c.ok {
			t.Errorf("kind %d value %q: ok = %v, want %v", c.kind, c.value, got, c.ok)
		}
	}
}

func TestCharCol(t *testing.T) {
	for _, c := range []struct {
		line    string
		byteCol int
		want    int
	}{
		{"abc", 1, 1},
		{"abc", 3, 3},
		{"あいx", 7, 3}, // x is byte 7, character 3
		{"あいx", 4, 2}, // the first byte of い
		{"あいx", 5, 2}, // inside い
		{"ab", 4, 4},  // past the end
	} {
		if got := CharCol(c.line, c.byteCol); got != c.want {
			t.Errorf("CharCol(%q, %d) = %d, want %d", c.line, c.byteCol, got, c.want)
		}
	}
}

func TestPositionsCountCharacters(t *testing.T) {
	src := "<seatml>\n  <state name=\"挨拶\" bad=\"x\"/>\n</seatml>\n"
	root, diags := ParseXML("j.seatml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	st := root.Children[0]
	bad, _ := st.Attr("bad")
	// `  <state name="挨拶" bad`: "bad" starts at character 20 (byte 24).
	if bad.Pos.Col != 20 {
		t.Errorf("attribute bad at column %d, want 20 (characters, not bytes)", bad.Pos.Col)
	}
	if got := (Pos{Line: 1, Col: 1}).Advance("挨拶\nこんにちは"); got.Line != 2 || got.Col != 6 {
		t.Errorf("Advance = %d:%d, want 2:6", got.Line, got.Col)
	}
}

// TestTopicProblem: MQTT 3.1.1's rules for topic filters and for topics
// published to (where a whole "+" level is a topic session's to fill).
func TestTopicProblem(t *testing.T) {
	for _, c := range []struct {
		topic  string
		filter bool
		bad    bool
	}{
		{"robot/+/asr", true, false}, {"robot/#", true, false}, {"#", true, false}, {"+", true, false},
		{"ロボット/+/音声", true, false}, {"$share/g/robot/+/asr", true, false}, {"robot//asr", true, false},
		{"robot/+x/asr", true, true}, {"robot/#/x", true, true}, {"robot/a#", true, true}, {"robot/x+", true, true},
		{"a\x00b", true, true},
		{"robot/+/say", false, false}, {"robot/7/say", false, false},
		{"robot/#", false, true}, {"robot/a#", false, true}, {"robot/x+", false, true},
	} {
		if got := TopicProblem(c.topic, c.filter); (got != "") != c.bad {
			t.Errorf("TopicProblem(%q, filter %v) = %q", c.topic, c.filter, got)
		}
	}
}
