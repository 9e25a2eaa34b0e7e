package stdio

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors"
)

type sink struct {
	mu     sync.Mutex
	events []string
	ended  chan string
}

func (s *sink) Deliver(_ context.Context, ev adaptors.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, ev.Text)
	return nil
}

func (s *sink) EndOfInput(src string) { s.ended <- src }

func TestStdioLinesInMessagesOut(t *testing.T) {
	var out bytes.Buffer
	in := strings.NewReader("one\r\n" + strings.Repeat("x", adaptors.DefaultMaxLine+1) + "\ntwo\x00\xff\nlast")
	a, err := New(adaptors.Config{Name: "term", Stdin: in, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{ended: make(chan string, 1)}
	if err := a.Open(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	select {
	case src := <-s.ended:
		if src != "term" {
			t.Errorf("EndOfInput(%q)", src)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no end of input")
	}
	a.Send("hello")
	a.Send("world")
	a.Close()
	if err := a.Send("after close"); err == nil {
		t.Error("Send after Close succeeded")
	}
	s.mu.Lock()
	got := strings.Join(s.events, "|")
	s.mu.Unlock()
	if got != "one|two\uFFFD\uFFFD|last" {
		t.Errorf("events %q: the over-long line must be skipped, NUL and invalid UTF-8 replaced, and the partial last line kept", got)
	}
	if st := a.(adaptors.StatsReporter).Stats(); st.LineTooLong != 1 || st.Repaired != 1 {
		t.Errorf("stats %+v, want one line too long and one repaired", st)
	}
	if out.String() != "hello\nworld\n" {
		t.Errorf("stdout %q", out.String())
	}
}
