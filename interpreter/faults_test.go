package interpreter

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/interpreter/seatml"
)

// TestServerPeerLeavesAndComesBack: a client of a socket server sends 100
// pings and leaves without reading a reply. What the user sees: each of the
// 100 events is still handled (another client's "count" comes to 100), the
// replies to the departed peer are dropped with a warning naming it, and a
// client that connects again, from a new port, is answered as before.
func TestServerPeerLeavesAndComesBack(t *testing.T) {
	h := start(t, pingPong)
	addr := addrOf(t, h, "chat")
	c := dialTCP(t, addr)
	peer := c.LocalAddr().String()
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "ping %d\n", i)
	}
	c.Write([]byte(b.String()))
	c.Close() // gone before the replies

	// Its events are handled, though not necessarily before those of a
	// connection made after it: there is no order between connections.
	c2 := dialTCP(t, addr)
	r2 := bufio.NewReader(c2)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c2.Write([]byte("count\n"))
		line, err := r2.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "100\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("count %q: the departed peer's events were not all handled", line)
		}
		time.Sleep(time.Millisecond)
	}
	c2.Close()

	for round := range 3 { // the peer restarts, three times
		c := dialTCP(t, addr)
		r := bufio.NewReader(c)
		fmt.Fprintf(c, "ping %d\ncount\n", 1000+round)
		for _, want := range []string{fmt.Sprintf("pong %d\n", 1000+round), strconv.Itoa(101+round) + "\n"} {
			if line, err := r.ReadString('\n'); err != nil || line != want {
				t.Fatalf("round %d: got %q (%v), want %q", round, line, err, want)
			}
		}
		c.Close()
	}
	// Some replies may have left before the server noticed the close; the
	// rest are refused one by one, each logged with the peer.
	dropped := 0
	for _, e := range h.logs.FilterMessage("reply not sent").All() {
		if to := e.ContextMap()["to"]; to != "chat "+peer {
			t.Errorf("reply not sent to %v, want the departed peer %s", to, peer)
		}
		dropped++
	}
	t.Logf("%d of 100 replies to the departed peer were dropped and logged", dropped)
}

// TestClientTargetGoesAwayAndComesBack: a behavior's socket client loses
// its server, which comes back on the same port a while later. What the
// user sees: one warning when the connection drops and one when the first
// retry fails, however many retries follow (back-off, no spin); a message
// sent meanwhile is dropped with a warning "not connected"; once the server
// is back, the adaptor reconnects by itself and events flow both ways again.
func TestClientTargetGoesAwayAndComesBack(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	src := `<seatml><general name="c">
<adaptor name="up" type="socket" port="` + port + `"/>
<adaptor name="chat" type="socket" role="server" port="0"/>
</general><state name="s">
<rule source="up"><key>ping \d+</key><script>seat.reply("pong" .. event.text:sub(5))</script></rule>
<rule source="chat"><key>tell</key><message sendto="up">news</message></rule>
</state></seatml>`
	h := start(t, src, func(o *Options) {
		o.Tuning = adaptors.Tuning{BackoffMin: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond}
	})
	serve := func(ln net.Listener, n int) {
		t.Helper()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(c, "ping %d\n", n)
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != fmt.Sprintf("pong %d\n", n) {
			t.Fatalf("server %d: got %q (%v)", n, line, err)
		}
	}
	serve(ln, 1)
	ln.Close() // the connection closed by serve, and now nobody listens
	h.waitLog("disconnected; reconnecting")
	h.waitLog("connection failed; retrying with back-off")
	up := h.m.Adaptor("up").(adaptors.StatsReporter)
	h.eventually("the connection is closed", func() bool { return up.Stats().Open == 0 })
	// While it is away: a message to it is dropped, with a warning.
	console := dialTCP(t, addrOf(t, h, "chat"))
	console.Write([]byte("tell\n"))
	h.waitLog("message not sent")
	if e := h.logs.FilterMessage("message not sent").All()[0]; !strings.Contains(fmt.Sprint(e.ContextMap()["error"]), "not connected") {
		t.Errorf("message not sent: %v", e.ContextMap())
	}
	// It has retried and failed at least once (logged above); the server
	// comes back on the same port.
	ln2, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("the port could not be taken again: %v", err)
	}
	defer ln2.Close()
	serve(ln2, 2)
	if n := h.logs.FilterMessage("connection failed; retrying with back-off").Len(); n != 1 {
		t.Errorf("the outage was logged %d times, want once", n)
	}
	if s := up.Stats(); s.Accepted != 2 {
		t.Errorf("connections made %d, want 2", s.Accepted)
	}
}

// TestDeviceDropsAndSensorSticks: the simulated head board stops answering
// while the head is turning, and the rear head touch sensor sticks. What the
// user sees: a memory event with the board's error list, JSON, whose last
// entry is "not answering", then after 500 ms "no actuator frame ...
// joints not driven"; the head
// stopped where it was, and once the board is back an "answering again"
// entry and a head that follows commands again. The stuck sensor reads
// the same whatever happens to it (as a real one would); meanwhile every
// other device's events and the socket's events keep being handled.
func TestDeviceDropsAndSensorSticks(t *testing.T) {
	prog, d, tweak := loadWithDevices(t, doc("", `<state name="s">`+
		rule("", `<key>look \S+</key><script>seat.set("HeadYaw/Hardness/Actuator", 1); seat.set("HeadYaw/Position/Actuator", tonumber(event.text:sub(6)), 400)</script>`)+
		rule("", `<key>where</key><script sendto="chat">return string.format("head %.2f", seat.get("HeadYaw/Position/Sensor"))</script>`)+
		rule(`source="memory"`, `<key>Device/DeviceList/HeadBoard/Error</key><script sendto="chat">return "head board: " .. (event.text:match('"([^"]*)"%]%]$') or event.text)</script>`)+
		rule(`source="memory"`, `<key>Device/SubDeviceList/Head/Touch/Front/Sensor/Value</key><script sendto="chat">return "front " .. event.text</script>`)+
		rule(`source="memory"`, `<key>Device/SubDeviceList/Head/Touch/Rear/Sensor/Value</key><script sendto="chat">return "rear " .. event.text</script>`)+
		`</state>`), seatml.LoadOptions{})
	h := startProgram(t, prog, tweak)
	sim := d.Engine.Backend().(*hal.Sim)
	e := d.Engine
	h.take()
	// seen is everything the behavior has sent; waitSend waits (the test
	// steps the engine) until want is among it.
	var seen []string
	waitSend := func(want string) {
		t.Helper()
		h.eventually(want, func() bool {
			seen = append(seen, h.sends()...)
			return slices.Contains(seen, want)
		})
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	where := func() string {
		t.Helper()
		h.event("chat", "where")
		s := h.sends()
		seen = append(seen, s...)
		if len(s) != 1 {
			t.Fatalf("where: %q", s)
		}
		return s[0]
	}

	stepUntil(t, e, 50*msec)
	h.event("chat", "look 1")
	stepUntil(t, e, 250*msec)
	moving := where()
	if moving == "chat:head 0.00" || moving == "chat:head 1.00" {
		t.Fatalf("mid-turn the head is at %q", moving)
	}
	must(sim.DropDevice("HeadBoard", true))
	stepUntil(t, e, 260*msec)
	waitSend("chat:head board: not answering")
	frozen := where()
	stepUntil(t, e, 800*msec)
	waitSend("chat:head board: no actuator frame for 500ms: joints not driven")
	if got := where(); got != frozen {
		t.Errorf("the dropped board's joint moved: %q, then %q", frozen, got)
	}

	// Other devices go on: the front touch sensor is pressed and released.
	must(e.Inject("Head/Touch/Front/Sensor", 1))
	stepUntil(t, e, 820*msec)
	waitSend("chat:front 1")
	// The rear one sticks at 0: a press is never seen.
	must(sim.StickSensor("Head/Touch/Rear/Sensor", true))
	must(e.Inject("Head/Touch/Rear/Sensor", 1))
	must(e.Inject("Head/Touch/Front/Sensor", 0))
	stepUntil(t, e, 840*msec)
	waitSend("chat:front 0")
	if got := where(); got != frozen { // and the socket too
		t.Errorf("where, with a stuck rear sensor: %q", got)
	}

	must(sim.DropDevice("HeadBoard", false))
	stepUntil(t, e, 850*msec)
	waitSend("chat:head board: answering again")
	h.event("chat", "look 0")
	stepUntil(t, e, 1300*msec)
	if got := where(); got != "chat:head 0.00" {
		t.Errorf("after the board is back, look 0: %q", got)
	}
	if slices.Contains(seen, "chat:rear 1") {
		t.Errorf("the stuck rear sensor reported a press: %q", seen)
	}
	must(sim.StickSensor("Head/Touch/Rear/Sensor", false))
	stepUntil(t, e, 1310*msec)
	waitSend("chat:rear 1") // unstuck, the press held since shows
}

// TestLuaFaultsLoseNothing: over a real connection a client sends a script
// that loops forever, one that allocates without bound and one that fails,
// each followed at once by 100 pings that queue up behind it. What the user
// sees: one error line per fault naming the file and line and the cause
// (time limit, memory limit, the Lua error); the list of the failed rule
// stops there; and all 300 pings are answered, in order, on the same
// connection.
func TestLuaFaultsLoseNothing(t *testing.T) {
	h := start(t, doc("", `<state name="s">`+
		rule("", `<key>loop</key><script>while true do end</script>`+msg("never"))+
		rule("", `<key>hog</key><script><![CDATA[local t, s = {}, string.rep("x", 65536) for i = 1, 1e9 do t[i] = s .. i end]]></script>`+msg("never"))+
		rule("", `<key>fail</key><script>local x = nil; return x.field</script>`+msg("never"))+
		rule("", `<key>ping \d+</key><script>seat.reply("pong" .. event.text:sub(5))</script>`)+
		`</state>`), func(o *Options) { o.ScriptTimeout = time.Second; o.ScriptMemory = 16 << 20 })
	c := dialTCP(t, addrOf(t, h, "chat"))
	r := bufio.NewReader(c)
	n := 0
	for _, fault := range []string{"loop", "hog", "fail"} {
		var b strings.Builder
		b.WriteString(fault + "\n")
		for range 100 {
			fmt.Fprintf(&b, "ping %d\n", n)
			n++
		}
		c.Write([]byte(b.String()))
	}
	for i := range n {
		want := fmt.Sprintf("pong %d\n", i)
		if line, err := r.ReadString('\n'); err != nil || line != want {
			t.Fatalf("reply %d: %q (%v), want %q", i, line, err, want)
		}
	}
	got := h.logged(zapcore.ErrorLevel)
	want := []string{
		"script failed: t.seatml:7: script stopped: time limit of 1s exceeded",
		"script failed: t.seatml:8: script stopped: it grew the heap by more than the script memory limit of 16 MiB",
		"script failed: t.seatml:9: ",
	}
	if len(got) != 3 {
		t.Fatalf("logged %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d: %q, want %q...", i, got[i], want[i])
		}
	}
	for _, s := range h.sends() {
		if strings.HasSuffix(s, "never") {
			t.Errorf("a failed rule's list went on: %q", s)
		}
	}
}
