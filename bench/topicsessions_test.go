package bench

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors/mqtt/mqtttest"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
)

// BenchmarkTopicSessionStart is BenchmarkSessionStart for MQTT topic
// sessions, through a real mosquitto: each op is a publication from a new
// robot, which starts its session and is answered. It reports the memory
// each idle topic session keeps (its Lua state, its sender, the
// adaptor's note of its topic) as KB/session, against the same goal of
// 100 KB.
func BenchmarkTopicSessionStart(b *testing.B) {
	br := mqtttest.Start(b, mqtttest.Options{})
	src := strings.ReplaceAll(`<seatml><general name="fleet">
<adaptor name="bus" type="mqtt" broker="{url}" subscribe="robot/+/asr" publish="robot/+/say" session="topic" maxsessions="1000000" sessionidle="0"/>
<script>heard = 0</script>
</general><state name="s"><rule><script>heard = heard + 1; seat.reply("hi " .. event.peer)</script></rule></state></seatml>`, "{url}", br.URL)
	prog, diags := seatml.LoadBytes("fleet.seatml", []byte(src), seatml.LoadOptions{})
	if prog == nil || diags.HasErrors() {
		b.Fatal(diags)
	}
	m, err := interpreter.New(prog, interpreter.Options{Log: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-m.Ready()
	answered := make(chan struct{}, 1024)
	c := paho.NewClient(paho.NewClientOptions().AddBroker(br.URL).SetClientID("robots").SetOrderMatters(true))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		b.Fatal(tok.Error())
	}
	defer c.Disconnect(100)
	c.Subscribe("robot/+/say", 0, func(paho.Client, paho.Message) { answered <- struct{}{} }).WaitTimeout(10 * time.Second)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.Publish(fmt.Sprintf("robot/%d/asr", i), 0, false, "hello")
		select {
		case <-answered:
		case <-time.After(10 * time.Second):
			b.Fatalf("robot %d not answered within 10 s; sessions %+v", i, m.SessionCounts())
		}
	}
	b.StopTimer()
	n := m.SessionCounts().Open
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if n != b.N {
		b.Fatalf("%d sessions for %d robots", n, b.N)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n)/1024, "KB/session")
}
