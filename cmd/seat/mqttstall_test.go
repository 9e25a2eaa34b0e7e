package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/seatml/seat/adaptors/mqtt/mqtttest"
)

// TestStalledBroker stops a real mosquitto with SIGSTOP (its connections
// stay open) while a behavior publishes 60 KB on every line a socket peer
// sends: the peer's answers keep coming at once, no script hits its time
// limit, publications past the queue bound are refused and counted
// (slow_peer), the keep-alive notices the hung broker, and once it goes on
// seat reconnects and publishes again. (Issue 20: each publication used to
// block the machine for Paho's 30 s write timeout.)
func TestStalledBroker(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{})
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "stall.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="stall">
  <adaptor name="ask" type="socket" host="127.0.0.1" port="`+port+`" role="server"/>
  <adaptor name="bus" type="mqtt" broker="`+b.URL+`" publish="robot/out" qos="1" keepalive="2"/>
  <script>big = string.rep("x", 60000)</script>
</general>
<state name="s">
  <rule source="ask"><key>ping</key><script>seat.send("bus", big); seat.reply("pong")</script></rule>
  <rule source="ask"><key>last</key><message sendto="bus">final</message><script>seat.reply("sent")</script></rule>
</state></seatml>`), 0o644)

	var mu sync.Mutex
	var got []string
	c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL).SetClientID("stall-test").SetOrderMatters(true).SetAutoReconnect(true))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(100)
	c.Subscribe("robot/out", 0, func(_ paho.Client, m paho.Message) {
		mu.Lock()
		if p := string(m.Payload()); len(p) < 100 {
			got = append(got, p)
		}
		mu.Unlock()
	}).WaitTimeout(10 * time.Second)
	final := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(got, ",") == "final"
	}

	ctl := freePort(t)
	cmd, log := startSeat(t, "run", "--control", ctl, f)
	conn := dialSeat(t, port)
	in := bufio.NewReader(conn)
	ask := func(line, want string, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		conn.SetDeadline(start.Add(within))
		if _, err := conn.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		reply, err := in.ReadString('\n')
		if err != nil || strings.TrimSpace(reply) != want {
			t.Fatalf("%s: got %q, %v within %v; seat logged:\n%s", line, reply, err, within, log.String())
		}
		return time.Since(start)
	}
	waitFor(t, func() bool { return strings.Contains(log.String(), "connected to the broker") })
	ask("ping", "pong", 5*time.Second)

	b.Pause()
	// 300 publications of 60 KB: far past what the sockets' buffers and
	// the 1 MB queue hold. Every answer comes at once all the same.
	var slowest time.Duration
	for range 300 {
		slowest = max(slowest, ask("ping", "pong", 5*time.Second))
	}
	t.Logf("slowest answer while the broker hung: %v", slowest)
	if slowest > time.Second {
		t.Errorf("an answer took %v while the broker hung: sending to it blocked the behavior", slowest)
	}
	// The refusal needs the queue above its bound for the stall time.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "the broker is not taking publications") {
		if time.Now().After(deadline) {
			t.Fatalf("no refusal logged; seat logged:\n%s", log.String())
		}
		ask("ping", "pong", 5*time.Second)
		time.Sleep(100 * time.Millisecond)
	}
	// Keep-alive 2 s: a ping unanswered for 2 s more, checked every 0.5 s.
	waitForWithin(t, 20*time.Second, func() bool { return strings.Contains(log.String(), "connection to the broker lost") })
	if strings.Contains(log.String(), "failed") && strings.Contains(log.String(), "time limit") {
		t.Errorf("a script ran out of time:\n%s", log.String())
	}
	resp, err := http.Get("http://" + ctl + "/behaviors/stall")
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Adaptors []struct {
			Name     string
			SlowPeer int64 `json:"slow_peer"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if len(info.Adaptors) != 2 || info.Adaptors[1].Name != "bus" || info.Adaptors[1].SlowPeer != 1 {
		t.Errorf("adaptors %+v: want bus with slow_peer 1", info.Adaptors)
	}

	b.Resume()
	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), "the broker takes publications again") {
		if time.Now().After(deadline) {
			t.Fatalf("not back within 30 s; seat logged:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	ask("last", "sent", 5*time.Second)
	deadline = time.Now().Add(30 * time.Second)
	for !final() {
		if time.Now().After(deadline) {
			mu.Lock()
			t.Fatalf("after the broker went on, the subscriber got %q, want the last publication; seat logged:\n%s", got, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A stop while the broker hangs, with publications queued, is not held
	// by it: a few seconds at most.
	b.Pause()
	for range 50 {
		ask("ping", "pong", 5*time.Second)
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	t.Logf("stopped in %v with the broker hung", time.Since(start).Round(time.Millisecond))
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("the stop took %v with the broker hung", d)
	}
	b.Resume()
}
