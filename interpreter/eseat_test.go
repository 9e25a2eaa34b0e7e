package interpreter

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"
	"golang.org/x/text/encoding/japanese"

	"github.com/seatml/seat/interpreter/seatml"
)

// TestESEATFileRuns loads an eSEAT-style file from disk: Shift_JIS, with
// <agent>, <command host>, <cond execfile>, rowspan, <ondeactivated>, and
// a web adaptor whose document_root does not exist; it runs, Japanese
// keys fire, the helper runs before the cond, and the page is served
// while other paths are 404 (issue 13).
func TestESEATFileRuns(t *testing.T) {
	dir := t.TempDir()
	src := `<?xml version="1.0" encoding="Shift_JIS"?>
<seatml>
  <general name="受付">
    <agent name="chat" type="socket" role="server" port="0"/>
    <agent name="web" type="web" port="0" document_root="html"/>
  </general>
  <state name="待機">
    <rule source="chat"><key>こんにちは</key><command host="chat">いらっしゃいませ〜</command></rule>
    <rule source="chat"><key>準備</key><cond execfile="helper.lua">ready()</cond><command host="chat">準備完了</command></rule>
    <button label="はい" rowspan="2"/>
    <input id="名前" rowspan="1"/>
    <ondeactivated><log>off</log></ondeactivated>
  </state>
</seatml>
`
	sjis, err := japanese.ShiftJIS.NewEncoder().String(strings.ReplaceAll(src, "〜", "～"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "uketsuke.seatml")
	os.WriteFile(file, []byte(sjis), 0o644)
	os.WriteFile(filepath.Join(dir, "helper.lua"), []byte("function ready() return true end\n"), 0o644)
	prog, diags := seatml.Load(file, seatml.LoadOptions{})
	if prog == nil {
		t.Fatalf("load: %v", diags)
	}
	h := startProgram(t, prog)
	h.take()
	h.event("chat", "こんにちは")
	h.event("chat", "準備")
	if diff := cmp.Diff([]string{"chat:いらっしゃいませ～", "chat:準備完了"}, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	base := "http://" + addrOf(t, h, "web")
	for path, want := range map[string]int{"/": 200, "/index.html": 404, "/missing.js": 404} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// TestNoPythonWarningsOnOurOwnLua: the Python-ism warnings never fire on
// the project's own behaviors (issue 13: no false warnings).
func TestNoPythonWarningsOnOurOwnLua(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.seatml")
	more, _ := filepath.Glob("../testdata/spec/*.seatml")
	bench, _ := filepath.Glob("../bench/*.seatml")
	files = append(append(files, more...), bench...)
	if len(files) < 10 {
		t.Fatalf("only %d files", len(files))
	}
	for _, f := range files {
		_, diags := seatml.Load(f, seatml.LoadOptions{ScriptsDir: "../examples/scripts"})
		for _, d := range diags {
			if strings.Contains(d.Msg, "Python") || strings.Contains(d.Msg, "seat has no") || strings.Contains(d.Msg, "eSEAT's") {
				t.Errorf("%s", d.Error())
			}
		}
	}
}

func TestSeatAPIListIsTheTable(t *testing.T) {
	h := start(t, doc("", `<state name="s"/>`))
	got := h.m.seatNames()
	if diff := cmp.Diff(sortedCopy(seatml.SeatAPI), sortedCopy(got)); diff != "" {
		t.Errorf("SeatAPI differs from the seat table (-list +table):\n%s", diff)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return out
}

// TestPortedLuaRuns drives testdata/port/constructs.ported, the output of
// seat port on an eSEAT-style file: the translated Lua does what the
// Python did.
func TestPortedLuaRuns(t *testing.T) {
	prog, diags := seatml.Load("../testdata/port/constructs.ported", seatml.LoadOptions{})
	if prog == nil {
		t.Fatalf("load: %v", diags)
	}
	h := startProgram(t, prog)
	h.take()
	for _, ev := range []string{"hello", "hello", "size", "list", "echo", "bye"} {
		h.event("chat", ev)
	}
	want := []string{
		"chat:Hello, hello #1",
		"chat:Hello, hello #2",
		"chat:count 2 is two",
		"chat:5 a n2", // names[4] in Python is names[5] in Lua
		"chat:ECHO",
		"chat:bye",
	}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := h.state(); got != "end" {
		t.Errorf("state %q, want end (seat.stateTransfer became seat.transition)", got)
	}
	if errs := h.logged(zapcore.ErrorLevel); len(errs) != 0 {
		t.Errorf("errors: %q", errs)
	}
}
