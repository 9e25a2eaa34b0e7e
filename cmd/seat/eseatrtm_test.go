package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/openrtm/omnitest"
)

// TestESEATOpenRTMSamples is the acceptance test of rtcin and rtcout:
// eSEAT's own behaviors that use only OpenRTM data ports (and socket or
// web adaptors), carried over by seat port -w, run on the real binary
// with their ports connected to an omniORB C++ component, and checked by
// it. It needs a checkout of haraisao/eSEAT (MIT) named by
// SEAT_ESEAT_DIR; without one it skips. Those that need hand work after
// seat port are listed with why, and checked to be reported as such.
func TestESEATOpenRTMSamples(t *testing.T) {
	repo := os.Getenv("SEAT_ESEAT_DIR")
	if repo == "" {
		t.Skip("set SEAT_ESEAT_DIR to a checkout of github.com/haraisao/eSEAT to run its OpenRTM samples")
	}
	bin := omnitest.RTCPeer(t)
	type sample struct {
		file string
		// run connects the ports to the peer and checks what it gets;
		// nil: why says why it does not run after seat port alone.
		run func(t *testing.T, peer *omnitest.Process, log *syncBuffer)
		why string
	}
	samples := []sample{
		{file: "test/JuliusTestIO.seatml", run: func(t *testing.T, peer *omnitest.Process, log *syncBuffer) {
			peer.Send(t, "てすとです")
			if got := peer.WaitLines(t, "got: ", 1); got[0] != "こんにちは" {
				t.Errorf("the peer got %q", got)
			}
			waitFor(t, func() bool { return strings.Contains(log.String(), "こんにちは") })
		}},
		{file: "examples/SimpleIO.seatml", why: "a rule names a web adaptor the file does not declare"},
		{file: "examples/SimpleIO2.seatml", why: "what arrives goes to a text widget only, and the file has no web adaptor to show it"},
		{file: "examples/ConsoleIn.seatml", why: "its onexec reads standard input with Python"},
		{file: "examples/ConsoleOut.seatml", why: "it reads the data with seat.get_in_data, which seat port leaves for hand work"},
		{file: "examples/SeqIn.seatml", why: "it reads eSEAT's port objects (readData) with Python"},
		{file: "examples/SeqOut.seatml", why: "it fills eSEAT's port objects (_data) with Python"},
		{file: "examples/calc_core.seatml", why: "it evaluates Python expressions (eval, try/except)"},
	}
	for _, s := range samples {
		t.Run(strings.TrimSuffix(filepath.Base(s.file), ".seatml"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(repo, s.file))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			name := filepath.Join(dir, filepath.Base(s.file))
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, portErr, portCode := runSeat("port", "-w", name)
			_, checkErr, checkCode := seatProcess(t, dir, "check", filepath.Base(name))
			if s.run == nil {
				if portCode == 0 && checkCode == 0 && !strings.Contains(checkErr, "warning") {
					t.Errorf("listed as not running (%s), but seat port and seat check report nothing", s.why)
				}
				t.Logf("not run: %s", s.why)
				return
			}
			if portCode != 0 || checkCode != 0 {
				t.Fatalf("seat port (exit %d):\n%s\nseat check (exit %d):\n%s", portCode, portErr, checkCode, checkErr)
			}
			ns := omnitest.StartNameServer(t)
			t.Setenv("RTCTREE_NAMESERVERS", ns.Addr)
			peer := omnitest.Start(t, "ready", bin, "serve", "Peer.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)
			_, log := startSeat(t, "run", "--set", "str_out.connect=Peer.rtc:in", "--set", "str_in.connect=Peer.rtc:out", name)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("seat logged:\n%s\nthe peer printed:\n%s", log.String(), peer.Output())
				}
			})
			waitForWithin(t, 30*time.Second, func() bool { return strings.Count(log.String(), "OpenRTM connected") == 2 })
			s.run(t, peer, log)
		})
	}
}
