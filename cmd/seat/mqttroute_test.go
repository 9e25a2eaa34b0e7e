package main

import (
	"encoding/json"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/seatml/seat/adaptors/mqtt/mqtttest"
)

// TestTopicSessionRouting runs a topic session host against a real
// mosquitto with docs/mqtt.md's subscriptions plus a second "+" filter:
// a publication on fleet/cmd (a filter without "+") reaches every
// session and creates none, and a reply to it is refused instead of
// going to robot//say; robot 7 and kiosk 7 are two sessions; an empty
// level (robot//asr) is refused and counted; a Japanese id is a sender
// like any other. (Issue 20.)
func TestTopicSessionRouting(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{})
	f := filepath.Join(t.TempDir(), "route.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="route">
  <adaptor name="bus" type="mqtt" broker="`+b.URL+`" subscribe="robot/+/asr,kiosk/+/asr,fleet/cmd" publish="robot/+/say" session="topic"/>
</general>
<state name="s">
  <rule><key>count</key><script>n = (n or 0) + 1; seat.send("bus", event.topic .. " " .. n)</script></rule>
  <rule><key>all</key><message sendto="bus" topic="fleet/seen">seen</message></rule>
  <rule><key>answer</key><script>seat.reply("to " .. event.peer)</script></rule>
</state></seatml>`), 0o644)

	var mu sync.Mutex
	got := map[string][]string{}
	c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL).SetClientID("route-test").SetOrderMatters(true))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(100)
	for _, topic := range []string{"robot/+/say", "kiosk/+/say", "fleet/seen", "robot//say"} {
		c.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
			mu.Lock()
			got[m.Topic()] = append(got[m.Topic()], string(m.Payload()))
			mu.Unlock()
		}).WaitTimeout(10 * time.Second)
	}
	publish := func(topic, text string) {
		if tok := c.Publish(topic, 1, false, text); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	of := func(topic string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got[topic]...)
	}
	ctl := freePort(t)
	_, log := startSeat(t, "run", "--control", ctl, f)
	waitFor(t, func() bool {
		return strings.Contains(log.String(), "subscribed") && strings.Count(log.String(), "subscribed") >= 3
	})

	// Robot 7 counts twice, kiosk 7 once: two sessions, each its own n.
	publish("robot/7/asr", "count")
	publish("robot/7/asr", "count")
	publish("kiosk/7/asr", "count")
	// (Sessions run side by side: only each session's own order holds.)
	waitFor(t, func() bool { return len(of("robot/7/say")) == 3 })
	want := []string{"kiosk/7/asr 1", "robot/7/asr 1", "robot/7/asr 2"}
	g := of("robot/7/say")
	sort.Strings(g)
	if strings.Join(g, "|") != strings.Join(want, "|") {
		t.Errorf("robot/7/say got %q, want %q (kiosk 7 and robot 7 must not share a session)", g, want)
	}

	// fleet/cmd reaches both sessions and makes no session of its own.
	publish("fleet/cmd", "all")
	waitFor(t, func() bool { return len(of("fleet/seen")) == 2 })
	seen := of("fleet/seen")
	if strings.Join(seen, "|") != "seen|seen" {
		t.Errorf("fleet/seen: %q", seen)
	}
	// A reply to it has no sender to go to.
	publish("fleet/cmd", "answer")
	waitFor(t, func() bool { return strings.Count(log.String(), "no sender to reply to") >= 2 })

	// An empty level is refused and counted.
	publish("robot//asr", "count")
	waitFor(t, func() bool { return strings.Contains(log.String(), `empty "+" level refused`) })
	// A Japanese robot id is a sender like any other; it comes later than
	// the refused publication, so that one is done once this is answered.
	publish("robot/受付/asr", "count")
	waitFor(t, func() bool { return len(of("robot/受付/say")) == 1 })
	if g := of("robot/受付/say"); g[0] != "robot/受付/asr 1" {
		t.Errorf("robot/受付/say got %q", g)
	}
	if g := of("robot//say"); len(g) != 0 {
		t.Errorf("robot//say got %q", g)
	}
	resp, err := http.Get("http://" + ctl + "/behaviors/route")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Sessions struct{ Open, Created int }
		Adaptors []struct {
			EmptyLevel int64 `json:"empty_level"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&info)
	if info.Sessions.Open != 3 || len(info.Adaptors) != 1 || info.Adaptors[0].EmptyLevel != 1 {
		t.Errorf("sessions %+v (want robot 7, kiosk 7, robot 受付), adaptors %+v (want empty_level 1)", info.Sessions, info.Adaptors)
	}
}

// TestTopicSessionIdle: on the real binary with a real broker, a topic
// session whose robot has said nothing for sessionidle ends: its
// ondisconnect answers the robot, the session is gone from the listing,
// and the robot's next line starts a new session. (Issue 20: topic
// sessions never ended, and had no cap.)
func TestTopicSessionIdle(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{})
	f := filepath.Join(t.TempDir(), "idle.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="idle">
  <adaptor name="bus" type="mqtt" broker="`+b.URL+`" subscribe="robot/+/asr" publish="robot/+/say" session="topic" sessionidle="1"/>
  <ondisconnect source="bus"><script>seat.reply("bye after " .. n)</script></ondisconnect>
</general>
<state name="s"><rule><script>n = (n or 0) + 1; seat.reply("heard " .. n)</script></rule></state></seatml>`), 0o644)
	var mu sync.Mutex
	var got []string
	c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL).SetClientID("idle-test").SetOrderMatters(true))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(100)
	c.Subscribe("robot/+/say", 1, func(_ paho.Client, m paho.Message) {
		mu.Lock()
		got = append(got, m.Topic()+" "+string(m.Payload()))
		mu.Unlock()
	}).WaitTimeout(10 * time.Second)
	have := func(want ...string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return strings.Join(got, "|") == strings.Join(want, "|")
		}
	}
	ctl := freePort(t)
	_, log := startSeat(t, "run", "--control", ctl, f)
	waitFor(t, func() bool { return strings.Contains(log.String(), "subscribed") })
	c.Publish("robot/受付/asr", 1, false, "hello").WaitTimeout(10 * time.Second)
	c.Publish("robot/受付/asr", 1, false, "hello").WaitTimeout(10 * time.Second)
	waitFor(t, have("robot/受付/say heard 1", "robot/受付/say heard 2"))
	waitFor(t, have("robot/受付/say heard 1", "robot/受付/say heard 2", "robot/受付/say bye after 2"))
	resp, err := http.Get("http://" + ctl + "/behaviors/idle")
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Sessions struct{ Open, Created, Ended int }
	}
	json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if info.Sessions.Open != 0 || info.Sessions.Ended != 1 {
		t.Errorf("sessions %+v: want the idle one ended", info.Sessions)
	}
	c.Publish("robot/受付/asr", 1, false, "hello").WaitTimeout(10 * time.Second)
	waitFor(t, have("robot/受付/say heard 1", "robot/受付/say heard 2", "robot/受付/say bye after 2", "robot/受付/say heard 1"))
}

// TestBrokerCredentialsRedacted: a password given in the broker URL
// (tcp://alice:secret@…) or as password= logs in, and is shown nowhere:
// not in the log, seat ctl status, GET /behaviors or the monitor's source
// view. (Issue 20: it appeared in all four.)
func TestBrokerCredentialsRedacted(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{Users: map[string]string{"alice": "s3cr3t-url", "bob": "s3cr3t-attr"}})
	dir := t.TempDir()
	url := strings.Replace(b.URL, "tcp://", "tcp://alice:s3cr3t-url@", 1)
	f := filepath.Join(dir, "secret.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="secret">
  <adaptor name="bus" type="mqtt" broker="`+url+`" subscribe="a/b"/>
  <adaptor name="bus2" type="mqtt" broker="`+b.URL+`" username="bob" password="s3cr3t-attr" subscribe="a/c"/>
</general><state name="s"/></seatml>`), 0o644)
	ctl := freePort(t)
	_, log := startSeat(t, "run", "--control", ctl, f)
	waitFor(t, func() bool {
		return strings.Count(log.String(), "subscribed") == 2 && strings.Contains(log.String(), "control API")
	})
	get := func(path string) string {
		resp, err := http.Get("http://" + ctl + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return string(data)
	}
	status, _, _ := runSeat("ctl", "--control", ctl, "status", "secret")
	shown := map[string]string{
		"the log":             log.String(),
		"GET /behaviors":      get("/behaviors"),
		"GET /behaviors/NAME": get("/behaviors/secret"),
		"seat ctl status":     status,
		"the source view":     get("/monitor/source?file=" + neturl.QueryEscape(f)),
	}
	if !strings.Contains(shown["seat ctl status"], "tcp://alice:xxxxx@127.0.0.1:"+b.Port) {
		t.Errorf("seat ctl status does not name the broker as tcp://alice:xxxxx@…:\n%s", status)
	}
	if !strings.Contains(shown["the source view"], `password=&#34;xxxxx&#34;`) {
		t.Errorf("the source view:\n%s", shown["the source view"])
	}
	for where, text := range shown {
		if strings.Contains(text, "s3cr3t") {
			t.Errorf("%s shows a password:\n%s", where, text)
		}
	}
}

// TestInvalidFilterRefused: a filter MQTT forbids is refused before seat
// connects, with the rule quoted, also when it comes from --set; it used
// to pass seat check and loop through reconnections. (The full messages
// are in testdata/check/mqtt-topics.golden.)
func TestInvalidFilterRefused(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="f">
  <adaptor name="bus" type="mqtt" broker="tcp://127.0.0.1:1" subscribe="robot/+/asr"/>
</general><state name="s"/></seatml>`), 0o644)
	_, stderr, code := runSeat("run", "--set", "bus.subscribe=robot/+x/asr", f)
	if code == 0 || !strings.Contains(stderr, `"MUST occupy an entire level of the filter" (MQTT 3.1.1 §4.7.1.3)`) || strings.Contains(stderr, "not reachable") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}
