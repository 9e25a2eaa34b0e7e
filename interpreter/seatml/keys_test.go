package seatml

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandKeySpecExamples(t *testing.T) {
	// Every example of SEATML §4.
	cases := []struct {
		key  string
		want []string
	}{
		{"(go|run) [fast ]now", []string{"go now", "go fast now", "run now", "run fast now"}},
		{"a(b|c(d|e))f", []string{"abf", "acdf", "acef"}},
		{"[x[y]]z", []string{"z", "xz", "xyz"}},
		{"(a|b)(c|d)", []string{"ac", "ad", "bc", "bd"}},
		{"a[b]c[d]", []string{"ac", "acd", "abc", "abcd"}},
		{"(a|)b", []string{"ab", "b"}},
		{`num\d+`, []string{`num\d+`}},
		{`\(literal\)`, []string{`\(literal\)`}},
		{"(hello|hi)$", []string{"hello$", "hi$"}},
		// Keys are text, not bytes (issue 11: Japanese keys never fired).
		{"こんにちは", []string{"こんにちは"}},
		{"(はい|いいえ)", []string{"はい", "いいえ"}},
		{"お願い[します]", []string{"お願い", "お願いします"}},
		{"さよう.ら", []string{"さよう.ら"}},
		{"^おはよう$", []string{"^おはよう$"}},
		{`\。です`, []string{`\。です`}},
		{"(ｶﾀｶﾅ|漢字)[😀]", []string{"ｶﾀｶﾅ", "ｶﾀｶﾅ😀", "漢字", "漢字😀"}},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			got, err := ExpandKey(c.key)
			if err != nil {
				t.Fatalf("ExpandKey(%q): %v", c.key, err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("ExpandKey(%q) (-want +got):\n%s", c.key, diff)
			}
		})
	}
}

func TestExpandKeyErrors(t *testing.T) {
	cases := []struct {
		key    string
		offset int
		msg    string
	}{
		{"(hello|hi", 0, `unclosed "("`},
		{"say (a|b", 4, `unclosed "("`},
		{"x[y", 1, `unclosed "["`},
		{"a)b", 1, `unexpected ')'`},
		{"a|b", 1, `unexpected '|'`},
		{"[x]", 0, "expands to an empty word"},
		{"", 0, "empty key"},
		{"はい)", 6, `unexpected ')'`},
		{"こんにちは(さん|", 15, `unclosed "("`},
		{"(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)", 0, "expands to more than 4096 words"},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			_, err := ExpandKey(c.key)
			ke, ok := err.(*KeyError)
			if !ok {
				t.Fatalf("ExpandKey(%q) error = %v, want a *KeyError", c.key, err)
			}
			if ke.Offset != c.offset || ke.Msg != c.msg {
				t.Errorf("ExpandKey(%q) = %d %q, want %d %q", c.key, ke.Offset, ke.Msg, c.offset, c.msg)
			}
		})
	}
}

func TestCompileWord(t *testing.T) {
	cases := []struct {
		word    string
		plain   bool
		matches []string
		misses  []string
		err     string
	}{
		{word: "he", plain: true, matches: []string{"he", "hello", "hex"}, misses: []string{"ahe", "h"}},
		{word: `num\d+`, matches: []string{"num42", "num1x"}, misses: []string{"num", "xnum1"}},
		{word: "hi$", matches: []string{"hi"}, misses: []string{"hip"}},
		{word: `\w+ there`, matches: []string{"hi there"}},
		{word: "*hi", err: "missing argument to repetition operator: `*`"},
		{word: "a{2", err: "invalid repeat count: `{2`; write \\{ for a literal brace"},
		{word: `a\{2`, matches: []string{"a{2"}},
		{word: `x\Z`, err: "invalid escape sequence: `\\Z`"},
		{word: "お願い", plain: true, matches: []string{"お願い", "お願いします"}, misses: []string{"願い", "お"}},
		{word: "さよう.ら", matches: []string{"さようなら"}, misses: []string{"さようなｘら"}},
		{word: "^おはよう$", matches: []string{"おはよう"}, misses: []string{"おはようございます"}},
		{word: `\。`, matches: []string{"。"}},
		{word: `\p{Hiragana}+です`, matches: []string{"やまだです"}, misses: []string{"山田です"}},
		{word: `\P{Han}{2}`, matches: []string{"あい"}, misses: []string{"山田"}},
	}
	for _, c := range cases {
		t.Run(c.word, func(t *testing.T) {
			re, err := compileWord(c.word)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("compileWord(%q) error = %v, want %q", c.word, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("compileWord(%q): %v", c.word, err)
			}
			if (re == nil) != c.plain {
				t.Fatalf("compileWord(%q) plain = %v, want %v", c.word, re == nil, c.plain)
			}
			match := func(s string) bool {
				if re == nil {
					return len(s) >= len(c.word) && s[:len(c.word)] == c.word
				}
				return re.MatchString(s)
			}
			for _, s := range c.matches {
				if !match(s) {
					t.Errorf("%q does not match %q", c.word, s)
				}
			}
			for _, s := range c.misses {
				if match(s) {
					t.Errorf("%q matches %q", c.word, s)
				}
			}
		})
	}
}
