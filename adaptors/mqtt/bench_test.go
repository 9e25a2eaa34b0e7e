package mqtt_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors/mqtt/mqtttest"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
)

// BenchmarkEcho is a round trip through a real mosquitto: a client
// publishes b.N lines, pipelined, to a behavior that answers each with a
// publication of its own; it ends when the client has every answer. The
// time per op is the cost of one publication in and one out.
func BenchmarkEcho(b *testing.B) {
	for _, qos := range []string{"0", "1"} {
		b.Run("qos"+qos, func(b *testing.B) {
			br := mqtttest.Start(b, mqtttest.Options{})
			src := strings.NewReplacer("{url}", br.URL, "{qos}", qos).Replace(`<seatml><general name="echo">
<adaptor name="bus" type="mqtt" broker="{url}" subscribe="bench/in" publish="bench/out" qos="{qos}"/>
</general><state name="s"><rule source="bus"><message sendto="bus">ok</message></rule></state></seatml>`)
			prog, diags := seatml.LoadBytes("echo.seatml", []byte(src), seatml.LoadOptions{})
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
			var got atomic.Int64
			wake := make(chan struct{}, 1)
			c := paho.NewClient(paho.NewClientOptions().AddBroker(br.URL).SetClientID("bench").SetOrderMatters(true))
			if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
				b.Fatal(tok.Error())
			}
			defer c.Disconnect(100)
			q := byte(qos[0] - '0')
			var want atomic.Int64
			c.Subscribe("bench/out", q, func(paho.Client, paho.Message) {
				if got.Add(1) == want.Load() {
					wake <- struct{}{}
				}
			}).WaitTimeout(10 * time.Second)
			b.ResetTimer()
			want.Store(int64(b.N))
			for range b.N {
				c.Publish("bench/in", q, false, "hi")
			}
			select {
			case <-wake:
			case <-time.After(60 * time.Second):
				b.Fatalf("%d of %d answers within 60 s", got.Load(), b.N)
			}
		})
	}
}
