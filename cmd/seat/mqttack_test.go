package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/seatml/seat/adaptors/mqtt/mqtttest"
)

// TestQoS1SurvivesStop stops seat with SIGTERM, then with SIGKILL, in the
// middle of 3,000 QoS 1 messages kept for it by a real mosquitto
// (clean="false"); a restarted seat handles every one that was not
// handled before, so each message is answered at least once. The restart
// neither logs a false "subscription failed" nor waits 10 s for its
// subscriptions. (Issue 20: the 1,024 messages in the behavior's queue at
// SIGTERM had been acknowledged on arrival and were never seen again.)
func TestQoS1SurvivesStop(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) { testQoS1SurvivesStop(t, sig) })
	}
}

func testQoS1SurvivesStop(t *testing.T, sig syscall.Signal) {
	const n = 3000
	b := mqtttest.Start(t, mqtttest.Options{})
	f := filepath.Join(t.TempDir(), "work.seatml")
	// Each message takes about a millisecond to handle, so that a backlog
	// waits in the behavior's queue when the signal comes.
	os.WriteFile(f, []byte(`<seatml><general name="work">
  <adaptor name="bus" type="mqtt" broker="`+b.URL+`" subscribe="jobs" publish="done" qos="1" clean="false" clientid="worker"/>
</general>
<state name="s">
  <rule source="bus"><script>local t = os.clock(); while os.clock() - t &lt; 0.001 do end; seat.send("bus", event.text)</script></rule>
</state></seatml>`), 0o644)

	var mu sync.Mutex
	seen := map[int]int{}
	c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL).SetClientID("jobs-test").SetCleanSession(false).SetOrderMatters(true))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(100)
	c.Subscribe("done", 1, func(_ paho.Client, m paho.Message) {
		i, err := strconv.Atoi(string(m.Payload()))
		mu.Lock()
		if err == nil {
			seen[i]++
		}
		mu.Unlock()
	}).WaitTimeout(10 * time.Second)
	count := func() (distinct, total int) {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range seen {
			total += k
		}
		return len(seen), total
	}

	cmd, log := startSeat(t, "run", f)
	waitFor(t, func() bool { return strings.Contains(log.String(), "subscribed") })
	for i := range n {
		c.Publish("jobs", 1, false, strconv.Itoa(i)) // tokens checked by what arrives
	}
	// Signal once a few hundred are answered: thousands still wait.
	deadline := time.Now().Add(20 * time.Second)
	for d, _ := count(); d < 300; d, _ = count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d answers within 20 s; seat logged:\n%s", d, log.String())
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(sig)
	cmd.Wait()
	before, _ := count()
	if before >= n {
		t.Fatalf("all %d answered before the %v: the test proves nothing; make handling slower", n, sig)
	}

	start := time.Now()
	_, log2 := startSeat(t, "run", f)
	deadline = time.Now().Add(60 * time.Second)
	for d, _ := count(); d < n; d, _ = count() {
		if time.Now().After(deadline) {
			mu.Lock()
			var missing []string
			for i := range n {
				if seen[i] == 0 && len(missing) < 20 {
					missing = append(missing, strconv.Itoa(i))
				}
			}
			mu.Unlock()
			t.Fatalf("after the restart %d of %d answered (%d before the %v); missing %s ...; seat logged:\n%s",
				d, n, before, sig, strings.Join(missing, " "), log2.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	d, total := count()
	t.Logf("%v after %d answers; the restart answered the rest in %v; %d answers for %d messages", sig, before, time.Since(start).Round(time.Millisecond), total, d)
	for _, bad := range []string{"subscription failed", "subscriptions not confirmed"} {
		if strings.Contains(log2.String(), bad) {
			t.Errorf("the restart logged %q:\n%s", bad, log2.String())
		}
	}
	if total != d {
		mu.Lock()
		for i, k := range seen {
			if k > 1 {
				t.Logf("message %d answered %d times", i, k)
			}
		}
		mu.Unlock()
	}
	if sig == syscall.SIGTERM && total != d {
		// A clean stop acknowledges all it handled: nothing comes twice.
		t.Errorf("%d answers for %d messages after a SIGTERM: a handled message came again", total, d)
	}
}
