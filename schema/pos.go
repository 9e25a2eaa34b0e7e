package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// Pos is a position in a source file: 1-based line and column, the column
// counted in characters (Unicode code points), so that "こんにちは" is five
// columns wide, as an editor shows it. The zero Pos is "no position".
type Pos struct {
	File string
	Line int
	Col  int
}

// FileCause returns the cause of a file error without the operation and
// path that os adds, for messages that name the file already
// ("x.seatml: cannot read ...: no such file or directory").
func FileCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// IsValid reports whether p names a line.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String formats p as file:line:col, omitting what is unknown.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Advance returns the position just after text s that starts at p.
func (p Pos) Advance(s string) Pos {
	for _, r := range s {
		if r == '\n' {
			p.Line++
			p.Col = 1
		} else {
			p.Col++
		}
	}
	return p
}

// Severity tells errors from warnings.
type Severity int

// Severities.
const (
	Error Severity = iota
	Warning
)

// Diagnostic is one problem found in a file, by a check or at run time.
// Detail says more on lines of their own, for a reader who wants them:
// the failing line of code with its column marked (Text writes it).
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Msg      string
	Detail   string
}

// Error formats d as "file:line:col: message", with "warning: " before the
// message of a warning.
func (d Diagnostic) Error() string {
	if d.Severity == Warning {
		return d.Pos.String() + ": warning: " + d.Msg
	}
	return d.Pos.String() + ": " + d.Msg
}

// Text is d as a reader sees it: the line Error gives, then the detail's
// lines, indented by four spaces.
func (d Diagnostic) Text() string {
	if d.Detail == "" {
		return d.Error()
	}
	return d.Error() + "\n    " + strings.ReplaceAll(d.Detail, "\n", "\n    ")
}

// Snippet is the detail that shows a line of code, numbered, with a
// caret under column col (1-based, counted in characters; 0: no caret).
// The line's indentation is left out. The caret stands where a terminal
// shows the character: a wide one (漢字, かな, most emoji) takes two
// columns, and a tab in the line is a tab under it too.
func Snippet(line int, code string, col int) string {
	trimmed := strings.TrimLeft(code, " \t")
	col -= len([]rune(code)) - len([]rune(trimmed))
	num := strconv.Itoa(line)
	s := num + " | " + trimmed
	if col < 1 {
		return s
	}
	var pad strings.Builder
	for i, r := range []rune(trimmed) {
		switch {
		case i >= col-1:
		case r == '\t':
			pad.WriteByte('\t')
		case isWide(r):
			pad.WriteString("  ")
		default:
			pad.WriteByte(' ')
		}
	}
	return s + "\n" + strings.Repeat(" ", len(num)) + " | " + pad.String() + "^"
}

// isWide reports whether r takes two columns on a terminal: East Asian
// wide and full-width characters (Unicode's East_Asian_Width W and F),
// among them the emoji shown as pictures.
func isWide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115f, r == 0x2329, r == 0x232a,
		r >= 0x2e80 && r <= 0xa4cf && r != 0x303f, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe10 && r <= 0xfe19, r >= 0xfe30 && r <= 0xfe6f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f680 && r <= 0x1f6ff, r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x1fa70 && r <= 0x1faff, r >= 0x1f004 && r <= 0x1f251 && r != 0x1f0cf,
		r >= 0x20000 && r <= 0x3fffd:
		return true
	}
	return wideSymbols[r]
}

// wideSymbols are the symbols below U+1F000 shown as emoji, two columns
// wide (East_Asian_Width W): ⌚ ⏰ ☕ ♈ ⚡ ⛔ ✅ ❌ ⭐ and the like.
var wideSymbols = map[rune]bool{
	0x231a: true, 0x231b: true, 0x23e9: true, 0x23ea: true, 0x23eb: true, 0x23ec: true, 0x23f0: true, 0x23f3: true,
	0x25fd: true, 0x25fe: true, 0x2614: true, 0x2615: true, 0x2648: true, 0x2649: true, 0x264a: true, 0x264b: true,
	0x264c: true, 0x264d: true, 0x264e: true, 0x264f: true, 0x2650: true, 0x2651: true, 0x2652: true, 0x2653: true,
	0x267f: true, 0x2693: true, 0x26a1: true, 0x26aa: true, 0x26ab: true, 0x26bd: true, 0x26be: true, 0x26c4: true,
	0x26c5: true, 0x26ce: true, 0x26d4: true, 0x26ea: true, 0x26f2: true, 0x26f3: true, 0x26f5: true, 0x26fa: true,
	0x26fd: true, 0x2705: true, 0x270a: true, 0x270b: true, 0x2728: true, 0x274c: true, 0x274e: true, 0x2753: true,
	0x2754: true, 0x2755: true, 0x2757: true, 0x2795: true, 0x2796: true, 0x2797: true, 0x27b0: true, 0x27bf: true,
	0x2b1b: true, 0x2b1c: true, 0x2b50: true, 0x2b55: true,
}

// List collects diagnostics.
type List []Diagnostic

// Errorf adds an error at pos.
func (l *List) Errorf(pos Pos, format string, args ...any) {
	*l = append(*l, Diagnostic{Pos: pos, Severity: Error, Msg: fmt.Sprintf(format, args...)})
}

// Warnf adds a warning at pos.
func (l *List) Warnf(pos Pos, format string, args ...any) {
	*l = append(*l, Diagnostic{Pos: pos, Severity: Warning, Msg: fmt.Sprintf(format, args...)})
}

// Add appends other diagnostics.
func (l *List) Add(other List) { *l = append(*l, other...) }

// HasErrors reports whether l holds at least one error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Sort orders l by file, line, column and message, dropping exact repeats.
func (l *List) Sort() {
	s := *l
	sort.SliceStable(s, func(i, j int) bool {
		a, b := s[i].Pos, s[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return s[i].Msg < s[j].Msg
	})
	out := s[:0]
	for i, d := range s {
		if i > 0 && d == s[i-1] {
			continue
		}
		out = append(out, d)
	}
	*l = out
}

// Error joins the diagnostics, one per line.
func (l List) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.Error())
	}
	return b.String()
}

// Err returns l as an error if it holds an error, else nil.
func (l List) Err() error {
	if l.HasErrors() {
		return l
	}
	return nil
}

// CharCol converts a 1-based byte column of line into a 1-based character
// column: the number of characters that start before that byte, plus the
// one there. Tools that count bytes (the Lua parser) are converted with it.
func CharCol(line string, byteCol int) int {
	n := 0
	for i := range line {
		if i >= byteCol {
			break
		}
		n++
	}
	if byteCol > len(line) {
		n += byteCol - len(line) // past the end (an end-of-line position)
	}
	return max(n, 1)
}

// Excerpt returns s cut to at most n characters, with "…" in place of the
// rest, for quoting long user text (a generated key) in a message.
func Excerpt(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "…"
		}
		i++
	}
	return s
}
