package bench

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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
// and with 16 in flight.
//
// Where the processes run decides the figures more than anything they
// do: on two processors, waking a process on the other one costs more
// than the work, and on one processor a wake-up is nearly free. Left to
// the scheduler, the C++ pair lands on one processor in some runs and
// doubles its rate. So both placements are measured, each pinned
// (taskset): "split", the drivers on processor 0 and the echoes (this
// process, which serves seat, and the C++ echo) on processor 1, as two
// components on a multi-core machine usually run; and "shared", all on
// processor 0, where what remains is the work per value.
//
// For each it reports the round trips per second, seat's over the
// floor's (the goal is at least 0.8), the processor time each echo
// spends per round trip, and seat's allocations per round trip.
func BenchmarkOpenRTMEchoRatio(b *testing.B) {
	bin := omnitest.RTCPeer(b)
	ns := omnitest.StartNameServer(b)
	b.Setenv("RTCTREE_NAMESERVERS", ns.Addr)
	orb := []string{"-ORBInitRef", "NameService=" + ns.Corbaloc}
	drvS := omnitest.Start(b, "ready", bin, append([]string{"serve", "DrvS.rtc"}, orb...)...)
	drvC := omnitest.Start(b, "ready", bin, append([]string{"serve", "DrvC.rtc"}, orb...)...)
	echo := omnitest.Start(b, "ready", bin, append([]string{"serve", "Echo.rtc", "TimedString", "echo"}, orb...)...)
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
	self := os.Getpid()
	restore := affinity(b, self)
	defer pin(b, self, restore)
	n := b.N
	b.ResetTimer()
	for _, placement := range []struct{ name, drivers, echoes string }{{"split", "0", "1"}, {"shared", "0", "0"}} {
		if placement.drivers != placement.echoes && runtime.NumCPU() < 2 {
			continue
		}
		for _, pid := range []int{drvS.Pid(), drvC.Pid()} {
			pin(b, pid, placement.drivers)
		}
		for _, pid := range []int{echo.Pid(), self} {
			pin(b, pid, placement.echoes)
		}
		for _, window := range []int{1, 16} {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			c0 := selfCPU(b)
			seatRate := benchRun(b, drvS, n, window)
			seatCPU := selfCPU(b) - c0
			runtime.ReadMemStats(&m1)
			e0 := echo.CPU(b)
			floorRate := benchRun(b, drvC, n, window)
			floorCPU := echo.CPU(b) - e0
			w := fmt.Sprintf("%s-w%d-", placement.name, window)
			b.ReportMetric(seatRate, w+"seat-rt/s")
			b.ReportMetric(floorRate, w+"cxx-rt/s")
			b.ReportMetric(seatRate/floorRate, w+"seat/cxx")
			b.ReportMetric(float64(seatCPU.Microseconds())/float64(n), w+"seat-cpu-µs/rt")
			b.ReportMetric(float64(floorCPU.Microseconds())/float64(n), w+"cxx-cpu-µs/rt")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(n), w+"seat-allocs/rt")
		}
	}
}

// pin sets the processors every thread of a process may run on ("0",
// "0-1"); threads made later inherit it from the thread that makes them.
func pin(b *testing.B, pid int, cpus string) {
	if out, err := exec.Command("taskset", "-a", "-pc", cpus, strconv.Itoa(pid)).CombinedOutput(); err != nil {
		b.Fatalf("taskset -a -pc %s %d: %v\n%s", cpus, pid, err, out)
	}
}

// affinity is the processors a process may run on now, as taskset
// lists them.
func affinity(b *testing.B, pid int) string {
	out, err := exec.Command("taskset", "-pc", strconv.Itoa(pid)).Output()
	if err != nil {
		b.Fatalf("taskset -pc %d: %v", pid, err)
	}
	_, list, ok := strings.Cut(strings.TrimSpace(string(out)), ": ")
	if !ok {
		b.Fatalf("taskset -pc %d printed %q", pid, out)
	}
	return list
}

// selfCPU is the processor time this process has used, user and system.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
