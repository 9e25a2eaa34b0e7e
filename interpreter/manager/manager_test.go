package manager

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is a manager over a simulated device layer whose engine the test
// steps, recording every behavior's lifecycle trace.
type rig struct {
	t    *testing.T
	mg   *Manager
	dev  *interpreter.Devices
	dir  string
	logs *observer.ObservedLogs

	mu     sync.Mutex
	traces map[string][]string

	stepMu sync.Mutex
}

func newRig(t *testing.T) *rig {
	t.Helper()
	e, err := hal.NewEngine(hal.NAOTree(), hal.NewSim(), hal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := motion.NewPlayer(e, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	e.Step(0)
	core, logs := observer.New(zapcore.DebugLevel)
	r := &rig{t: t, dev: &interpreter.Devices{Engine: e, Player: p}, dir: t.TempDir(), logs: logs, traces: map[string][]string{}}
	r.mg = New(Options{
		Log:     zap.New(core),
		Load:    seatml.LoadOptions{ScriptsDir: "../../examples/scripts"},
		Machine: interpreter.Options{Log: zap.New(core), Devices: r.dev, ScriptTimeout: 200 * time.Millisecond},
		Trace: func(b, step string) {
			if strings.HasPrefix(step, "fire:") || strings.HasPrefix(step, "send:") || strings.HasPrefix(step, "reply:") || strings.HasPrefix(step, "timeout:") {
				return
			}
			r.mu.Lock()
			r.traces[b] = append(r.traces[b], step)
			r.mu.Unlock()
		},
	})
	t.Cleanup(r.mg.StopAll)
	return r
}

// file writes a behavior; name is general@name.
func (r *rig) file(name, general, states string) string {
	path := filepath.Join(r.dir, name+".seatml")
	src := `<seatml><general name="` + name + `"><adaptor name="chat" type="socket" role="server" port="0"/>` + general + `</general>` + states + `</seatml>`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return path
}

// load loads a file and maybe starts it, failing the test on an error.
func (r *rig) load(file string, start bool) string {
	r.t.Helper()
	info, err := r.mg.Load(file)
	if err != nil {
		r.t.Fatal(err)
	}
	if start {
		if _, err := r.mg.Start(info.Name); err != nil {
			r.t.Fatal(err)
		}
	}
	return info.Name
}

// take returns and clears a behavior's trace; files are traced under their
// path until compiled.
func (r *rig) take(names ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, n := range names {
		out = append(out, r.traces[n]...)
		delete(r.traces, n)
	}
	return out
}

func (r *rig) expect(what string, want []string, names ...string) {
	r.t.Helper()
	if diff := cmp.Diff(want, r.take(names...)); diff != "" {
		r.t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// step runs the engine to engine time until.
func (r *rig) step(until time.Duration) {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	e := r.dev.Engine
	for now := e.Now() + 10*time.Millisecond; now <= until; now += 10 * time.Millisecond {
		e.Step(now)
	}
}

// background steps the engine ten times faster than real time until the
// returned function is called.
func (r *rig) background() func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				r.step(r.dev.Engine.Now() + 10*time.Millisecond)
			}
		}
	}()
	return func() { close(stop); <-done }
}

// eventually polls a condition for up to 10 s.
func (r *rig) eventually(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// say sends a line to a running behavior's chat server and returns a reader.
func (r *rig) dial(name string) (net.Conn, *bufio.Reader) {
	r.t.Helper()
	m := r.mg.Machine(name)
	addr := m.Adaptor("chat").(interface{ Addr() string }).Addr()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return c, bufio.NewReader(c)
}

const callbacks = `<script>
function onLoad() end
function onUnload() end
function onInput_onStop() end
</script>`

func TestL1Load(t *testing.T) {
	r := newRig(t)
	f := r.file("b", callbacks, `<state name="s"/>`)
	info, err := r.mg.Load(f)
	if err != nil || info.State != Loaded {
		t.Fatalf("Load = %+v, %v", info, err)
	}
	r.expect("L1", []string{"compile", "lua:open", "general", "onLoad", "adaptors:open"}, f, "b")
}

func TestL2FailedLoadUndoes(t *testing.T) {
	r := newRig(t)
	f := r.file("g", `<script>
error("general fails")</script>`, `<state name="s"/>`)
	if _, err := r.mg.Load(f); err == nil {
		t.Fatal("a failing general script loaded")
	}
	r.expect("L2 general error", []string{"compile", "lua:open", "general", "lua:close"}, f, "g")
	busy, _ := net.Listen("tcp", "127.0.0.1:0")
	defer busy.Close()
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	f = r.file("a", callbacks+`<adaptor name="taken" type="socket" role="server" port="`+port+`"/>`, `<state name="s"/>`)
	if _, err := r.mg.Load(f); err == nil || !strings.Contains(err.Error(), "is already in use") || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("busy port: %v", err)
	}
	r.expect("L2 adaptor error", []string{"compile", "lua:open", "general", "onLoad", "adaptors:open", "adaptors:close", "onUnload", "lua:close"}, f, "a")
	if info, _ := r.mg.Info("a"); info.State != Unloaded {
		t.Errorf("state %s", info.State)
	}
}

func TestL3NoAdaptorDuringLoad(t *testing.T) {
	r := newRig(t)
	f := r.file("b", `<script>function onLoad() seat.send("chat", "too early") end</script>`, `<state name="s"/>`)
	if _, err := r.mg.Load(f); err != nil {
		t.Fatal(err)
	}
	if n := r.logs.FilterMessage("message not sent: adaptor not active").Len(); n != 1 {
		t.Errorf("logged %d times, want 1", n)
	}
}

func TestL4Start(t *testing.T) {
	r := newRig(t)
	f := r.file("b", callbacks, `<state name="first"/><state name="start"/>`)
	if _, err := r.mg.Load(f); err != nil {
		t.Fatal(err)
	}
	r.take(f, "b")
	info, err := r.mg.Start("b")
	if err != nil || info.State != Running || info.SEATMLState != "start" {
		t.Fatalf("Start = %+v, %v", info, err)
	}
	// The configuration of a flat behavior too (issue 33: the control API
	// left active out for one state).
	if len(info.Active) != 1 || info.Active[0] != "start" {
		t.Errorf("Active = %q, want [start]", info.Active)
	}
	r.expect("L4 from loaded", []string{"enter:start"}, "b")
	if _, err := r.mg.Start("b"); err == nil {
		t.Error("double start succeeded")
	}
	r.expect("L4 while running: empty trace", nil, "b")
	r.mg.Stop("b")
	r.take("b")
	if _, err := r.mg.Start("b"); err != nil {
		t.Fatal(err)
	}
	r.expect("L4 from unloaded", []string{"compile", "lua:open", "general", "onLoad", "adaptors:open", "enter:start"}, "b")
}

func TestL5LoadedNotRunning(t *testing.T) {
	r := newRig(t)
	f := r.file("b", `<script>ok, motionErr = pcall(seat.motion, {scripts = "Nod"})</script>`,
		`<state name="s"><rule><key>err</key><script>seat.reply(tostring(ok) .. " " .. motionErr)</script></rule><rule><key>x</key><script>seat.reply("handled")</script></rule></state>`)
	if _, err := r.mg.Load(f); err != nil {
		t.Fatal(err)
	}
	m := r.mg.Machine("b")
	c, err := net.Dial("tcp", m.Adaptor("chat").(interface{ Addr() string }).Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("x\nx\n"))
	r.eventually("dropped", func() bool { i, _ := r.mg.Info("b"); return i.Dropped == 2 })
	r.mg.Start("b")
	c.Write([]byte("err\n"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "false ") || !strings.Contains(line, "not running") {
		t.Errorf("seat.motion while loaded: %q", line)
	}
}

func TestL6StopAfterRunningList(t *testing.T) {
	r := newRig(t)
	f := r.file("b", callbacks, `<state name="s"><onexit><log>bye</log></onexit>
<rule><key>slow</key><script><![CDATA[local t = os.clock(); while os.clock() - t < 0.1 do end]]></script></rule>
<rule><key>x</key><log>never</log></rule></state>`)
	r.load(f, true)
	r.take(f, "b")
	c, _ := r.dial("b")
	c.Write([]byte("slow\n"))
	m := r.mg.Machine("b")
	r.eventually("slow running", func() bool { return r.logs.FilterMessage("rule fired").Len() > 0 })
	c.Write([]byte("x\n"))
	_ = m
	info, err := r.mg.Stop("b")
	if err != nil || info.State != Unloaded {
		t.Fatalf("Stop = %+v, %v", info, err)
	}
	r.expect("L6", []string{"exit:s", "onInput_onStop", "motions:stop", "motions:ended", "adaptors:close", "onUnload", "lua:close"}, "b")
	if r.logs.FilterMessage("never").Len() != 0 {
		t.Error("an event reached the rules after exit began")
	}
	if _, err := r.mg.Stop("b"); err == nil {
		t.Error("stopping a stopped behavior succeeded")
	}
}

func TestL7L10StopMidMotion(t *testing.T) {
	r := newRig(t)
	f := r.file("b", `<script>h = nil</script>`, `<state name="s">
<rule><key>go</key><script>h = seat.motion{name = "w", scripts = "NaoWave", stop = "Stand"}</script></rule>
<rule><key>cursor</key><script>local k = h:cursor(); seat.reply(tostring(k))</script></rule></state>`)
	r.load(f, true)
	c, rd := r.dial("b")
	c.Write([]byte("go\ncursor\n"))
	if line, _ := rd.ReadString('\n'); line != "0\n" {
		t.Errorf("cursor at acceptance %q, want 0", line)
	}
	r.step(r.dev.Engine.Now() + 900*time.Millisecond) // frame 2 (800..1200 ms)
	c.Write([]byte("cursor\n"))
	if line, _ := rd.ReadString('\n'); line != "2\n" {
		t.Errorf("cursor in frame 2 %q", line)
	}
	elbow := r.dev.Engine.Tree().Joint("RElbowRoll")
	stop := r.background()
	t0 := r.dev.Engine.Now()
	r.mg.Stop("b")
	stop()
	// The motion finished frame 2 and played the stop pose (1000 ms) before
	// releasing: well within the frame plus 5 s.
	if d := r.dev.Engine.Now() - t0; d < 1000*time.Millisecond || d > 5*time.Second+400*time.Millisecond {
		t.Errorf("stop took %v of engine time", d)
	}
	if owner, held := r.dev.Player.Owner("RElbowRoll"); held {
		t.Errorf("joint still held by %q", owner)
	}
	if v := r.dev.Engine.Value(elbow.Position); v < elbow.Position.Min || v > elbow.Position.Max || v > 0.75 {
		t.Errorf("RElbowRoll %v after the stop pose, want Stand's 0.711", v)
	}
}

func TestL8Unload(t *testing.T) {
	r := newRig(t)
	f := r.file("b", callbacks, `<state name="s"/>`)
	r.mg.Load(f)
	r.take(f, "b")
	if info, err := r.mg.Unload("b"); err != nil || info.State != Unloaded {
		t.Fatalf("Unload = %+v, %v", info, err)
	}
	r.expect("L8 loaded", []string{"adaptors:close", "onUnload", "lua:close"}, "b")
	r.mg.Start("b")
	r.take("b")
	r.mg.Unload("b")
	r.expect("L8 running = L6", []string{"exit:s", "onInput_onStop", "motions:stop", "motions:ended", "adaptors:close", "onUnload", "lua:close"}, "b")
	if _, err := r.mg.Unload("b"); err == nil {
		t.Error("unloading an unloaded behavior succeeded")
	}
}

func TestL9AdaptorsCloseBeforeOnUnload(t *testing.T) {
	r := newRig(t)
	f := r.file("b", `<script>function onUnload() seat.send("chat", "too late") end</script>`, `<state name="s"/>`)
	r.mg.Load(f)
	r.mg.Unload("b")
	if n := r.logs.FilterMessage("message not sent: adaptor not active").Len(); n != 1 {
		t.Errorf("logged %d times, want 1", n)
	}
}

// competing returns a rig with behavior "low" playing NaoWave at priority
// 1 and "high" about to take the arm; lowGeneral adds callbacks to low.
func competing(t *testing.T, lowGeneral string) *rig {
	r := newRig(t)
	low := r.file("low", lowGeneral, `<state name="s"><onentry><motion name="wave" script="NaoWave" priority="1"/></onentry>
<rule source="motion"><key>(lost|error|done):</key><log>motion event</log></rule></state>`)
	high := r.file("high", "", `<state name="s"><rule><key>take</key><motion name="arm" script="NaoWave" priority="5"/></rule>
<rule><key>wait</key><motion name="late" script="NaoWave" priority="5" timeout="300"/></rule></state>`)
	for _, f := range []string{low, high} {
		if _, err := r.mg.Load(f); err != nil {
			t.Fatal(err)
		}
	}
	r.mg.Start("low")
	r.mg.Start("high")
	r.step(r.dev.Engine.Now() + 100*time.Millisecond)
	r.take(low, high, "low", "high")
	return r
}

func TestL11LostWithCallback(t *testing.T) {
	r := competing(t, `<script>function onResourceLost(m, joints) lost = m .. " " .. joints end</script>`)
	c, _ := r.dial("high")
	c.Write([]byte("take\n"))
	r.eventually("callback", func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.traces["low"]) > 0 })
	r.expect("L11", []string{"onResourceLost:wave"}, "low")
	if owner, _ := r.dev.Player.Owner("RElbowRoll"); owner != "high" {
		t.Errorf("ownership did not move: %q", owner)
	}
	if info, _ := r.mg.Info("low"); info.State != Running || info.Reason != "lost:wave: RShoulderPitch,RShoulderRoll,RElbowRoll" {
		t.Errorf("low: %+v", info)
	}
}

func TestL12LostWithoutCallback(t *testing.T) {
	r := competing(t, "")
	c, _ := r.dial("high")
	c.Write([]byte("take\n"))
	r.eventually("event", func() bool { return r.logs.FilterMessage("motion event").Len() > 0 })
	r.expect("L12", []string{"event:motion/lost:wave"}, "low")
	if info, _ := r.mg.Info("low"); info.State != Running || !strings.HasPrefix(info.Reason, "lost:wave") {
		t.Errorf("low: %+v", info)
	}
}

func TestL13ErrorWithAndWithoutCallback(t *testing.T) {
	for _, withCallback := range []bool{true, false} {
		t.Run(fmt.Sprint("callback=", withCallback), func(t *testing.T) {
			general := ""
			want := []string{"event:motion/error:late"}
			if withCallback {
				general = `<script>function onResourceError(m, reason) end</script>`
				want = []string{"onResourceError:late"}
			}
			r := newRig(t)
			holder := r.file("holder", "", `<state name="s"><onentry><motion name="hold" script="NaoWave" priority="9"/></onentry></state>`)
			asker := r.file("asker", general, `<state name="s"><rule><key>wait</key><motion name="late" script="NaoWave" priority="5" timeout="300"/></rule>
<rule source="motion"><key>error:</key><log>motion event</log></rule></state>`)
			r.load(holder, true)
			r.load(asker, true)
			r.take(holder, asker, "holder", "asker")
			c, _ := r.dial("asker")
			c.Write([]byte("wait\n"))
			r.eventually("asked", func() bool { return r.logs.FilterMessage("motion").Len() >= 2 })
			r.step(r.dev.Engine.Now() + 400*time.Millisecond)
			r.eventually("error", func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.traces["asker"]) > 0 })
			r.expect("L13", want, "asker")
			info, _ := r.mg.Info("asker")
			if info.State != Running || info.Reason != "error:late: resource timeout: RShoulderPitch held by holder/hold" {
				t.Errorf("asker: %+v", info)
			}
		})
	}
}

func TestL14Done(t *testing.T) {
	r := newRig(t)
	f := r.file("b", `<script>function onResourceLost() end</script>`, `<state name="s"><onentry><motion name="nod" script="Nod"/></onentry>
<rule source="motion"><key>done:nod$</key><log>motion event</log></rule></state>`)
	r.load(f, true)
	r.take(f, "b")
	r.step(r.dev.Engine.Now() + 1000*time.Millisecond)
	r.eventually("done", func() bool { return r.logs.FilterMessage("motion event").Len() > 0 })
	if _, held := r.dev.Player.Owner("HeadPitch"); held {
		t.Error("joint not released")
	}
	r.expect("L14", []string{"event:motion/done:nod"}, "b")
}

func TestL15CallbackErrors(t *testing.T) {
	r := newRig(t)
	f := r.file("b", `<script>function onUnload() error("unload fails") end
function onInput_onStop() while true do end end</script>`, `<state name="s"/>`)
	r.load(f, true)
	r.take(f, "b")
	r.mg.Stop("b")
	r.expect("L15", []string{"exit:s", "onInput_onStop", "motions:stop", "motions:ended", "adaptors:close", "onUnload", "lua:close"}, "b")
	errs := 0
	for _, e := range r.logs.FilterLevelExact(zapcore.ErrorLevel).All() {
		if strings.Contains(e.ContextMap()["error"].(string), "onUnload: ") || strings.Contains(e.ContextMap()["error"].(string), "time limit") {
			errs++
		}
	}
	if errs != 2 {
		t.Errorf("%d callback errors logged, want 2", errs)
	}
	f = r.file("c", `<script>function onLoad() error("onLoad fails") end</script>`, `<state name="s"/>`)
	if _, err := r.mg.Load(f); err == nil || !strings.Contains(err.Error(), "onLoad fails") {
		t.Errorf("onLoad error: %v", err)
	}
	r.expect("L15 onLoad fails the load", []string{"compile", "lua:open", "general", "onLoad", "lua:close"}, f, "c")
}

func TestL16DuplicateNameAndIsolation(t *testing.T) {
	r := newRig(t)
	a := r.file("same", "", `<state name="s"/>`)
	if _, err := r.mg.Load(a); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(r.dir, "other.seatml")
	data, _ := os.ReadFile(a)
	os.WriteFile(other, data, 0o644)
	if _, err := r.mg.Load(other); err == nil || !strings.Contains(err.Error(), "already loaded") {
		t.Errorf("duplicate name: %v", err)
	}
	if info, _ := r.mg.Info("same"); info.State != Loaded || info.File != a {
		t.Errorf("the first behavior changed: %+v", info)
	}
}

func TestRunawayInOneBehaviorOtherKeepsAnswering(t *testing.T) {
	r := newRig(t)
	loop := r.file("loop", "", `<state name="s"><rule><key>spin</key><script>while true do end</script></rule></state>`)
	echo := r.file("echo", "", `<state name="s"><rule><key>ping</key><script>seat.reply("pong")</script></rule></state>`)
	r.load(loop, true)
	r.load(echo, true)
	lc, _ := r.dial("loop")
	ec, erd := r.dial("echo")
	for range 5 {
		lc.Write([]byte("spin\n"))
	}
	start := time.Now()
	for i := range 20 {
		ec.Write([]byte("ping\n"))
		if line, err := erd.ReadString('\n'); err != nil || line != "pong\n" {
			t.Fatalf("echo reply %d: %q %v", i, line, err)
		}
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Logf("20 pings took %v while the other behavior spun (not a failure: a loaded machine)", d)
	}
	if info, _ := r.mg.Info("loop"); info.State != Running {
		t.Errorf("the runaway's behavior is %s, want still running", info.State)
	}
}

func TestStopMidMotionIsSafe(t *testing.T) {
	r := newRig(t)
	f := r.file("b", "", `<state name="s"><onentry><motion name="kick" script="Stand.yaml,KickRight.yaml,Stand.yaml"/></onentry></state>`)
	r.load(f, true)
	r.step(r.dev.Engine.Now() + 2500*time.Millisecond) // mid-kick
	tree := r.dev.Engine.Tree()
	check := func(when string) {
		for _, j := range tree.Joints {
			for _, s := range []*hal.SubDevice{j.Position, j.Sensor} {
				if v := r.dev.Engine.Value(s); v < s.Min || v > s.Max {
					t.Fatalf("%s: %s at %v, outside %v..%v", when, s.Name, v, s.Min, s.Max)
				}
			}
		}
	}
	stopped := make(chan struct{})
	go func() { r.mg.StopAll(); close(stopped) }()
	for done := false; !done; {
		select {
		case <-stopped:
			done = true
		default:
			r.step(r.dev.Engine.Now() + 10*time.Millisecond)
			check("while stopping")
			time.Sleep(100 * time.Microsecond)
		}
	}
	// Then the process ramps hardness down over a second.
	knee := tree.Joint("LKneePitch").Hardness
	before := r.dev.Engine.Value(knee)
	end := r.dev.Engine.RampDown(time.Second)
	r.step(r.dev.Engine.Now() + 500*time.Millisecond)
	half := r.dev.Engine.Value(knee)
	r.step(end)
	check("after the ramp")
	if before != 1 || half < 0.45 || half > 0.55 || r.dev.Engine.Value(knee) != 0 {
		t.Errorf("hardness %v, then %v half way, then %v; want 1, 0.5, 0", before, half, r.dev.Engine.Value(knee))
	}
}

func TestStopOneLeavesTheOtherAndFailedLoadHarmsNone(t *testing.T) {
	r := newRig(t)
	echo := `<state name="s"><rule><key>ping</key><script>seat.reply("pong")</script></rule></state>`
	r.load(r.file("one", "", echo), true)
	r.load(r.file("two", "", echo), true)
	c, rd := r.dial("two")
	if _, err := r.mg.Stop("one"); err != nil {
		t.Fatal(err)
	}
	busy, _ := net.Listen("tcp", "127.0.0.1:0")
	defer busy.Close()
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	if _, err := r.mg.Load(r.file("broken", `<adaptor name="x" type="socket" role="server" port="`+port+`"/>`, echo)); err == nil {
		t.Fatal("a load on a busy port succeeded")
	}
	c.Write([]byte("ping\n"))
	if line, err := rd.ReadString('\n'); err != nil || line != "pong\n" {
		t.Fatalf("two: %q %v", line, err)
	}
	for name, want := range map[string]State{"one": Unloaded, "two": Running, "broken": Unloaded} {
		if info, _ := r.mg.Info(name); info.State != want {
			t.Errorf("%s is %s, want %s", name, info.State, want)
		}
	}
}

// TestBreakBeforeStart: a breakpoint set on a behavior loaded and not
// started is set at once (it used to wait 15 s for a machine that was not
// running), and stops the behavior once it starts.
func TestBreakBeforeStart(t *testing.T) {
	f := filepath.Join(t.TempDir(), "b.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="b"/><state name="一"><ontimeout timeout="0.05"><statetransition>二</statetransition></ontimeout></state><state name="二"/></seatml>`), 0o644)
	mg := New(Options{Log: zap.NewNop(), Debug: true})
	defer mg.StopAll()
	if _, err := mg.Load(f); err != nil {
		t.Fatal(err)
	}
	d, err := mg.Debugger("b")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := d.Break(interpreter.Breakpoint{Kind: interpreter.BreakState, Name: "二"})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("break on a behavior not started has not returned within 5 s")
	}
	if _, err := mg.Start("b"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s := d.Summary(); !s.Paused || s.Why != "breakpoint 1: entering 二"; s = d.Summary() {
		if time.Now().After(deadline) {
			t.Fatalf("not stopped on entering 二: %+v", s)
		}
		time.Sleep(time.Millisecond)
	}
	if err := d.Continue(); err != nil {
		t.Fatal(err)
	}
}
