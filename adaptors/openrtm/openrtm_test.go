package openrtm

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/openrtm/omnitest"
)

func TestMain(m *testing.M) {
	watchEvery = 100 * time.Millisecond
	code := m.Run()
	omnitest.Cleanup()
	os.Exit(code)
}

// sink collects the events an adaptor delivers.
type sink chan adaptors.Event

func (s sink) Deliver(ctx context.Context, ev adaptors.Event) error {
	select {
	case s <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (s sink) EndOfInput(string) {}

func (s sink) next(t *testing.T) adaptors.Event {
	t.Helper()
	select {
	case ev := <-s:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return adaptors.Event{}
}

// open opens an rtcin (in) or rtcout of behavior on ns, logging to logs.
func open(t *testing.T, ns *omnitest.NameServer, behavior, name string, in bool, attrs map[string]string, log *zap.Logger) (adaptors.Adaptor, sink) {
	t.Helper()
	a := map[string]string{attrNameservers: ns.Addr}
	for k, v := range attrs {
		a[k] = v
	}
	ad, err := newPort(adaptors.Config{Behavior: behavior, Name: name, Attrs: a, Log: log}, in)
	if err != nil {
		t.Fatal(err)
	}
	s := make(sink, 100)
	if err := ad.Open(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ad.Close() })
	return ad, s
}

func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

// waitLog waits for a log line with the message.
func waitLog(t *testing.T, logs *observer.ObservedLogs, msg string, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for logs.FilterMessage(msg).Len() < n {
		if time.Now().After(deadline) {
			var all []string
			for _, e := range logs.All() {
				all = append(all, e.Message)
			}
			t.Fatalf("no %d× %q within 15 s; logged: %q", n, msg, all)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTimedStringBothWays: eSEAT's SimpleIO pair, str_out and str_in,
// connected by connect= to an omniORB C++ component's ports: Japanese
// lines cross both ways unchanged, one port each way, and the component
// is registered as OpenRTM names it.
func TestTimedStringBothWays(t *testing.T) {
	bin := omnitest.RTCPeer(t)
	ns := omnitest.StartNameServer(t)
	cpp := omnitest.Start(t, "ready", bin, "serve", "Peer.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)
	log, logs := observed()
	out, _ := open(t, ns, "SimpleIO", "str_out", false, map[string]string{"connect": "Peer.rtc:in"}, log)
	_, in := open(t, ns, "SimpleIO", "str_in", true, map[string]string{"connect": "Peer.rtc:out", "datatype": "RTC::TimedString"}, log)
	waitLog(t, logs, "OpenRTM connected", 2)
	host, _ := os.Hostname()
	if got := ns.Nameclt(t, "list", host+".host_cxt"); !strings.Contains(got, "SimpleIO.rtc") {
		t.Errorf("nameclt list %s.host_cxt: %q", host, got)
	}
	if err := out.Send("こんにちは、ロボットです"); err != nil {
		t.Fatal(err)
	}
	if got := cpp.WaitLines(t, "got: ", 1); got[0] != "こんにちは、ロボットです" {
		t.Errorf("the peer got %q", got)
	}
	cpp.Send(t, "はい、どうぞ")
	if ev := in.next(t); ev.Source != "str_in" || ev.Text != "はい、どうぞ" || ev.Data != nil {
		t.Errorf("event %+v", ev)
	}
	if st := out.(adaptors.StatsReporter).Stats(); st.Open != 1 || st.Accepted != 1 {
		t.Errorf("str_out stats %+v", st)
	}
	cat, err := ns.Run(t, bin, "cat", host+".host_cxt/SimpleIO.rtc")
	if err != nil || !strings.Contains(cat, "port: SimpleIO.str_out DataOutPort IDL:RTC/TimedString:1.0 connectors 1") ||
		!strings.Contains(cat, "port: SimpleIO.str_in DataInPort IDL:RTC/TimedString:1.0 connectors 1") || !strings.Contains(cat, "ec0: ACTIVE") {
		t.Errorf("rtcpeer cat: %v\n%s", err, cat)
	}
}

// TestSequenceAndNumbers: a TimedFloatSeq port takes eSEAT's
// comma-separated text and a Lua table's list, and what arrives is data
// (rtc_in_data) with its JSON as the text.
func TestSequenceAndNumbers(t *testing.T) {
	bin := omnitest.RTCPeer(t)
	ns := omnitest.StartNameServer(t)
	cpp := omnitest.Start(t, "ready", bin, "serve", "Seq.rtc", "TimedFloatSeq", "-ORBInitRef", "NameService="+ns.Corbaloc)
	log, logs := observed()
	attrs := map[string]string{"datatype": "TimedFloatSeq"}
	attrs["connect"] = "Seq.rtc:in"
	out, _ := open(t, ns, "Ctl", "cmd", false, attrs, log)
	attrs = map[string]string{"datatype": "RTC.TimedFloatSeq", "connect": "Seq.rtc:out"}
	_, in := open(t, ns, "Ctl", "sensor", true, attrs, log)
	waitLog(t, logs, "OpenRTM connected", 2)
	if err := out.Send("1.0, 2.5,3"); err != nil {
		t.Fatal(err)
	}
	if err := out.(adaptors.MessageSender).SendMessage(map[string]any{"data": []any{int64(4), 0.25}}); err != nil {
		t.Fatal(err)
	}
	if got := cpp.WaitLines(t, "got: ", 2); got[0] != "1,2.5,3" || got[1] != "4,0.25" {
		t.Errorf("the peer got %q", got)
	}
	cpp.Send(t, "0.5,1.5")
	ev := in.next(t)
	want := `{"data":[0.5,1.5],"tm":{"nsec":5,"sec":1700000000}}`
	if ev.Text != want {
		t.Errorf("text %s, want %s", ev.Text, want)
	}
	if m, ok := ev.Data.(map[string]any); !ok || len(m["data"].([]any)) != 2 {
		t.Errorf("data %#v", ev.Data)
	}
	if err := out.Send("1.0,x"); err == nil || !strings.Contains(err.Error(), "data[2]: a float cannot hold \"x\"") {
		t.Errorf("a bad element: %v", err)
	}
}

// TestPeerAndNamingServiceRestart: when the peer's process is killed and
// started again, and when the naming service restarts empty, the port
// connects again and the component registers again, each said once in
// the log; data flows after.
func TestPeerAndNamingServiceRestart(t *testing.T) {
	bin := omnitest.RTCPeer(t)
	ns := omnitest.StartNameServer(t)
	cpp := omnitest.Start(t, "ready", bin, "serve", "Peer.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)
	log, logs := observed()
	out, _ := open(t, ns, "Robot", "say", false, map[string]string{"connect": "Peer.rtc:in"}, log)
	waitLog(t, logs, "OpenRTM connected", 1)
	cpp.Kill()
	waitLog(t, logs, "OpenRTM connection lost; reconnecting", 1)
	cpp = omnitest.Start(t, "ready", bin, "serve", "Peer.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)
	waitLog(t, logs, "OpenRTM connected again", 1)
	if err := out.Send("また会いましたね"); err != nil {
		t.Fatal(err)
	}
	if got := cpp.WaitLines(t, "got: ", 1); got[0] != "また会いましたね" {
		t.Errorf("the restarted peer got %q", got)
	}
	if n := logs.FilterMessage("OpenRTM peer not reachable; retrying").Len(); n > 1 {
		t.Errorf("the outage was logged %d times", n)
	}

	host, _ := os.Hostname()
	ns.RestartEmpty()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(ns.Nameclt(t, "list"), host+".host_cxt") {
		if time.Now().After(deadline) {
			t.Fatalf("not registered again within 15 s: %s", ns.Nameclt(t, "list"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := ns.Nameclt(t, "list", host+".host_cxt"); !strings.Contains(got, "Robot.rtc") {
		t.Errorf("after the restart: %q", got)
	}
}

// TestAnotherTypeRefused: connect= to a port of another data type is
// refused, logged as an error once and counted, and nothing connects.
func TestAnotherTypeRefused(t *testing.T) {
	bin := omnitest.RTCPeer(t)
	ns := omnitest.StartNameServer(t)
	omnitest.Start(t, "ready", bin, "serve", "Long.rtc", "TimedLong", "-ORBInitRef", "NameService="+ns.Corbaloc)
	log, logs := observed()
	out, _ := open(t, ns, "Robot", "say", false, map[string]string{"connect": "Long.rtc:in"}, log)
	waitLog(t, logs, "OpenRTM connection refused", 1)
	entry := logs.FilterMessage("OpenRTM connection refused").All()[0]
	if err := entry.ContextMap()["error"]; err != "Robot.say carries RTC::TimedString and Long.in carries RTC::TimedLong: a connection would deliver what neither side can read" {
		t.Errorf("error %v", err)
	}
	waitLog(t, logs, "OpenRTM connection attempt failed", 3) // retries are not logged again
	if n := logs.FilterMessage("OpenRTM connection refused").Len(); n != 1 {
		t.Errorf("logged %d times", n)
	}
	if st := out.(adaptors.StatsReporter).Stats(); st.WrongType != 1 || st.Open != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestEveryBasicType: for each of OpenRTM's basic types the C++ peer
// marshals with omniORB's CDR, a value seat writes from eSEAT's text
// arrives as the peer reads it, and a value the peer writes arrives at
// seat as data with the same value (rtc_in_data.data).
func TestEveryBasicType(t *testing.T) {
	bin := omnitest.RTCPeer(t)
	ns := omnitest.StartNameServer(t)
	for _, c := range []struct {
		typ, send, peerGot, peerSends, data string
	}{
		{"TimedState", "-3", "-3", "7", `7`},
		{"TimedShort", "-32768", "-32768", "32767", `32767`},
		{"TimedUShort", "65535", "65535", "1", `1`},
		{"TimedLong", "-2147483648", "-2147483648", "2147483647", `2147483647`},
		{"TimedULong", "4294967295", "4294967295", "7", `7`},
		{"TimedFloat", "1.5", "1.5", "0.25", `0.25`},
		{"TimedDouble", "3.25", "3.25", "-0.5", `-0.5`},
		{"TimedOctet", "255", "255", "8", `8`},
		{"TimedChar", "A", "A", "z", `"z"`},
		{"TimedBoolean", "true", "true", "1", `true`},
		{"TimedShortSeq", "1,-2,3", "1,-2,3", "4,5", `[4,5]`},
		{"TimedLongSeq", "100000,-1", "100000,-1", "7", `[7]`},
		{"TimedUShortSeq", "1,65535", "1,65535", "2,3", `[2,3]`},
		{"TimedULongSeq", "4294967295", "4294967295", "9,8", `[9,8]`},
		{"TimedFloatSeq", "0.5,1.5", "0.5,1.5", "2.5", `[2.5]`},
		{"TimedDoubleSeq", "1.345,2", "1.345,2", "3.5,4", `[3.5,4]`},
		{"TimedOctetSeq", "0,255,7", "0,255,7", "1,2", `[1,2]`},
	} {
		t.Run(c.typ, func(t *testing.T) {
			name := "P" + c.typ + ".rtc"
			peer := omnitest.Start(t, "ready", bin, "serve", name, c.typ, "-ORBInitRef", "NameService="+ns.Corbaloc)
			log, logs := observed()
			out, _ := open(t, ns, "B"+c.typ, "out", false, map[string]string{"datatype": c.typ, "connect": name + ":in"}, log)
			_, in := open(t, ns, "B"+c.typ, "in", true, map[string]string{"datatype": c.typ, "connect": name + ":out"}, log)
			waitLog(t, logs, "OpenRTM connected", 2)
			if err := out.Send(c.send); err != nil {
				t.Fatal(err)
			}
			if got := peer.WaitLines(t, "got: ", 1); got[0] != c.peerGot {
				t.Errorf("seat wrote %q; the peer read %q, want %q", c.send, got[0], c.peerGot)
			}
			peer.Send(t, c.peerSends)
			ev := in.next(t)
			m, ok := ev.Data.(map[string]any)
			if !ok {
				t.Fatalf("event %+v", ev)
			}
			if got := adaptors.JSON(m["data"]); got != c.data {
				t.Errorf("the peer wrote %q; seat read %s, want %s", c.peerSends, got, c.data)
			}
		})
	}
}

// TestToolExit: a tool's exit takes the component out of the naming
// service and closes its ports; the adaptor says so once and stops
// trying to connect.
func TestToolExit(t *testing.T) {
	bin := omnitest.RTCPeer(t)
	ns := omnitest.StartNameServer(t)
	log, logs := observed()
	open(t, ns, "Leaver", "out", false, map[string]string{"connect": "Nobody.rtc:in"}, log)
	host, _ := os.Hostname()
	name := host + ".host_cxt/Leaver.rtc"
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(ns.Nameclt(t, "list", host+".host_cxt"), "Leaver.rtc") {
		if time.Now().After(deadline) {
			t.Fatal("not registered within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out, err := ns.Run(t, bin, "exit", name); err != nil || out != "rc: RTC_OK\n" {
		t.Fatalf("exit: %v %q", err, out)
	}
	for deadline := time.Now().Add(15 * time.Second); logs.FilterMessageSnippet("OpenRTM tool asked the component to exit").Len() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the exit was not logged within 15 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := ns.Nameclt(t, "list", host+".host_cxt"); strings.Contains(got, "Leaver.rtc") {
		t.Errorf("still bound after exit: %q", got)
	}
	if out, err := ns.Run(t, bin, "cat", name); err == nil {
		t.Errorf("the component still answers after exit:\n%s", out)
	}
}
