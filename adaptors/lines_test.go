package adaptors

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLineReader(t *testing.T) {
	type step struct {
		line string
		err  error
	}
	cases := []struct {
		name string
		in   string
		max  int
		want []step
	}{
		{"lf and crlf", "a\r\nb\n\nc\n", 8, []step{{"a", nil}, {"b", nil}, {"", nil}, {"c", nil}, {"", io.EOF}}},
		{"partial last line", "a\nhalf", 8, []step{{"a", nil}, {"half", ErrPartialLine}}},
		{"exactly max", "12345678\r\n", 8, []step{{"12345678", nil}, {"", io.EOF}}},
		{"over max is skipped", "123456789\nok\n", 8, []step{{"", ErrLineTooLong}, {"ok", nil}, {"", io.EOF}}},
		{"long over buffer", strings.Repeat("x", 10000) + "\nok\n", 9000, []step{{"", ErrLineTooLong}, {"ok", nil}}},
		{"long under max", strings.Repeat("x", 10000) + "\n", 20000, []step{{strings.Repeat("x", 10000), nil}}},
		{"invalid utf-8 and nul", "a\xffb\x00c\n", 16, []step{{"a\uFFFDb\uFFFDc", nil}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lr := NewLineReader(iotest.OneByteReader(strings.NewReader(c.in)), c.max)
			for i, w := range c.want {
				got, err := lr.Next()
				if got != w.line || !errors.Is(err, w.err) {
					t.Fatalf("step %d: %q, %v; want %q, %v", i, got, err, w.line, w.err)
				}
			}
		})
	}
}

func TestRepairedIsPerLine(t *testing.T) {
	lr := NewLineReader(strings.NewReader("ok\nnul\x00\nok\n\xc3(\n"), 64)
	for i, want := range []bool{false, true, false, true} {
		if _, err := lr.Next(); err != nil {
			t.Fatal(err)
		}
		if lr.Repaired() != want {
			t.Errorf("line %d: Repaired() = %v, want %v", i, lr.Repaired(), want)
		}
	}
}

func TestCleanText(t *testing.T) {
	for _, c := range []struct {
		in, want string
		repaired bool
	}{
		{"plain ünïcode", "plain ünïcode", false},
		{"", "", false},
		{"a\x00b", "a\uFFFDb", true},
		{"\xff\xfe\x00", "\uFFFD\uFFFD", true},
		{"end\xe2\x82", "end\uFFFD", true},
	} {
		got, repaired := CleanText(c.in)
		if got != c.want || repaired != c.repaired {
			t.Errorf("CleanText(%q) = %q, %v; want %q, %v", c.in, got, repaired, c.want, c.repaired)
		}
	}
}

func TestWriteLineKeepsOneMessageOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"hello", "hello\n"},
		{"", "\n"},
		{"a\nb", "a b\n"},
		{"a\r\nb\rc\n", "a b c \n"},
		{"\n  こんにちは\n", "   こんにちは \n"},
		{"a\n\nb", "a  b\n"},
	} {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		WriteLine(w, c.in)
		w.Flush()
		if b.String() != c.want {
			t.Errorf("WriteLine(%q) wrote %q, want %q", c.in, b.String(), c.want)
		}
	}
}

// FuzzLineBreak: lineBreak finds what strings.IndexAny(s, "\r\n") finds.
func FuzzLineBreak(f *testing.F) {
	for _, s := range []string{"", "a", "\n", "\r", "a\r\nb", "こんにちは\rx\n", "\xff\n", "abc\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := lineBreak(s), strings.IndexAny(s, "\r\n"); got != want {
			t.Errorf("lineBreak(%q) = %d, want %d", s, got, want)
		}
	})
}
