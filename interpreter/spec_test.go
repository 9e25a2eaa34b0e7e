package interpreter

import (
	"bufio"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/interpreter/seatml"
)

// TestSpecExample replays the client's view of SEATML.md §12 against the
// §12 file, copied verbatim into testdata/spec.
func TestSpecExample(t *testing.T) {
	data, err := os.ReadFile("../testdata/spec/greeter.seatml")
	if err != nil {
		t.Fatal(err)
	}
	prog, diags := seatml.LoadBytes("greeter.seatml", []byte(strings.Replace(string(data), `port="5000"`, `port="0"`, 1)), seatml.LoadOptions{})
	if prog == nil || len(diags) != 0 {
		t.Fatalf("the spec's example must load cleanly: %v", diags)
	}
	h := startProgram(t, prog)
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.DialTimeout("tcp", addrOf(t, h, "chat"), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(30 * time.Second))
		return c, bufio.NewReader(c)
	}
	c, r := dial()
	other, or := dial()
	for h.logs.FilterMessage("client connected").Len() < 2 {
		time.Sleep(time.Millisecond)
	}
	read := func(r *bufio.Reader) string {
		t.Helper()
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return strings.TrimSuffix(line, "\n")
	}
	c.Write([]byte("hi there\n"))
	if got := read(r); got != "Hello, stranger! (#1)" {
		t.Fatalf("got %q", got)
	}
	c.Write([]byte("hello, again\n"))
	// sendto: to every client.
	if got, got2 := read(r), read(or); got != "Hello, again! (#2)" || got2 != "Hello, again! (#2)" {
		t.Fatalf("got %q and %q", got, got2)
	}
	var log, count string
	h.m.Sync(t.Context(), func() {
		log, count = h.m.b.(*seatmlBehavior).widgets.values["talking:log"], h.m.b.(*seatmlBehavior).widgets.values["talking:count"]
	})
	if log != "hello, again\n" || count != "2" {
		t.Errorf("the data rule logged %q, count %q", log, count)
	}
	h.advance(10 * time.Second)
	if got, got2 := read(r), read(or); got != "silence for 10 s, going idle" || got2 != got {
		t.Fatalf("timeout: %q and %q", got, got2)
	}
	if got := h.state(); got != "idle" {
		t.Errorf("state %q", got)
	}
	// The global bye rule: its cond keeps it quiet in idle.
	other.Write([]byte("bye\nhi\n"))
	if got := read(or); got != "Hello, stranger! (#3)" {
		t.Fatalf("got %q", got)
	}
	other.Write([]byte("bye\n"))
	if got := read(or); got != "bye" {
		t.Fatalf("got %q", got)
	}
	if diff := cmp.Diff("idle", h.state()); diff != "" {
		t.Error(diff)
	}
}
