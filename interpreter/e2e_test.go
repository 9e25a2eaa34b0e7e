package interpreter

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

const pingPong = `<?xml version="1.0"?>
<seatml>
<general name="pp">
<adaptor name="chat" type="socket" role="server" port="0"/>
<script>count = 0</script>
</general>
<state name="s">
<rule source="chat"><key>ping \d+</key><script>count = count + 1; seat.reply("pong" .. event.text:sub(5))</script></rule>
<rule source="chat"><key>count$</key><script>seat.reply(tostring(count))</script></rule>
</state>
</seatml>
`

func addrOf(t *testing.T, h *harness, name string) string {
	t.Helper()
	a, ok := h.m.Adaptor(name).(interface{ Addr() string })
	if !ok {
		t.Fatalf("adaptor %q has no address", name)
	}
	return a.Addr()
}

func TestHundredConcurrentClients(t *testing.T) {
	h := start(t, pingPong)
	addr := addrOf(t, h, "chat")
	const clients, each = 100, 20
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(60 * time.Second))
			r := bufio.NewReader(c)
			for j := range each {
				fmt.Fprintf(c, "ping %d-%d\n", i, j)
				want := fmt.Sprintf("pong %d-%d\n", i, j)
				if line, err := r.ReadString('\n'); err != nil || line != want {
					errs <- fmt.Errorf("client %d: got %q (%v), want %q", i, line, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFullQueueSlowsReadersWithoutLoss(t *testing.T) {
	// A queue of 2 events and a client that pipelines 2000 lines: the socket
	// reader blocks, TCP flow control holds the client, nothing is dropped.
	h := start(t, pingPong, func(o *Options) { o.QueueLen = 2 })
	c, err := net.DialTimeout("tcp", addrOf(t, h, "chat"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	const n = 2000
	go func() {
		w := bufio.NewWriter(c)
		for i := range n {
			fmt.Fprintf(w, "ping %d\n", i)
		}
		w.WriteString("count\n")
		w.Flush()
	}()
	r := bufio.NewReader(c)
	for i := range n {
		want := fmt.Sprintf("pong %d\n", i)
		if line, err := r.ReadString('\n'); err != nil || line != want {
			t.Fatalf("reply %d: %q (%v), want %q", i, line, err, want)
		}
	}
	if line, _ := r.ReadString('\n'); line != fmt.Sprintf("%d\n", n) {
		t.Fatalf("count = %q, want %d", line, n)
	}
}
