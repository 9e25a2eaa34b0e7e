package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/seatml/seat/adaptors/mqtt/mqtttest"
)

// TestRetainedOncePerProcess: a retained command is handled once by a
// running seat, although the broker sends it again each time seat
// subscribes after a broker restart; a new retained value is handled,
// once; event.retained tells the retained from the live.
// (Issue 20: one retained "dispense one coffee" gave 3 events after 2
// broker restarts.)
func TestRetainedOncePerProcess(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{})
	var mu sync.Mutex
	var got []string
	c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL).SetClientID("retain-test").SetOrderMatters(true).
		SetAutoReconnect(true).SetConnectRetry(true).SetMaxReconnectInterval(200 * time.Millisecond))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(100)
	subscribe := func() {
		c.Subscribe("machine/did", 1, func(_ paho.Client, m paho.Message) {
			mu.Lock()
			got = append(got, string(m.Payload()))
			mu.Unlock()
		}).WaitTimeout(10 * time.Second)
	}
	subscribe()
	publish := func(topic, text string, retain bool) {
		t.Helper()
		if tok := c.Publish(topic, 1, retain, text); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	publish("cmd/coffee", "dispense one coffee", true)

	seatFor := func() *syncBuffer {
		f := filepath.Join(t.TempDir(), "coffee.seatml")
		os.WriteFile(f, []byte(`<seatml><general name="coffee">
  <adaptor name="bus" type="mqtt" broker="`+b.URL+`" subscribe="cmd/#" publish="machine/did" qos="1"/>
</general>
<state name="s">
  <rule source="bus"><script>seat.send("bus", event.text .. (event.retained and " (retained)" or ""))</script></rule>
</state></seatml>`), 0o644)
		_, log := startSeat(t, "run", f)
		return log
	}
	// what waits until the subscriber has want (in any order), then
	// gives the broker a moment's chance to send more before comparing.
	what := func(want ...string) {
		t.Helper()
		publish("cmd/mark", "mark", false) // answered after anything sent before it
		want = append(want, "mark")
		deadline := time.Now().Add(20 * time.Second)
		for {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n >= len(want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("got %q, want %q", got, want)
		}
		got = got[:0]
	}
	restart := func(log *syncBuffer) {
		t.Helper()
		n := strings.Count(log.String(), "subscribed")
		b.Stop()
		b.Restart()
		waitForWithin(t, 30*time.Second, func() bool { return strings.Count(log.String(), "subscribed") > n })
		waitForWithin(t, 10*time.Second, func() bool { return c.IsConnectionOpen() })
		subscribe() // the test's own subscription, after the broker lost it
	}

	log := seatFor()
	waitFor(t, func() bool { return strings.Contains(log.String(), "subscribed") })
	what("dispense one coffee (retained)")
	restart(log)
	what()
	restart(log)
	what()
	// A new value, published live with retain: handled as live, and not
	// again when the broker sends it as retained after a restart.
	publish("cmd/coffee", "dispense two coffees", true)
	what("dispense two coffees")
	restart(log)
	what()
	// A live message that is not retained leaves the broker's value as it
	// was: that value, sent again, is still not new.
	publish("cmd/coffee", "pause", false)
	what("pause")
	restart(log)
	what()
	if !strings.Contains(log.String(), "connection to the broker lost") {
		t.Fatalf("the broker restarts were not noticed:\n%s", log.String())
	}

}
