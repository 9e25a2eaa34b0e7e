package bench

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/openrtm/omnitest"
	"github.com/seatml/seat/interpreter/seatml"
)

// rtcEcho is seat's echo: each TimedString on "in" goes back on "out",
// from a keyed rule's <message>, the driver's ports connected by
// connect=.
const rtcEcho = `<seatml><general name="SeatEcho">
  <adaptor name="in" type="rtcin" connect="DrvS.rtc:out"/>
  <adaptor name="out" type="rtcout" connect="DrvS.rtc:in"/>
</general>
<state name="s"><rule source="in"><key>ping</key><message sendto="out">ping</message></rule></state></seatml>`

// BenchmarkOpenRTMEchoRatio: TimedString round trips over OpenRTM's
// corba_cdr push, from an omniORB C++ driver component, to seat echoing
// (a keyed rule's <message>) and, side by side in the same run, to an
// omniORB C++ echo component, the floor: one at a time (latency bound)
// and with 16 in flight. It reports each one's round trips per second
// and seat's over the floor's (the goal is at least 0.8).
func BenchmarkOpenRTMEchoRatio(b *testing.B) {
	bin := omnitest.RTCPeer(b)
	ns := omnitest.StartNameServer(b)
	b.Setenv("RTCTREE_NAMESERVERS", ns.Addr)
	orb := []string{"-ORBInitRef", "NameService=" + ns.Corbaloc}
	drvS := omnitest.Start(b, "ready", bin, append([]string{"serve", "DrvS.rtc"}, orb...)...)
	drvC := omnitest.Start(b, "ready", bin, append([]string{"serve", "DrvC.rtc"}, orb...)...)
	omnitest.Start(b, "ready", bin, append([]string{"serve", "Echo.rtc", "TimedString", "echo"}, orb...)...)
	for _, c := range [][2]string{{"DrvC.rtc:out", "Echo.rtc:in"}, {"Echo.rtc:out", "DrvC.rtc:in"}} {
		if out, err := ns.Run(b, bin, "con", c[0], c[1]); err != nil || !strings.HasPrefix(out, "rc: RTC_OK") {
			b.Fatalf("con %s %s: %v %s", c[0], c[1], err, out)
		}
	}
	prog, diags := seatml.LoadBytes("echo.seatml", []byte(rtcEcho), seatml.LoadOptions{})
	if prog == nil {
		b.Fatal(diags)
	}
	_, stop := serve(b, prog)
	defer stop()
	drvS.WaitLines(b, "connected: ", 2) // seat's connect= reached both driver ports
	n := b.N
	b.ResetTimer()
	for _, window := range []int{1, 16} {
		seatRate := benchRun(b, drvS, n, window)
		floorRate := benchRun(b, drvC, n, window)
		w := fmt.Sprintf("w%d-", window)
		b.ReportMetric(seatRate, w+"seat-rt/s")
		b.ReportMetric(floorRate, w+"cxx-rt/s")
		b.ReportMetric(seatRate/floorRate, w+"seat/cxx")
	}
}

// benchRun has a driver make n round trips with window in flight and
// returns its rate.
func benchRun(b *testing.B, drv *omnitest.Process, n, window int) float64 {
	b.Helper()
	before := len(drv.Lines("rate: "))
	drv.Send(b, fmt.Sprintf("!bench %d %d", n, window))
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if l := drv.Lines("rate: "); len(l) > before {
			r, err := strconv.ParseFloat(l[before], 64)
			if err != nil {
				b.Fatal(err)
			}
			return r
		}
		if time.Now().After(deadline) {
			b.Fatalf("no rate within 5 minutes:\n%s", drv.Output())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
