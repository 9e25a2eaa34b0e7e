package adaptors

import (
	"io"
	"net"
	"testing"
	"time"
)

// tcpPair returns the two ends of a real TCP connection on 127.0.0.1.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// TestNothingIsWrittenAfterTheLastFrame: Write's extra (a WebSocket close
// frame) is the last thing written on the connection, though its reader
// closes the connection only after it: what is sent in between, held
// until Flush or queued for the writer, and a second closing frame (the
// peer's close answered while seat stops), are not written (RFC 6455
// §5.5.1: no data frame after a close frame).
func TestNothingIsWrittenAfterTheLastFrame(t *testing.T) {
	c, peer := tcpPair(t)
	held := &Held{}
	out := NewOutbox(Tuning{})
	w := NewWriter(c, out, held, AppendLine)
	w.Send("before")
	if err := w.Write(time.Second, []byte("CLOSE\n")); err != nil {
		t.Fatal(err)
	}
	w.Send("after, held until Flush")
	held.Flush()
	out.Put("after, for the writer")
	if err := w.Write(time.Second, nil); err != nil {
		t.Fatal(err)
	}
	_ = w.Write(time.Second, []byte("CLOSE AGAIN\n"))
	c.Close()
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(peer)
	if err != nil {
		t.Fatal(err)
	}
	if want := "before\nCLOSE\n"; string(got) != want {
		t.Errorf("written %q, want %q", got, want)
	}
}
