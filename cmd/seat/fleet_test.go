package main

import (
	"bufio"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/seatml/seat/adaptors/mqtt/mqtttest"
)

// TestFleetOverMQTT runs examples/fleet against a real mosquitto, each
// behavior as its own seat process: the dialogue serves two robots in
// sessions of their own; the robot-side behavior forwards what its
// recognizer hears and nods on the simulated robot when told; killing the
// dialogue publishes its last will; and a standby started with the same
// client id receives what robots said while nobody was connected.
func TestFleetOverMQTT(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{})
	var mu sync.Mutex
	got := map[string][]string{}
	opts := paho.NewClientOptions().AddBroker(b.URL).SetClientID("fleet-test").SetOrderMatters(true)
	c := paho.NewClient(opts)
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(100)
	for _, f := range []string{"robot/+/say", "robot/+/gesture", "fleet/dialogue/status"} {
		c.Subscribe(f, 1, func(_ paho.Client, m paho.Message) {
			mu.Lock()
			got[m.Topic()] = append(got[m.Topic()], string(m.Payload()))
			mu.Unlock()
		}).WaitTimeout(10 * time.Second)
	}
	last := func(topic string) string {
		mu.Lock()
		defer mu.Unlock()
		if l := got[topic]; len(l) > 0 {
			return l[len(l)-1]
		}
		return ""
	}
	publish := func(topic, text string) {
		if tok := c.Publish(topic, 1, false, text); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	seat := func(file string, args ...string) (*exec.Cmd, *syncBuffer) {
		return startSeat(t, append(append([]string{"run", "--set", "bus.broker=" + b.URL}, args...), file)...)
	}

	dialogue, dlog := seat("../../examples/fleet/dialogue.seatml")
	waitFor(t, func() bool { return last("fleet/dialogue/status") == "online" })
	publish("robot/1/asr", "hello")
	publish("robot/2/asr", "こんにちは")
	deadline := time.Now().Add(20 * time.Second)
	for !(last("robot/1/say") == "Hello, robot 1! (greeting 1)" && last("robot/2/say") == "Hello, robot 2! (greeting 1)" &&
		last("robot/1/gesture") == "nod" && last("robot/2/gesture") == "nod") {
		if time.Now().After(deadline) {
			mu.Lock()
			t.Fatalf("the two robots' greetings: got %q\n%s", got, dlog.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	publish("robot/2/asr", "who are you")
	waitFor(t, func() bool { return last("robot/2/say") == "I am the fleet's dialogue; you are robot 2." })

	// The robot side: its recognizer's line goes to the dialogue; the
	// answer comes back, and the nod plays on the simulated robot.
	port := freePortNumber(t)
	_, rlog := seat("../../examples/fleet/robot.seatml", "--set", "asr.port="+port)
	var asr net.Conn
	var err error
	waitFor(t, func() bool { asr, err = net.Dial("tcp", "127.0.0.1:"+port); return err == nil })
	defer asr.Close()
	asr.SetDeadline(time.Now().Add(30 * time.Second))
	waitFor(t, func() bool {
		return strings.Contains(rlog.String(), "subscribed") || strings.Contains(rlog.String(), "ERROR")
	})
	if strings.Contains(rlog.String(), "ERROR") {
		t.Fatalf("the robot:\n%s", rlog.String())
	}
	asr.Write([]byte("bye\nhello\n"))
	// The bye's wave and the hello's nod race on the simulated robot: the
	// wave's outcome may come in between; the rest comes in this order.
	r := bufio.NewReader(asr)
	var console []string
	for _, want := range []string{"robot says: Goodbye!", "robot says: Hello, robot 1! (greeting 2)", "robot done:nod completed"} {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("robot console %q, then %v; want %q\n%s\n%s", console, err, want, rlog.String(), dlog.String())
			}
			line = strings.TrimSuffix(line, "\n")
			console = append(console, line)
			if line == want {
				break
			}
			if !strings.HasPrefix(line, "robot done:wave ") {
				t.Fatalf("robot console %q, want %q next", console, want)
			}
		}
	}

	// Killed: the broker publishes the dialogue's will.
	dialogue.Process.Kill()
	dialogue.Wait()
	waitFor(t, func() bool { return last("fleet/dialogue/status") == "offline" })
	// Said while nobody serves the dialogue: kept for its session.
	publish("robot/3/asr", "hello")
	publish("robot/3/asr", "who are you")
	seat("../../examples/fleet/dialogue.seatml") // the standby, same client id
	waitFor(t, func() bool { return last("robot/3/say") == "I am the fleet's dialogue; you are robot 3." })
	mu.Lock()
	defer mu.Unlock()
	if l := got["robot/3/say"]; len(l) != 2 || l[0] != "Hello, robot 3! (greeting 1)" {
		t.Errorf("robot 3 got %q", l)
	}
	if l := got["fleet/dialogue/status"]; strings.Join(l, ",") != "online,offline,online" {
		t.Errorf("status: %q", l)
	}
}
