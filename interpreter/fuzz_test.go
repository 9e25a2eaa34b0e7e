package interpreter

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seatml/seat/schema"
)

// FuzzLoad feeds arbitrary bytes to the loader: it must never panic, and a
// file it refuses must come with at least one positioned error.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"../testdata/check/*.seatml", "../testdata/check/inc/*.seatml", "../examples/*.seatml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(doc("", `<state name="s"><rule><key>(a|b)[c]</key><cond>x</cond><script>return 1</script></rule></state>`)))
	noFiles := func(string) ([]byte, error) { return nil, errors.New("no file system in the fuzzer") }
	f.Fuzz(func(t *testing.T, data []byte) {
		prog, diags := LoadBytes("f.seatml", data, LoadOptions{ReadFile: func(p string) ([]byte, error) {
			if p == "f.seatml" {
				return data, nil
			}
			return noFiles(p)
		}})
		if prog == nil && !diags.HasErrors() {
			t.Fatalf("refused without an error; diagnostics: %v", diags)
		}
		for _, d := range diags {
			if d.Pos.File == "" || (d.Pos.File == "f.seatml" && d.Pos.Line < 1) {
				t.Fatalf("badly formed diagnostic %q", d.Error())
			}
		}
		_ = schema.List(diags).Error()
	})
}

// FuzzExpandKey checks that key expansion never panics and that every word
// it returns is non-empty.
func FuzzExpandKey(f *testing.F) {
	for _, k := range []string{"(go|run) [fast ]now", "a(b|c(d|e))f", "[x[y]]z", `num\d+`, "(a|", "a)", `\`, "[[[[", "(|)"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		words, err := ExpandKey(key)
		if err != nil {
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Offset < 0 || ke.Offset > len(key) {
				t.Fatalf("ExpandKey(%q): %v", key, err)
			}
			return
		}
		for _, w := range words {
			if w == "" {
				t.Fatalf("ExpandKey(%q) gave an empty word", key)
			}
			_, _ = compileWord(w)
		}
	})
}
