package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/openrtm/omnitest"
	"github.com/seatml/seat/adaptors/web/webtest"
)

// TestOpenRTMOnTheRealBinary: the SimpleIO example on the real binary,
// an RT-Component in omniNames whose ports seat connects (connect= by
// --set) to an omniORB C++ component's: a Japanese conversation both
// ways, the component as OpenRTM's tools see it, its connections in
// seat ctl status, and a clean exit that leaves the naming service and
// tells the peer.
func TestOpenRTMOnTheRealBinary(t *testing.T) {
	bin := omnitest.RTCPeer(t)
	ns := omnitest.StartNameServer(t)
	t.Setenv("RTCTREE_NAMESERVERS", ns.Addr)
	peer := omnitest.Start(t, "ready", bin, "serve", "Peer.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)
	control := freePort(t)
	cmd, log := startSeat(t, "run", "--control", control, "--set", "str_out.connect=Peer.rtc:in", "--set", "str_in.connect=Peer.rtc:out",
		"../../examples/openrtm/simpleio.seatml")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s\nthe peer printed:\n%s", log.String(), peer.Output())
		}
	})
	waitForWithin(t, 30*time.Second, func() bool { return strings.Count(log.String(), "OpenRTM connected") == 2 })

	peer.Send(t, "こんにちは")
	peer.Send(t, "天気は?")
	if got := peer.WaitLines(t, "got: ", 2); got[0] != "こんにちは。受付ロボットです。" || got[1] != "聞こえました: 天気は?" {
		t.Errorf("the peer got %q", got)
	}

	host, _ := os.Hostname()
	name := host + ".host_cxt/SimpleIO.rtc"
	cat, err := ns.Run(t, bin, "cat", name)
	for _, want := range []string{"instance: SimpleIO\n", "ec0: ACTIVE",
		"port: SimpleIO.str_out DataOutPort IDL:RTC/TimedString:1.0 connectors 1",
		"port: SimpleIO.str_in DataInPort IDL:RTC/TimedString:1.0 connectors 1"} {
		if err != nil || !strings.Contains(cat, want) {
			t.Errorf("rtcpeer cat %s (%v): no %q in\n%s", name, err, want, cat)
		}
	}
	out, _, _ := ctlAt(control, "status", "SimpleIO")
	for _, port := range []string{"str_out", "str_in"} {
		// ADAPTOR TYPE ADDRESS OPEN ACCEPTED ...: one connection each
		if !regexp.MustCompile(`(?m)^` + port + ` +rtc(in|out) +- +1 +1 `).MatchString(out) {
			t.Errorf("seat ctl status: %s has not one connection:\n%s", port, out)
		}
	}
	// Each connection, with how it is made and what went through it.
	for _, want := range []string{`(?m)^str_out +Peer\.in +corba_cdr push flush +2 +0 +0 +0$`, `(?m)^str_in +Peer\.out +corba_cdr push +0 +2 +0 +0$`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("seat ctl status: no line %s in\n%s", want, out)
		}
	}

	// Deactivated by a tool, the component drops what arrives, as eSEAT
	// does; activated again, it answers.
	if out, err := ns.Run(t, bin, "deact", name); err != nil || out != "rc: RTC_OK\n" {
		t.Fatalf("deact: %v %q", err, out)
	}
	peer.Send(t, "こんにちは")
	waitFor(t, func() bool {
		out, _, _ := ctlAt(control, "status", "SimpleIO")
		return strings.Contains(out, "dropped=1")
	})
	if out, err := ns.Run(t, bin, "act", name); err != nil || out != "rc: RTC_OK\n" {
		t.Fatalf("act: %v %q", err, out)
	}
	peer.Send(t, "さようなら")
	if got := peer.WaitLines(t, "got: ", 3); got[2] != "お気をつけて。" {
		t.Errorf("the peer got %q", got)
	}

	// A tool that connects a port of another data type is refused
	// (OpenRTM itself would connect it and deliver garbage), and the
	// monitor counts the refusal with the value dropped while inactive.
	omnitest.Start(t, "ready", bin, "serve", "Long.rtc", "TimedLong", "-ORBInitRef", "NameService="+ns.Corbaloc)
	if out, err := ns.Run(t, bin, "con", "Long.rtc:out", name+":str_in"); err != nil || !strings.HasPrefix(out, "rc: BAD_PARAMETER") {
		t.Errorf("con of a TimedLong port to str_in: %v %q", err, out)
	}
	if out, _, _ := ctlAt(control, "status", "SimpleIO"); !regexp.MustCompile(`(?m)^str_in +rtcin +- +1 +1 .*wrong_type=1`).MatchString(out) {
		t.Errorf("seat ctl status: str_in has not one refusal:\n%s", out)
	}
	b := webtest.Start(t)
	b.Navigate("http://" + control + "/monitor/")
	strIn := `document.querySelector('section[data-behavior="SimpleIO"] .adaptors tbody tr[title="rtcin"]')`
	b.WaitFor("str_in's refusal and drop", strIn+`.querySelector('td:nth-child(7)').textContent == "1" && `+
		strIn+`.querySelector('td:nth-child(8)').textContent == "1"`) // refused, dropped

	// Stopped, seat leaves the naming service and tells the peer its
	// connections are gone.
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("seat exited with %v", err)
	}
	if got := ns.Nameclt(t, "list", host+".host_cxt"); strings.Contains(got, "SimpleIO") {
		t.Errorf("still registered after the stop: %q", got)
	}
	peer.WaitLines(t, "disconnected: ", 2)
}

// TestOpenRTMControllerLoopOnTheRealBinary: a TimedFloatSeq controller on
// the real binary: each sensor value from the C++ component reaches a
// data rule as rtc_in_data, whose script writes a command with
// seat.send and a table, and a <message> writes eSEAT's comma-separated
// text; a value that does not fit is a logged error naming the element,
// and the loop goes on.
func TestOpenRTMControllerLoopOnTheRealBinary(t *testing.T) {
	bin := omnitest.RTCPeer(t)
	ns := omnitest.StartNameServer(t)
	t.Setenv("RTCTREE_NAMESERVERS", ns.Addr)
	peer := omnitest.Start(t, "ready", bin, "serve", "Arm.rtc", "TimedFloatSeq", "-ORBInitRef", "NameService="+ns.Corbaloc)
	rec := filepath.Join(t.TempDir(), "loop.jsonl")
	cmd, log := runROS(t, `<seatml><general name="制御">
  <adaptor name="sensor" type="rtcin" datatype="TimedFloatSeq" connect="Arm.rtc:out"/>
  <adaptor name="cmd" type="rtcout" datatype="RTC::TimedFloatSeq" connect="Arm.rtc:in"/>
</general>
<state name="loop">
  <rule source="sensor"><script>
    local d = rtc_in_data.data
    if d[1] &lt; 0 then seat.send("cmd", {data = {"broken"}}) return end
    seat.send("cmd", {data = {d[1] * 2, d[2] + 1}})
  </script></rule>
  <rule source="sensor"><cond>rtc_in_data.data[1] == 0</cond><message sendto="cmd">0.5, 0.25</message></rule>
</state></seatml>`, "loop", "--record", rec)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the peer printed:\n%s", peer.Output())
		}
	})
	waitForWithin(t, 30*time.Second, func() bool { return strings.Count(log.String(), "OpenRTM connected") == 2 })
	peer.Send(t, "1.5,2")
	peer.Send(t, "-1,0")
	peer.Send(t, "0,0")
	got := peer.WaitLines(t, "got: ", 3)
	if got[0] != "3,3" || got[1] != "0,1" || got[2] != "0.5,0.25" {
		t.Errorf("the peer got %q", got)
	}
	if want := `seat.send(\"cmd\"): RTC::TimedFloatSeq: data[1]: a float cannot hold \"broken\"`; !strings.Contains(log.String(), want) {
		t.Errorf("no %s in the log:\n%s", want, log.String())
	}
	// The recording holds the sensor's values as data and the commands
	// as tables; seat replay runs them again without OpenRTM.
	data := stopAndReplay(t, cmd, rec)
	for _, want := range []string{`"source":"sensor","text":"{\"data\":[1.5,2],\"tm\":{\"nsec\":5,\"sec\":1700000000}}","message":true`,
		`"source":"cmd","text":"{\"data\":[3,3]}"`} {
		if !strings.Contains(data, want) {
			t.Errorf("the recording has no %s:\n%s", want, data)
		}
	}
}

// TestOpenRTMHungPeerOnTheRealBinary: one of two peers of an rtcout stops
// answering (SIGSTOP: it keeps its connections and never replies). The
// other peer keeps getting every line, the behavior keeps answering, and
// when the stopped peer resumes it gets what was queued for it.
func TestOpenRTMHungPeerOnTheRealBinary(t *testing.T) {
	bin := omnitest.RTCPeer(t)
	ns := omnitest.StartNameServer(t)
	t.Setenv("RTCTREE_NAMESERVERS", ns.Addr)
	a := omnitest.Start(t, "ready", bin, "serve", "A.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)
	b := omnitest.Start(t, "ready", bin, "serve", "B.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)
	_, log := runROS(t, `<seatml><general name="Echo">
  <adaptor name="in" type="rtcin" connect="B.rtc:out"/>
  <adaptor name="out" type="rtcout" connect="A.rtc:in B.rtc:in"/>
</general>
<state name="s"><rule source="in"><key>.+</key><script sendto="out">return "echo " .. rtc_in_data</script></rule></state></seatml>`, "s")
	waitForWithin(t, 30*time.Second, func() bool { return strings.Count(log.String(), "OpenRTM connected") == 3 })
	if err := a.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"一", "二", "三"} {
		b.Send(t, s)
	}
	if got := b.WaitLines(t, "got: ", 3); got[0] != "echo 一" || got[2] != "echo 三" {
		t.Errorf("the running peer got %q", got)
	}
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if got := a.WaitLines(t, "got: ", 1); got[0] != "echo 一" {
		t.Errorf("the resumed peer got %q", got)
	}
}

// TestOpenRTMCheckUserIDLFromElsewhere: seat check, run from another
// directory, reads a behavior's own IDL beside it (idl=) and checks its
// messages against the type: a value that does not fit is an error at
// the message.
func TestOpenRTMCheckUserIDLFromElsewhere(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "idl"), 0o755); err != nil {
		t.Fatal(err)
	}
	idl := "module RobotC { struct Time { unsigned long sec; unsigned long nsec; }; struct Pose { Time tm; double x; double y; }; };\n"
	if err := os.WriteFile(filepath.Join(dir, "idl", "robot.idl"), []byte(idl), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "pose.seatml")
	if err := os.WriteFile(file, []byte(`<seatml><general name="p">
  <adaptor name="pose" type="rtcout" datatype="RobotC::Pose" idl="idl/robot.idl"/>
</general><state name="s"><rule><key>go</key>
  <message sendto="pose">{x: 1.5, y: 2}</message>
  <message sendto="pose">{x: not a number}</message>
</rule></state></seatml>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runSeat("check", file)
	if want := file + `:5:3: message to "pose" would not be sent: x: a double cannot hold "not a number"`; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d:\n%s\nwant %s", code, stderr, want)
	}
	if strings.Count(stderr, "\n") != 1 {
		t.Errorf("more than the one problem:\n%s", stderr)
	}
}
