package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/openrtm/omnitest"
)

// TestESEATOpenRTMSamples is the acceptance test of rtcin and rtcout:
// every one of eSEAT's own behaviors that use OpenRTM data ports (with
// socket, web or ROS adaptors besides), carried over by seat port -w,
// either runs on the real binary with its ports connected to an omniORB
// C++ component and checked by it, or is listed with why it needs hand
// work after seat port, and checked to be reported as such (by seat port
// or seat check). It needs a checkout of haraisao/eSEAT (MIT) named by
// SEAT_ESEAT_DIR; without one it skips.
func TestESEATOpenRTMSamples(t *testing.T) {
	repo := os.Getenv("SEAT_ESEAT_DIR")
	if repo == "" {
		t.Skip("set SEAT_ESEAT_DIR to a checkout of github.com/haraisao/eSEAT to run its OpenRTM samples")
	}
	bin := omnitest.RTCPeer(t)
	type sample struct {
		file string
		// ports are the rtcin and rtcout connected to the peer's out and
		// in ("str_in", "str_out"; "" for none).
		in, out string
		// run checks what the peer gets, or what the behavior did; nil:
		// why says why it does not run after seat port alone.
		run func(t *testing.T, peer *omnitest.Process, log *syncBuffer, name, rec string)
		why string
		// set are more --set overrides (a web adaptor's fixed port).
		set []string
		// peerType is the peer's data type (TimedString if "").
		peerType string
	}
	webPort := freePortNumber(t)
	python := "it runs Python that seat port leaves for hand work"
	samples := []sample{
		{file: "test/JuliusTestIO.seatml", in: "str_in", out: "str_out", run: func(t *testing.T, peer *omnitest.Process, log *syncBuffer, _, _ string) {
			peer.Send(t, "てすとです")
			if got := peer.WaitLines(t, "got: ", 1); got[0] != "こんにちは" {
				t.Errorf("the peer got %q", got)
			}
			waitFor(t, func() bool { return strings.Contains(log.String(), "こんにちは") })
		}},
		// What arrives sets a web page's input: the rule fires, without
		// an error, as the recording shows.
		{file: "examples/test5.seatml", in: "str_in", set: []string{"web.port=0"}, run: func(t *testing.T, peer *omnitest.Process, _ *syncBuffer, name, rec string) {
			peer.Send(t, "Hello")
			t.Cleanup(func() {
				if t.Failed() {
					b, _ := os.ReadFile(rec)
					t.Logf("the recording:\n%s", b)
				}
			})
			waitFor(t, func() bool {
				b, _ := os.ReadFile(rec)
				return strings.Contains(string(b), `"kind":"fire","behavior":"test1","at":"`+name+`:15"`)
			})
			if b, _ := os.ReadFile(rec); strings.Contains(string(b), `"kind":"error"`) {
				t.Errorf("the rule failed:\n%s", b)
			}
		}},
		{file: "examples/SimpleIO.seatml", why: "a rule names a web adaptor the file does not declare"},
		{file: "examples/SimpleIO2.seatml", why: "what arrives goes to a text widget only, and the file has no web adaptor to show it"},
		// A TimedLong from the peer goes to the web adaptor's clients; a
		// number POSTed to the web adaptor goes to the peer as a TimedLong.
		{file: "examples/SimpleIO_web.seatml", in: "in", out: "out", peerType: "TimedLong", set: []string{"web.port=" + webPort},
			run: func(t *testing.T, peer *omnitest.Process, _ *syncBuffer, _, rec string) {
				resp, err := http.Post("http://127.0.0.1:"+webPort+"/rtc_processResult", "text/plain", strings.NewReader("42"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if got := peer.WaitLines(t, "got: ", 1); got[0] != "42" {
					t.Errorf("the peer got %q", got)
				}
				peer.Send(t, "-7")
				waitFor(t, func() bool {
					b, _ := os.ReadFile(rec)
					return strings.Contains(string(b), `"kind":"out","behavior":"SimpleIO_web","source":"web","text":"-7"`)
				})
			}},
		{file: "examples/calc_ui.seatml", why: "it is a Tk calculator's buttons, and the file has no web adaptor to show them"},
		{file: "examples/ConsoleIn.seatml", why: "its onexec reads standard input with Python"},
		{file: "examples/ConsoleOut.seatml", why: "it reads the data with seat.get_in_data, which seat port leaves for hand work"},
		{file: "examples/SeqIn.seatml", why: "it reads eSEAT's port objects (readData) with Python"},
		{file: "examples/SeqOut.seatml", why: "it fills eSEAT's port objects (_data) with Python"},
		{file: "examples/calc_core.seatml", why: "it evaluates Python expressions (eval, try/except)"},
		{file: "test/JuliusTest2.seatml", why: python + " (a dictionary of Japanese numbers, str.split)"},
		{file: "examples/Sensors.seatml", why: "it switches other components with seat.activate and seat.deactivate, which seat does not have"},
		{file: "examples/RasPiWeb.seatml", why: python + " (a helper file, str.split) and switches components (seat.activate)"},
		{file: "ros_samples/JoystickWeb.seatml", why: python + " (str.split), switches components, and needs OpenRTM's IDL for TimedVelocity2D"},
		{file: "ros_samples/SimpleIO_ros.seatml", why: "a rule names an undeclared source (/joy), and it switches components"},
		{file: "examples/PA10_PosCtrl.seatml", why: "its helpers are Python files (execfile)"},
		{file: "examples/MobileGui.seatml", why: "its helpers are Python files (rtc_handle), and it calls eSEAT's Tk text functions"},
		{file: "examples/sample_rtc_handle.seatml", why: "its helpers are Python files (rtc_handle), and it calls eSEAT's Tk text functions"},
		{file: "examples/pos_mgr.seatml", why: "its helpers are Python files, and it calls eSEAT's Tk text-selection functions"},
		{file: "examples/rtcmgr.seatml", why: python + " (try/except)"},
		{file: "examples/LeapMotion.seatml", why: python + " (the ssr module) and needs the ssr IDL"},
		{file: "examples/GroboDemo.seatml", why: python + " (tuples, unbalanced brackets across lines)"},
		{file: "examples/TestGui.seatml", why: "a message names a web adaptor the file does not declare"},
		{file: "examples/test3.seatml", why: "it includes a rule file (test1.seatml) that eSEAT's repository does not have beside it"},
		{file: "examples/test4.seatml", why: "it includes a rule file (test3.seatml) from its own directory that seat port leaves as eSEAT named it"},
	}
	// Every eSEAT behavior with an rtcin or rtcout is listed.
	listed := map[string]bool{}
	for _, s := range samples {
		listed[s.file] = true
	}
	err := filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".seatml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(repo, path); (strings.Contains(string(b), `type="rtcin"`) || strings.Contains(string(b), `type="rtcout"`)) && !listed[rel] {
			t.Errorf("%s uses OpenRTM data ports and is not listed", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
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
			peerType := s.peerType
			if peerType == "" {
				peerType = "TimedString"
			}
			peer := omnitest.Start(t, "ready", bin, "serve", "Peer.rtc", peerType, "-ORBInitRef", "NameService="+ns.Corbaloc)
			rec := filepath.Join(dir, "run.jsonl")
			args := []string{"run", "--record", rec}
			ports := 0
			if s.out != "" {
				args, ports = append(args, "--set", s.out+".connect=Peer.rtc:in"), ports+1
			}
			if s.in != "" {
				args, ports = append(args, "--set", s.in+".connect=Peer.rtc:out"), ports+1
			}
			for _, o := range s.set {
				args = append(args, "--set", o)
			}
			_, log := startSeat(t, append(args, name)...)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("seat logged:\n%s\nthe peer printed:\n%s", log.String(), peer.Output())
				}
			})
			waitForWithin(t, 30*time.Second, func() bool { return strings.Count(log.String(), "OpenRTM connected") == ports })
			s.run(t, peer, log, name, rec)
		})
	}
}
