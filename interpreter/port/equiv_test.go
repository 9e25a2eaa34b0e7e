package port

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
)

// TestEquivalence runs every Python body of testdata/port/equivalence
// under python3 and, ported by seat port as the script of an eSEAT file
// (File: a body that also parses as Lua is still Python there), under
// seat, and compares what the two print. A body marked "# hand: REASON"
// must be left for hand work with that reason instead: a translation is
// equivalent or marked, never silently different.
func TestEquivalence(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("SEAT_REQUIRE_TOOLS") != "" {
			t.Fatal("python3 is not installed and SEAT_REQUIRE_TOOLS is set (apt-get install python3)")
		}
		t.Skip("python3 is not installed")
	}
	files, _ := filepath.Glob("../../testdata/port/equivalence/*.py")
	if len(files) < 10 {
		t.Fatalf("only %d bodies in the corpus", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".py"), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			body := string(src)
			lua, problems := portBody(t, body)
			if first, _, _ := strings.Cut(body, "\n"); strings.HasPrefix(first, "# hand: ") {
				want := strings.TrimPrefix(first, "# hand: ")
				found := false
				for _, p := range problems {
					found = found || strings.Contains(p.Reason, want)
				}
				if !found {
					t.Errorf("want hand work %q; problems %v; translated:\n%s", want, problems, lua)
				}
				return
			}
			if len(problems) > 0 {
				t.Fatalf("left for hand work: %v\n%s", problems, lua)
			}
			cmd := exec.Command(py, "-")
			cmd.Stdin = strings.NewReader(body)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("python3: %v\n%s", err, stderr.String())
			}
			got, err := runLua(t, lua)
			if err != nil {
				t.Fatalf("seat: %v\nthe port:\n%s", err, lua)
			}
			if got != string(want) {
				t.Errorf("python3 printed:\n%s\nseat printed:\n%s\nthe port:\n%s", want, got, lua)
			}
		})
	}
}

// portBody ports body as the script of an eSEAT file, as seat port does,
// and returns the script it wrote and what it left for hand work.
func portBody(t *testing.T, body string) (string, []Note) {
	t.Helper()
	src := `<seatml><general name="equiv"/><state name="s"><rule><key>go</key><script><![CDATA[` + body + `]]></script></rule></state></seatml>`
	r, err := File("equiv.seatml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	doc := etree.NewDocument()
	doc.ReadSettings.PreserveCData = true
	if err := doc.ReadFromBytes(r.Output); err != nil {
		t.Fatal(err)
	}
	script := doc.FindElement("//script")
	if script == nil {
		t.Fatalf("no script in the ported file:\n%s", r.Output)
	}
	return script.Text(), r.Notes
}

// runLua runs a ported body as a rule's script of a behavior and returns
// what it printed, a line per print, or the script's error.
func runLua(t *testing.T, lua string) (string, error) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<seatml><general name="equiv"/><state name="s"><rule><key>go</key><script><![CDATA[`)
	b.WriteString(lua)
	b.WriteString(`]]></script></rule></state></seatml>`)
	prog, diags := seatml.LoadBytes("equiv.seatml", []byte(b.String()), seatml.LoadOptions{})
	if prog == nil || diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	m, err := interpreter.New(prog, interpreter.Options{Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-m.Ready()
	if err := m.Deliver(ctx, adaptors.Event{Source: "test", Text: "go"}); err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if err := m.Sync(sctx, nil); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, e := range logs.All() {
		if e.ContextMap()["from"] == "print" {
			out.WriteString(e.Message + "\n")
		}
		if e.Level == zapcore.ErrorLevel {
			return out.String(), &scriptError{e.ContextMap()["error"]}
		}
	}
	return out.String(), nil
}

type scriptError struct{ msg any }

func (e *scriptError) Error() string {
	return "the script failed: " + strings.TrimSpace(toString(e.msg))
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}
