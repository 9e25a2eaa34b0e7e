package interpreter

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConnectAndDisconnectEvents: a visitor connecting to a socket server
// runs the current state's onconnect (else general's), with event.peer and
// seat.reply answering just that visitor; leaving runs ondisconnect.
func TestConnectAndDisconnectEvents(t *testing.T) {
	h := start(t, doc(`<ondisconnect source="chat"><script>seat.send("other", "left " .. event.source)</script><statetransition>待機</statetransition></ondisconnect>
<onconnect source="chat"><script>seat.reply("general welcome")</script></onconnect>`,
		`<state name="待機">
<onconnect source="chat"><script>seat.reply("ようこそ"); seat.send("other", "peer " .. event.peer)</script><statetransition>案内</statetransition></onconnect>
</state>
<state name="案内">`+rule("", "<key>x</key>"+msg("x"))+`</state>`))
	observer, err := net.DialTimeout("tcp", addrOf(t, h, "other"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer observer.Close()
	observer.SetDeadline(time.Now().Add(20 * time.Second))
	obs := bufio.NewReader(observer)
	h.waitLog("client connected") // the observer, on "other": no onconnect for it
	read := func(r *bufio.Reader) string {
		t.Helper()
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(line, "\n")
	}
	visitor := func() (net.Conn, *bufio.Reader) {
		c, err := net.DialTimeout("tcp", addrOf(t, h, "chat"), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		return c, bufio.NewReader(c)
	}
	c1, r1 := visitor()
	if got := read(r1); got != "ようこそ" {
		t.Fatalf("first visitor got %q", got)
	}
	if got, want := read(obs), "peer "+c1.LocalAddr().String(); got != want {
		t.Fatalf("observer got %q, want %q (event.peer)", got, want)
	}
	h.eventually("案内", func() bool { return h.m.State() == "案内" })
	// In 案内 the state has no onconnect: general's runs, for the new
	// visitor only.
	c2, r2 := visitor()
	if got := read(r2); got != "general welcome" {
		t.Fatalf("second visitor got %q", got)
	}
	c2.Close()
	if got := read(obs); got != "left chat" {
		t.Fatalf("observer got %q after a visitor left", got)
	}
	h.eventually("back to 待機", func() bool { return h.m.State() == "待機" })
	c1.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if line, err := r1.ReadString('\n'); err == nil {
		t.Fatalf("the first visitor got %q, meant for another", line)
	}
	c1.Close()
	if got := read(obs); got != "left chat" {
		t.Fatalf("observer got %q", got)
	}
	want := []string{"onconnect:chat", "onconnect:chat", "ondisconnect:chat", "ondisconnect:chat"}
	var got []string
	for _, s := range h.take() {
		if strings.HasPrefix(s, "onconnect:") || strings.HasPrefix(s, "ondisconnect:") {
			got = append(got, s)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

// TestClientAdaptorConnectEvents: for a socket client adaptor, onconnect
// runs when its connection is made and ondisconnect when it is lost.
func TestClientAdaptorConnectEvents(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	h := start(t, doc(`<adaptor name="up" type="socket" role="client" port="`+port+`"/>
<onconnect source="up"><script>seat.reply("hello server"); seat.send("chat", "connected " .. event.peer)</script></onconnect>
<ondisconnect source="up"><statetransition>offline</statetransition></ondisconnect>`,
		`<state name="online"/><state name="offline"/>`), func(o *Options) {
		o.Tuning.BackoffMin, o.Tuning.BackoffMax = 10*time.Millisecond, 20*time.Millisecond
	})
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "hello server\n" {
		t.Fatalf("server got %q (%v)", line, err)
	}
	h.eventually("the send to chat", func() bool {
		for _, s := range h.take() {
			if s == "send:chat:connected "+ln.Addr().String() {
				return true
			}
		}
		return false
	})
	c.Close()
	h.eventually("offline after the server closed", func() bool { return h.m.State() == "offline" })
}
