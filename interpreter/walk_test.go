package interpreter

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
)

var updateWalk = flag.Bool("update-walk", false, "rewrite the event walk in docs/architecture.md")

// walkFilesMax is how many files of the runtime root package one line's
// walk may pass through: the host's loop and sending (machine.go), the
// rule and its actions (dispatch.go), Lua and the seat table (api.go),
// and entering a state (states.go). Issue 34's goal.
const walkFilesMax = 4

// probe is an adaptor that records the stacks it is called from: where a
// script's seat.send, an onentry's message and the end of the pass reach.
type probe struct {
	mu      sync.Mutex
	stacks  map[string][]string
	flushed chan struct{} // receives once the pass's end is recorded
}

func (p *probe) Name() string                              { return "probe" }
func (p *probe) Open(context.Context, adaptors.Sink) error { return nil }
func (p *probe) Close() error                              { return nil }
func (p *probe) Send(text string) error                    { p.record(text); return nil }
func (p *probe) Flush() {
	p.mu.Lock()
	_, taken := p.stacks["entered"]
	_, flushed := p.stacks["flush"]
	p.mu.Unlock()
	if taken && !flushed {
		p.record("flush")
		p.flushed <- struct{}{}
	}
}

func (p *probe) record(what string) {
	pcs := make([]uintptr, 100)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var stack []string
	for {
		f, more := frames.Next()
		stack = append(stack, f.Function+" "+filepath.Base(f.File))
		if !more {
			break
		}
	}
	p.mu.Lock()
	if p.stacks == nil {
		p.stacks = map[string][]string{}
	}
	p.stacks[what] = stack
	p.mu.Unlock()
}

// TestOneLinesWalk follows one line on a socket through the runtime, as
// the reviewer did with stack probes: read, rule, a Lua script
// (seat.reply, then seat.send to a probe), a transition whose onentry
// sends to the probe, and the end of the pass, where replies are
// written. It lists the runtime root package's files on the way, keeps
// docs/architecture.md's walk true to the code (go test ./interpreter
// -run TestOneLinesWalk -update-walk rewrites it) and holds the number
// of files at walkFilesMax.
func TestOneLinesWalk(t *testing.T) {
	prog, diags := seatml.LoadBytes("walk.seatml", []byte(`<seatml>
<general name="walk">
  <adaptor name="chat" type="socket" role="server" port="0"/>
  <adaptor name="probe" type="socket" role="server" port="0"/>
</general>
<state name="a">
  <rule source="chat"><key>ping</key><script>seat.reply("pong"); seat.send("probe", "script")</script><statetransition>b</statetransition></rule>
</state>
<state name="b"><onentry><message sendto="probe">entered</message></onentry>
  <rule source="chat"><key>again</key><script>seat.reply("ok")</script><statetransition>a</statetransition></rule>
</state>
</seatml>`), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	p := &probe{flushed: make(chan struct{}, 1)}
	socket, _ := adaptors.LookupKind("socket")
	h := startProgram(t, prog, func(o *Options) {
		// The walk of seat run: the real clock, and no trace (with one,
		// messages leave the slot fast path).
		o.Clock, o.Trace = nil, nil
		o.OpenAdaptor = func(c adaptors.Config) (adaptors.Adaptor, error) {
			if c.Name == "probe" {
				return p, nil
			}
			return socket.New(c)
		}
	})
	c, err := net.Dial("tcp", h.m.Adaptor("chat").(adaptors.Addresser).Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	ask := func(line, want string) {
		fmt.Fprintf(c, "%s\n", line)
		if got, err := r.ReadString('\n'); err != nil || got != want+"\n" {
			t.Fatalf("reply to %s: %q, %v", line, got, err)
		}
	}
	// The walk documented is the usual one: the connection's reader finds
	// the behavior idle and runs it (the inline hand-over). Under load the
	// behavior's own goroutine may take a line instead; then ask again.
	for attempt := 1; ; attempt++ {
		p.mu.Lock()
		p.stacks = nil
		p.mu.Unlock()
		ask("ping", "pong")
		select {
		case <-p.flushed: // the script's and the onentry's came before
		case <-time.After(10 * time.Second):
			t.Fatal("the pass never ended")
		}
		p.mu.Lock()
		inline := slices.ContainsFunc(p.stacks["flush"], func(f string) bool { return strings.Contains(f, "readLines") })
		p.mu.Unlock()
		if inline {
			break
		}
		if attempt == 20 {
			t.Fatal("in 20 lines the connection's reader never ran the behavior itself")
		}
		ask("again", "ok")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var walk []string
	files := map[string]bool{}
	const root = "github.com/seatml/seat/interpreter."
	for _, step := range []string{"script", "entered", "flush"} {
		stack := p.stacks[step]
		if stack == nil {
			t.Fatalf("the probe never saw %q", step)
		}
		walk = append(walk, "", "**"+step+"**, innermost first:", "")
		for _, f := range stack {
			name, file, _ := strings.Cut(f, " ")
			if !strings.HasPrefix(name, "github.com/seatml/seat/") || strings.Contains(name, "walk_test") || strings.HasSuffix(file, "_test.go") {
				continue
			}
			walk = append(walk, "- `"+strings.TrimPrefix(name, "github.com/seatml/seat/")+"` ("+file+")")
			if strings.HasPrefix(name, root) {
				files[file] = true
			}
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for f := range files {
			if !yield(f) {
				return
			}
		}
	})
	text := fmt.Sprintf("One line on a socket (`ping` → a rule whose script calls `seat.reply` and `seat.send`, a transition, an onentry `<message>`, then the pass's end, where replies are written) passes through %d files of the runtime root package: %s.\n",
		len(names), strings.Join(names, ", ")) + strings.Join(walk, "\n") + "\n"
	checkGenerated(t, "../docs/architecture.md", "walk", text, *updateWalk)
	if len(names) > walkFilesMax {
		t.Errorf("one line passes through %d files of the runtime root package (%s); at most %d", len(names), strings.Join(names, ", "), walkFilesMax)
	}
}

// checkGenerated compares the block between <!-- NAME:begin --> and
// <!-- NAME:end --> in file with want, or rewrites it.
func checkGenerated(t *testing.T, file, name, want string, update bool) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	s := string(data)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s…%s block", file, begin, end)
	}
	got := s[i+len(begin) : j]
	if got == want {
		return
	}
	if update {
		if err := os.WriteFile(file, []byte(s[:i+len(begin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's %s block is not what the code does now (rerun with -update-walk):\n got:\n%s\nwant:\n%s", file, name, got, want)
}
