package interpreter

import (
	"bufio"
	"context"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/interpreter/seatml"
)

const msec = time.Millisecond

func loadWithDevices(t *testing.T, src string, opts seatml.LoadOptions) (*seatml.Program, *Devices, func(*Options)) {
	t.Helper()
	if opts.ScriptsDir == "" {
		opts.ScriptsDir = "../examples/scripts"
	}
	prog, diags := seatml.LoadBytes("t.seatml", []byte(src), opts)
	if prog == nil {
		t.Fatal(diags)
	}
	d, tweak := withDevices(t, prog)
	return prog, d, tweak
}

// TestTouchWaveExample runs examples/touch-wave.seatml: a tap on the head
// starts the wave, a second tap preempts it with stand.
func TestTouchWaveExample(t *testing.T) {
	data, err := os.ReadFile("../examples/touch-wave.seatml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(data), `port="5002"`, `port="0"`, 1)
	prog, d, tweak := loadWithDevices(t, src, seatml.LoadOptions{})
	if len(prog.Diagnostics) != 0 {
		t.Errorf("diagnostics: %v", prog.Diagnostics)
	}
	h := startProgram(t, prog, tweak)
	c, err := net.DialTimeout("tcp", addrOf(t, h, "console"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	h.waitLog("client connected")
	read := func() string {
		t.Helper()
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(line, "\n")
	}
	tap := func() {
		t.Helper()
		c.Write([]byte("touch\n"))
		h.eventually("pressed", func() bool {
			v, _ := h.m.L.GetGlobal("pressed").(interface{ String() string })
			return v != nil && v.String() == "true"
		})
		stepUntil(t, d.Engine, d.Engine.Now()+10*msec) // the engine reads 1
		h.advance(100 * msec)                          // the next tick releases it
		stepUntil(t, d.Engine, d.Engine.Now()+10*msec)
	}
	tap()
	h.eventually("waving", func() bool { return h.m.State() == "waving" })
	if got := read(); got != "waving; touch again to stand" {
		t.Fatalf("got %q", got)
	}
	stepUntil(t, d.Engine, d.Engine.Now()+1500*msec)
	tap()
	defer func() {
		if t.Failed() {
			t.Logf("trace %q", h.take())
		}
	}()
	h.eventually("standing", func() bool { return h.m.State() == "standing" })
	got := []string{read(), read()}
	want := []string{"standing up", "lost:wave RShoulderPitch,RShoulderRoll,RElbowRoll"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// done:stand fires the state's rule; the general catch-all is not tried.
	stepUntil(t, d.Engine, d.Engine.Now()+1600*msec)
	if got := read(); got != "standing; touch to wave" {
		t.Errorf("got %q", got)
	}
	h.eventually("idle", func() bool { return h.m.State() == "idle" })
	c.Write([]byte("where\n"))
	if got := read(); got != "state idle, RElbowRoll 0.71" {
		t.Errorf("where: %q, want the elbow at Stand's 0.71", got)
	}
}

func TestMemoryRuleSeesPressAndRelease(t *testing.T) {
	prog, d, tweak := loadWithDevices(t, doc("", `<state name="s">`+
		rule(`source="memory"`, `<key>Device/SubDeviceList/Head/Touch/Front/Sensor/Value</key><script sendto="chat">return event.text .. " " .. rtc_in_data .. " " .. event.key</script>`)+
		`</state>`), seatml.LoadOptions{})
	h := startProgram(t, prog, tweak)
	h.take()
	d.Engine.Inject("Head/Touch/Front/Sensor", 1)
	stepUntil(t, d.Engine, 20*msec)
	h.eventually("press", func() bool { return len(h.trace) > 0 })
	d.Engine.Inject("Head/Touch/Front/Sensor", 0)
	stepUntil(t, d.Engine, 40*msec)
	key := "Device/SubDeviceList/Head/Touch/Front/Sensor/Value"
	h.eventually("release", func() bool { return len(h.trace) >= 4 })
	want := []string{"chat:1 1 " + key, "chat:0 0 " + key}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSeatGetSetAndSetTimed(t *testing.T) {
	prog, d, tweak := loadWithDevices(t, doc("", `<state name="s">`+
		rule("", `<key>get</key><script sendto="chat">local v, age = seat.get("HeadYaw/Position/Sensor/Value"); local g, gage = seat.get("Device/SubDeviceList/HeadYaw/Position/Actuator/Gain"); local t = seat.get("Device/SubDeviceList/LKneePitch/Temperature/Sensor/Value"); return v .. " " .. age .. " " .. gage .. " " .. t .. " " .. tostring(seat.get("no/such/key"))</script>`)+
		rule("", `<key>ramp</key><script>seat.set("ChestBoard/Led/Green/Actuator", 1, 100)</script>`)+
		rule("", `<key>timed</key><script>seat.set_timed("Ears/Led/Left/0Deg/Actuator", {{1, 50}, {0, 100}}); seat.set_timed("Ears/Led/Left/0Deg/Actuator", {{0.4, 75}}, "Merge")</script>`)+
		rule("", `<key>mem</key><script>seat.set("my/flag", true); seat.set("my/list", {1, "a"}); seat.subscribe("my/")</script>`)+
		rule("", `<key>config</key><script>seat.set("Device/SubDeviceList/HeadYaw/Position/Actuator/Gain", 2)</script>`)+
		rule("", `<key>mode</key><script>seat.set_timed("Ears/Led/Left/0Deg/Actuator", {{1, 50}}, "Sometimes")</script>`)+
		rule("", `<key>absurd</key><script>seat.set_timed("Ears/Led/Left/0Deg/Actuator", {{1, 1e300}})</script>`)+
		rule("", `<key>negative</key><script>seat.set("ChestBoard/Led/Green/Actuator", 1, -5)</script>`)+
		rule(`source="memory"`, `<key>my/</key><script sendto="chat">return event.key .. "=" .. event.text</script>`)+
		`</state>`), seatml.LoadOptions{})
	h := startProgram(t, prog, tweak)
	h.take()
	stepUntil(t, d.Engine, 50*msec)
	h.event("chat", "get")
	// A sensor is read every cycle (age 0); the gain was written at 0.
	if diff := cmp.Diff([]string{"chat:0 0 50 50 nil"}, h.sends()); diff != "" {
		t.Errorf("seat.get (-want +got):\n%s", diff)
	}
	h.event("chat", "ramp")
	stepUntil(t, d.Engine, 100*msec)
	led := d.Engine.Tree().Sub("ChestBoard/Led/Green/Actuator")
	if v := d.Engine.Value(led); math.Abs(v-0.5) > 0.01 {
		t.Errorf("half way through a 100 ms ramp: %v", v)
	}
	stepUntil(t, d.Engine, 150*msec)
	if v := d.Engine.Value(led); v != 1 {
		t.Errorf("after the ramp: %v", v)
	}
	h.event("chat", "timed")
	ear := d.Engine.Tree().Sub("Ears/Led/Left/0Deg/Actuator")
	var ats []time.Duration
	for _, c := range d.Engine.Buffered(ear) {
		ats = append(ats, c.At-150*msec)
	}
	if diff := cmp.Diff([]time.Duration{50 * msec, 75 * msec, 100 * msec}, ats); diff != "" {
		t.Errorf("set_timed buffer (-want +got):\n%s", diff)
	}
	h.event("chat", "mem")
	if v, _, _ := d.Engine.Memory().Get("my/flag"); v != true {
		t.Errorf("my/flag = %v", v)
	}
	h.event("chat", "config")
	h.event("chat", "mode")
	h.event("chat", "absurd")   // overflowed a duration (issue 11)
	h.event("chat", "negative") // a time in the past
	errs := h.logged(zapcore.ErrorLevel)
	if len(errs) != 4 || !strings.Contains(errs[0], "is device configuration and cannot be set") || !strings.Contains(errs[1], `mode "Sometimes" is not one of`) ||
		!strings.Contains(errs[2], "1e+300 ms is out of range: allowed 0 to 86400000 ms") || !strings.Contains(errs[3], "-5 ms is out of range") {
		t.Errorf("errors %q", errs)
	}
}

func TestDoneEventForUnnamedChain(t *testing.T) {
	prog, d, tweak := loadWithDevices(t, doc("", `<state name="s">`+
		rule("", `<key>go</key><motion script="Stand.yaml,KickRight,Stand.yaml" duration="2875"/>`)+
		rule(`source="motion"`, `<key>done:Stand-KickRight-Stand$</key><script sendto="chat">return event.key .. " " .. event.text</script>`)+
		`</state>`), seatml.LoadOptions{})
	h := startProgram(t, prog, tweak)
	h.take()
	h.event("chat", "go")
	stepUntil(t, d.Engine, 2870*msec)
	h.sync()
	if got := h.sends(); len(got) != 0 {
		t.Fatalf("done before the end: %q", got)
	}
	stepUntil(t, d.Engine, 2890*msec)
	h.eventually("done", func() bool { return len(h.trace) > 0 })
	if diff := cmp.Diff([]string{"chat:done:Stand-KickRight-Stand completed"}, h.sends()); diff != "" {
		t.Error(diff)
	}
}

func TestLuaMotionHandle(t *testing.T) {
	prog, d, tweak := loadWithDevices(t, doc("", `<state name="s">`+
		rule("", `<key>nod</key><script>h = seat.motion{name = "nod", priority = 1, scripts = {{
  {duration = 300, targets = {{id = "HEAD_PITCH", position = 0.3, gain = 10}}}}}}</script>`)+
		rule("", `<key>cursor</key><script sendto="chat">local k, ms = h:cursor(); return h.name .. " " .. k .. " " .. ms</script>`)+
		rule("", `<key>commands</key><script sendto="chat">local c = h:commands(); return #c .. " " .. c[1].joint .. " " .. c[1].position .. " " .. c[1].servo</script>`)+
		rule("", `<key>named</key><script>h = seat.motion{scripts = "Nod", start = 100}</script>`)+
		rule("", `<key>stop</key><script>h:stop(true)</script>`)+
		rule("", `<key>bad</key><script>seat.motion{scripts = {"../etc/passwd"}}</script>`)+
		`</state>`), seatml.LoadOptions{})
	h := startProgram(t, prog, tweak)
	h.take()
	h.event("chat", "nod")
	stepUntil(t, d.Engine, 100*msec)
	h.event("chat", "cursor")
	h.event("chat", "commands")
	stepUntil(t, d.Engine, 400*msec)
	h.event("chat", "cursor")
	// Accepted at 0, the motion starts at the next cycle (10 ms).
	want := []string{"chat:nod 1 90", "chat:1 HeadPitch 0.3 HEAD_PITCH", "chat:nod -1 390"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	h.event("chat", "named")
	h.event("chat", "cursor")
	h.event("chat", "stop")
	stepUntil(t, d.Engine, 420*msec)
	h.event("chat", "cursor")
	h.event("chat", "bad")
	want = []string{"chat:Nod 0 0", "chat:Nod -1 -80"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if errs := h.logged(zapcore.ErrorLevel); len(errs) != 1 || !strings.Contains(errs[0], `no ".." and no absolute paths`) {
		t.Errorf("errors %q", errs)
	}
}

func TestSetRefusedOnAnotherBehaviorsJoint(t *testing.T) {
	srcA := strings.Replace(doc("", `<state name="s">`+rule("", `<key>wave</key><motion name="w" script="NaoWave" priority="3"/>`)+`</state>`), `name="t"`, `name="a"`, 1)
	progA, d, tweak := loadWithDevices(t, srcA, seatml.LoadOptions{})
	srcB := strings.Replace(doc("", `<state name="s">`+
		rule("", `<key>arm</key><script>seat.set("RShoulderPitch/Position/Actuator", 0)</script>`)+
		rule("", `<key>led</key><script>seat.set("ChestBoard/Led/Red/Actuator", 1)</script>`+msg("led set"))+
		`</state>`), `name="t"`, `name="b"`, 1)
	progB, diags := seatml.LoadBytes("b.seatml", []byte(srcB), seatml.LoadOptions{ScriptsDir: "../examples/scripts"})
	if progB == nil {
		t.Fatal(diags)
	}
	ha := startProgram(t, progA, tweak)
	hb := startProgram(t, progB, tweak)
	ha.event("chat", "wave")
	if owner, _ := d.Player.Owner("RShoulderPitch"); owner != "a" {
		t.Fatalf("owner %q", owner)
	}
	hb.take()
	hb.event("chat", "arm")
	hb.event("chat", "led")
	if diff := cmp.Diff([]string{"chat:led set"}, hb.sends()); diff != "" {
		t.Error(diff)
	}
	errs := hb.logged(zapcore.ErrorLevel)
	if len(errs) != 1 || !strings.Contains(errs[0], `joint RShoulderPitch is held by a motion of "a"`) {
		t.Errorf("errors %q", errs)
	}
}

func TestScriptsDirAndServosOverride(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"flag", "general"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
		os.WriteFile(filepath.Join(dir, d, "Look.yaml"), []byte("- {duration: 100, targets: [{id: HEAD_PITCH, position: 0.2, gain: 5}]}\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "flag", "servos.yaml"), []byte("HEAD_PITCH: {joint: HeadYaw, scale: 2}\nR_ELBOW: \"\"\n"), 0o644)
	src := `<seatml><general name="x" scripts="general"/><state name="s"><onentry><motion script="Look"/></onentry></state></seatml>`
	path := filepath.Join(dir, "x.seatml")
	os.WriteFile(path, []byte(src), 0o644)
	prog, diags := seatml.Load(path, seatml.LoadOptions{ScriptsDir: filepath.Join(dir, "flag")})
	if prog == nil {
		t.Fatal(diags)
	}
	if prog.ScriptsDir != filepath.Join(dir, "flag") {
		t.Errorf("--scripts must beat general@scripts: %s", prog.ScriptsDir)
	}
	if m := prog.Servos[19]; m.Joint != "HeadYaw" || m.Scale != 2 {
		t.Errorf("HEAD_PITCH maps to %+v", m)
	}
	if m := prog.Servos[4]; m.Joint != "" {
		t.Errorf("R_ELBOW not disabled: %+v", m)
	}
	d, tweak := withDevices(t, prog)
	startProgram(t, prog, tweak)
	yaw := d.Engine.Tree().Joint("HeadYaw").Position
	if b := d.Engine.Buffered(yaw); len(b) != 1 || math.Abs(b[0].Value-0.4) > 1e-9 {
		t.Errorf("HeadYaw commands %v, want 0.4 (2 x 0.2)", b)
	}
	prog2, _ := seatml.Load(path, seatml.LoadOptions{})
	if prog2.ScriptsDir != filepath.Join(dir, "general") {
		t.Errorf("general@scripts: %s", prog2.ScriptsDir)
	}
	os.WriteFile(filepath.Join(dir, "flag", "servos.yaml"), []byte("HEAD_PITCH: Neck\nKNEE_X: RKneePitch\n"), 0o644)
	_, diags = seatml.Load(path, seatml.LoadOptions{ScriptsDir: filepath.Join(dir, "flag")})
	got := diags.Error()
	if !strings.Contains(got, `servos.yaml:1:13: servo HEAD_PITCH: unknown joint "Neck"`) || !strings.Contains(got, `servos.yaml:2:1: unknown servo "KNEE_X"`) {
		t.Errorf("diagnostics:\n%s", got)
	}
	_ = hal.SubPrefix
}

func TestDeviceLoopStartsOnlyWhenUsed(t *testing.T) {
	// Issue 11: the 100 Hz device loop ran for every behavior. It starts
	// with a behavior whose file uses devices, or at a script's first
	// device call; a behavior that never touches them never starts it.
	for _, c := range []struct {
		name, src string
		atStart   bool
	}{
		{"memory source", doc("", `<state name="s"><rule source="memory"><key>Device/SubDeviceList/Head/Touch/Front/Sensor/Value</key></rule></state>`), true},
		{"motion action", doc("", `<state name="s"><rule><key>go</key><motion script="Nod"/></rule></state>`), true},
		{"no devices", doc("", `<state name="s">`+rule("", `<key>get</key><script>seat.get("HeadYaw/Position/Sensor/Value")</script>`)+`</state>`), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog, d, tweak := loadWithDevices(t, c.src, seatml.LoadOptions{})
			if prog.UsesDevices != c.atStart {
				t.Fatalf("UsesDevices = %v, want %v", prog.UsesDevices, c.atStart)
			}
			var starts atomic.Int32
			d.Start = func() { starts.Add(1) }
			h := startProgram(t, prog, tweak)
			if got := starts.Load() > 0; got != c.atStart {
				t.Fatalf("started at start-up: %v, want %v", got, c.atStart)
			}
			if !c.atStart {
				h.event("chat", "hello") // no device call: still not started
				if starts.Load() != 0 {
					t.Fatal("started without a device call")
				}
				h.event("chat", "get")
				if starts.Load() == 0 {
					t.Fatal("seat.get did not start the device loop")
				}
			}
		})
	}
}

// TestFinishedMotionsAreForgotten: a behavior that starts a motion again
// and again keeps only those still playing: after 200 nods, one after the
// other, the stop has one motion or none to wait for. (Issue 21: every
// motion was kept until the behavior stopped; 8,029 after 72 s.)
func TestFinishedMotionsAreForgotten(t *testing.T) {
	prog, d, tweak := loadWithDevices(t, doc("", `<state name="s">`+
		rule("", `<key>nod</key><script>seat.motion{name = "nod", priority = 1, scripts = {{
  {duration = 20, targets = {{id = "HEAD_PITCH", position = 0.3, gain = 10}}}}}}</script>`)+
		`</state>`), seatml.LoadOptions{})
	h := startProgram(t, prog, tweak)
	for i := range 200 {
		h.event("chat", "nod")
		stepUntil(t, d.Engine, time.Duration(i+1)*50*msec)
	}
	h.sync()
	var n int
	h.m.Sync(context.Background(), func() {
		h.m.dev.mu.Lock()
		n = len(h.m.dev.motions)
		h.m.dev.mu.Unlock()
	})
	if n > 1 {
		t.Errorf("%d motions kept after 200 played one after the other", n)
	}
}
