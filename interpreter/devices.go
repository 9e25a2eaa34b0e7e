package interpreter

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/srcfile"
	"github.com/seatml/seat/schema"
)

// Devices is the device layer a machine drives: the engine and the motion
// player over it. Several machines may share one.
type Devices struct {
	Engine *hal.Engine
	Player *motion.Player
	// Start, if set, starts the engine's control loop; it must be safe to
	// call many times. Machines call it when a behavior that uses devices
	// starts (Program.UsesDevices) and before any device function or
	// motion runs. Without it the caller runs the loop itself.
	Start func()
}

// start makes sure the control loop runs.
func (d *Devices) start() {
	if d.Start != nil {
		d.Start()
	}
}

// memoryBuffer is the event buffer of each memory subscription.
const memoryBuffer = 256

// devLink is a running machine's connection to the device layer.
type devLink struct {
	dev *Devices
	// deliver queues a device event for the machine's goroutine (never
	// run inline: the device loop's thread must not run scripts).
	deliver func(context.Context, adaptors.Event) error
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	subs    map[string]*hal.Subscription
	events  chan motion.Event
	motions []*motion.Motion
	scripts map[string]*motion.Script
}

// startDevices subscribes to the memory keys of source="memory" rules and
// forwards memory and motion events to the machine's queue.
func (m *Machine) startDevices() {
	if m.opts.Devices == nil {
		return
	}
	if m.prog.UsesDevices {
		m.opts.Devices.start()
	}
	ctx, cancel := context.WithCancel(context.Background())
	deliver := func(ctx context.Context, ev adaptors.Event) error { return m.in.deliver(ctx, ev, false) }
	m.dev = &devLink{dev: m.opts.Devices, deliver: deliver, ctx: ctx, cancel: cancel, subs: map[string]*hal.Subscription{},
		events: make(chan motion.Event, 256), scripts: map[string]*motion.Script{}}
	for _, p := range memoryPrefixes(m.prog) {
		m.subscribe(p)
	}
	if m.opts.ManualDevices {
		return
	}
	m.dev.wg.Add(1)
	go func() {
		defer m.dev.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-m.dev.events:
				if err := m.in.deliver(ctx, adaptors.Event{Source: "motion", Key: e.Key(), Text: e.Text}, false); err != nil {
					return
				}
			}
		}
	}()
}

// stopDevices is L7: each motion finishes its current frame or plays its
// stop pose and releases its joints, waiting requests are cancelled; past
// motionStopLimit of engine time, the rest is cleared with a warning. Then
// event forwarding stops.
func (m *Machine) stopDevices() {
	if m.dev == nil {
		return
	}
	m.dev.mu.Lock()
	motions := slices.DeleteFunc(m.dev.motions, finished) // those that ended have nothing to stop
	m.dev.motions = nil
	m.dev.mu.Unlock()
	m.step("motions:stop")
	if len(motions) > 0 {
		names := make([]string, len(motions))
		for i, mo := range motions {
			names[i] = mo.Name()
		}
		m.log.Info("stopping motions: each finishes its frame or plays its stop pose", zap.Strings("motions", names))
	}
	for _, mo := range motions {
		mo.Stop(m.opts.ManualDevices) // nothing steps the engine while a manual run stops
	}
	m.waitMotions(motions)
	m.step("motions:ended")
	m.dev.mu.Lock()
	for _, s := range m.dev.subs {
		s.Close()
	}
	m.dev.subs = map[string]*hal.Subscription{}
	m.dev.mu.Unlock()
	m.dev.cancel()
	m.dev.wg.Wait()
}

// engineStall is how long the engine time may stand still, in wall time,
// before stopping stops waiting for motions: the engine is not cycling.
const engineStall = time.Second

// waitMotions waits until motions end, for at most motionStopLimit of
// engine time, or until the engine stops cycling.
func (m *Machine) waitMotions(motions []*motion.Motion) {
	e := m.dev.dev.Engine
	start := e.Now()
	last, lastWall := start, time.Now()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for _, mo := range motions {
		for {
			select {
			case <-mo.Done():
			case <-tick.C:
				now := e.Now()
				if now != last {
					last, lastWall = now, time.Now()
				}
				if now-start <= motionStopLimit && time.Since(lastWall) <= engineStall {
					continue
				}
				m.log.Warn("motion did not end within the stop limit; its commands are cleared",
					zap.String("motion", mo.Name()), zap.Duration("limit", motionStopLimit))
				mo.Stop(true)
				<-mo.Done()
			}
			break
		}
	}
}

// memoryPrefixes returns the literal leading parts of the keys of
// source="memory" rules (an SCXML document's: the keys its transitions'
// memory.KEY events name), without prefixes covered by shorter ones.
func memoryPrefixes(p *seatml.Program) []string {
	var all []string
	if p.Document != nil {
		all = p.SCXMLMemoryKeys()
	}
	for _, r := range p.Rules {
		for _, w := range r.Words {
			if w.Source != "memory" {
				continue
			}
			lit := w.Text
			if i := strings.IndexAny(lit, `\.+*?{}^$`); i >= 0 {
				lit = lit[:i]
			}
			all = append(all, lit)
		}
	}
	var out []string
	for _, a := range all {
		covered := false
		for _, b := range all {
			if b != a && strings.HasPrefix(a, b) || b == a && slices.Contains(out, a) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, a)
		}
	}
	return out
}

func (m *env) subscribe(prefix string) {
	d := m.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.subs[prefix]; ok {
		return
	}
	sub := d.dev.Engine.Memory().Subscribe(prefix, memoryBuffer)
	d.subs[prefix] = sub
	if m.opts.ManualDevices {
		return
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for e := range sub.C() {
			if err := d.deliver(d.ctx, adaptors.Event{Source: "memory", Key: e.Key, Text: e.Text()}); err != nil {
				return
			}
		}
	}()
}

func (m *env) unsubscribe(prefix string) bool {
	d := m.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	sub, ok := d.subs[prefix]
	if ok {
		sub.Close()
		delete(d.subs, prefix)
	}
	return ok
}

// notifyMotion is the player's callback: it must not block.
func (m *env) notifyMotion(e motion.Event) {
	select {
	case m.dev.events <- e:
	default:
		m.log.Error("motion event dropped: the behavior is not keeping up", zap.String("key", e.Key()))
	}
}

// owner names the motions of this machine: the behavior, or for a session
// the behavior and its peer, so that sessions take joints from each other
// by priority as behaviors do.
func (m *env) owner() string {
	if m.opts.session != nil {
		return m.prog.Name + "#" + m.opts.session.Peer()
	}
	return m.prog.Name
}

// play starts a motion for this behavior.
func (m *env) play(req motion.Request) (*motion.Motion, error) {
	if m.dev == nil {
		return nil, fmt.Errorf("no device layer")
	}
	req.Owner = m.owner()
	req.Notify = m.notifyMotion
	req.Start += m.dev.dev.Engine.Now()
	mo, err := m.dev.dev.Player.Play(req)
	if err != nil {
		return nil, err
	}
	m.dev.mu.Lock()
	// Finished motions are forgotten: a behavior that plays one per tick
	// for days keeps only those still playing (the stop waits for them).
	m.dev.motions = slices.DeleteFunc(m.dev.motions, finished)
	m.dev.motions = append(m.dev.motions, mo)
	m.dev.mu.Unlock()
	m.log.Info("motion", zap.String("name", mo.Name()), zap.Int("priority", req.Priority))
	return mo, nil
}

// runMotion runs a <motion> action.
func (m *seatmlBehavior) runMotion(a *seatml.Action) {
	if m.dev != nil {
		m.dev.dev.start()
	}
	d := a.Motion
	_, err := m.play(motion.Request{Name: d.Name, Priority: d.Priority, Scripts: d.Scripts, Duration: d.Duration,
		Multiplier: d.Multiplier, Start: d.Start, Timeout: d.Timeout, StopPose: d.Stop})
	if err != nil {
		m.log.Error("motion failed", zap.String("at", a.Pos.String()), zap.Error(err))
	}
}

func (m *env) devicesOrError(L *lua.LState, fn string) *Devices {
	switch {
	case m.dev != nil:
		m.dev.dev.start()
		return m.dev.dev
	case m.opts.Devices != nil:
		L.RaiseError("seat.%s: the behavior is loaded but not running", fn)
	default:
		L.RaiseError("seat.%s: no device layer in this run", fn)
	}
	return nil
}

// luaGet is seat.get(key): value and age in ms, nil if unknown.
func (m *env) luaGet(L *lua.LState) int {
	dev := m.devicesOrError(L, "get")
	key := L.CheckString(1)
	if s, ok := dev.Engine.Tree().Resolve(key); ok && isValueKey(key) {
		key = s.Key("Value")
	}
	v, at, ok := dev.Engine.Memory().Get(key)
	if !ok {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(toLua(L, v))
	L.Push(lua.LNumber(float64(dev.Engine.Now()-at) / float64(time.Millisecond)))
	return 2
}

// isValueKey reports whether a key names a subdevice's Value: its path,
// with or without the prefix and "/Value".
func isValueKey(key string) bool {
	return !strings.HasPrefix(key, "Device/") || strings.HasPrefix(key, hal.SubPrefix)
}

// luaSet is seat.set(key, v [, ms]).
func (m *env) luaSet(L *lua.LState) int {
	dev := m.devicesOrError(L, "set")
	key := L.CheckString(1)
	if s, ok := dev.Engine.Tree().Resolve(key); ok && isValueKey(key) {
		v := float64(L.CheckNumber(2))
		if !s.IsActuator() {
			if err := dev.Engine.Inject(s.Name, v); err != nil {
				L.RaiseError("seat.set: %v", err)
			}
			return 0
		}
		m.checkJointFree(L, s)
		at := dev.Engine.Now() + checkMillis(L, 3, float64(L.OptNumber(3, 0)))
		if err := dev.Engine.SetSub(s, []hal.Command{{Value: v, At: at}}, hal.ClearAll); err != nil {
			L.RaiseError("seat.set: %v", err)
		}
		return 0
	}
	if strings.HasPrefix(key, "Device/") {
		L.RaiseError("seat.set: %q is device configuration and cannot be set", key)
	}
	v, err := luadm.FromLua(L.Get(2))
	if err == nil {
		err = dev.Engine.Memory().Set(key, v)
	}
	if err != nil {
		L.RaiseError("seat.set: %v", err)
	}
	return 0
}

// checkJointFree refuses writes to a joint another behavior's motion holds.
func (m *env) checkJointFree(L *lua.LState, s *hal.SubDevice) {
	p := m.dev.dev.Player
	if p == nil {
		return
	}
	if j := p.JointOf(s); j != "" {
		if owner, held := p.Owner(j); held && owner != m.owner() {
			L.RaiseError("seat.set: joint %s is held by a motion of %q", j, owner)
		}
	}
}

// luaSetTimed is seat.set_timed(key, {{v, ms}, ...} [, mode]).
func (m *env) luaSetTimed(L *lua.LState) int {
	dev := m.devicesOrError(L, "set_timed")
	key := L.CheckString(1)
	tbl := L.CheckTable(2)
	mode := hal.ClearAll
	if L.GetTop() >= 3 {
		var err error
		if mode, err = hal.ParseMode(L.CheckString(3)); err != nil {
			L.ArgError(3, err.Error())
		}
	}
	s, ok := dev.Engine.Tree().Resolve(key)
	if !ok || !s.IsActuator() {
		L.RaiseError("seat.set_timed: %q is not an actuator", key)
	}
	m.checkJointFree(L, s)
	now := dev.Engine.Now()
	var cmds []hal.Command
	tbl.ForEach(func(_, v lua.LValue) {
		pair, ok := v.(*lua.LTable)
		if !ok {
			L.ArgError(2, "want a list of {value, ms} pairs")
		}
		val, okv := pair.RawGetInt(1).(lua.LNumber)
		ms, okm := pair.RawGetInt(2).(lua.LNumber)
		if !okv || !okm {
			L.ArgError(2, "want a list of {value, ms} pairs")
		}
		cmds = append(cmds, hal.Command{Value: float64(val), At: now + checkMillis(L, 2, float64(ms))})
	})
	if err := dev.Engine.SetSub(s, cmds, mode); err != nil {
		L.RaiseError("seat.set_timed: %v", err)
	}
	return 0
}

func (m *env) luaSubscribe(L *lua.LState) int {
	m.devicesOrError(L, "subscribe")
	m.subscribe(L.CheckString(1))
	return 0
}

func (m *env) luaUnsubscribe(L *lua.LState) int {
	m.devicesOrError(L, "unsubscribe")
	L.Push(lua.LBool(m.unsubscribe(L.CheckString(1))))
	return 1
}

// luaMotion is seat.motion{scripts=..., name=..., priority=..., ...}: it
// returns a handle with stop, cursor, commands and name.
func (m *env) luaMotion(L *lua.LState) int {
	m.devicesOrError(L, "motion")
	opts := L.CheckTable(1)
	num := func(k string, def float64) float64 {
		switch v := opts.RawGetString(k).(type) {
		case lua.LNumber:
			return float64(v)
		case *lua.LNilType:
			return def
		default:
			L.ArgError(1, k+" must be a number")
		}
		return def
	}
	msec := func(k string, def float64) time.Duration {
		return checkMillis(L, 1, num(k, def))
	}
	req := motion.Request{
		Priority:   int(num("priority", 0)),
		Duration:   msec("duration", 0),
		Multiplier: num("multiplier", 0),
		Start:      msec("start", 0),
		Timeout:    msec("timeout", float64(motion.DefaultTimeout/time.Millisecond)),
	}
	if n, ok := opts.RawGetString("name").(lua.LString); ok {
		req.Name = string(n)
	}
	req.Scripts = m.luaScripts(L, opts.RawGetString("scripts"), "scripts")
	if len(req.Scripts) == 0 {
		L.ArgError(1, "scripts is required")
	}
	if stop := opts.RawGetString("stop"); stop != lua.LNil {
		req.StopPose = m.luaScripts(L, stop, "stop")
	}
	mo, err := m.play(req)
	if err != nil {
		L.RaiseError("seat.motion: %v", err)
	}
	L.Push(m.motionHandle(L, mo))
	return 1
}

// luaScripts reads script names or inline scripts (tables of frames).
func (m *env) luaScripts(L *lua.LState, v lua.LValue, field string) []*motion.Script {
	var items []lua.LValue
	switch x := v.(type) {
	case lua.LString:
		for _, n := range strings.Split(string(x), ",") {
			items = append(items, lua.LString(strings.TrimSpace(n)))
		}
	case *lua.LTable:
		x.ForEach(func(_, item lua.LValue) { items = append(items, item) })
	default:
		L.ArgError(1, field+" must be a name, a list of names or a list of inline scripts")
	}
	var out []*motion.Script
	for i, item := range items {
		switch x := item.(type) {
		case lua.LString:
			s, err := m.namedScript(string(x))
			if err != nil {
				L.RaiseError("seat.motion: %v", err)
			}
			out = append(out, s)
		case *lua.LTable:
			v, err := luadm.FromLua(x)
			var data []byte
			if err == nil {
				data, err = json.Marshal(v)
			}
			if err != nil {
				L.RaiseError("seat.motion: inline script %d: %v", i+1, err)
			}
			s, diags := motion.Parse(fmt.Sprintf("inline script %d", i+1), data)
			if s == nil {
				L.RaiseError("seat.motion: %v", diags)
			}
			s.Name = fmt.Sprintf("inline%d", i+1)
			out = append(out, s)
		default:
			L.ArgError(1, field+" entries must be names or tables")
		}
	}
	return out
}

// namedScript loads a script by name, found where <motion script> finds
// it (seatml.FindScript), once.
func (m *env) namedScript(name string) (*motion.Script, error) {
	path, err := seatml.FindScript(m.prog.ScriptDirs, name)
	if err != nil {
		return nil, err
	}
	m.dev.mu.Lock()
	s := m.dev.scripts[path]
	m.dev.mu.Unlock()
	if s != nil {
		return s, nil
	}
	data, err := seatml.ReadScript(path, srcfile.ReadRegular) // a regular file, bounded: a FIFO named walk.yaml must not block the behavior
	if err != nil {
		return nil, fmt.Errorf("script %q: %s: %w", name, path, schema.FileCause(err))
	}
	s, diags := motion.Parse(path, data)
	if s == nil {
		return nil, diags
	}
	m.dev.mu.Lock()
	m.dev.scripts[path] = s
	m.dev.mu.Unlock()
	return s, nil
}

func (m *env) motionHandle(L *lua.LState, mo *motion.Motion) *lua.LTable {
	h := L.NewTable()
	h.RawSetString("name", lua.LString(mo.Name()))
	h.RawSetString("stop", L.NewFunction(func(L *lua.LState) int {
		mo.Stop(lua.LVAsBool(L.Get(2)))
		return 0
	}))
	h.RawSetString("cursor", L.NewFunction(func(L *lua.LState) int {
		k, since := mo.Cursor()
		L.Push(lua.LNumber(k))
		L.Push(lua.LNumber(float64(since) / float64(time.Millisecond)))
		return 2
	}))
	h.RawSetString("commands", L.NewFunction(func(L *lua.LState) int {
		list := L.NewTable()
		for _, c := range mo.Commands() {
			t := L.NewTable()
			t.RawSetString("motion", lua.LString(c.Motion))
			t.RawSetString("servo", lua.LString(c.Servo))
			t.RawSetString("joint", lua.LString(c.Joint))
			t.RawSetString("position", lua.LNumber(c.Position))
			t.RawSetString("gain", lua.LNumber(c.Gain))
			t.RawSetString("torque", lua.LNumber(c.Torque))
			t.RawSetString("time", lua.LNumber(float64(c.Time)/float64(time.Millisecond)))
			list.Append(t)
		}
		L.Push(list)
		return 1
	}))
	return h
}

// toLua converts a Go value for Lua: a memory value, or JSON's (the
// debugger's set): nil, numbers, booleans, strings, lists and objects.
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case float64:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case []any:
		t := L.NewTable()
		for _, e := range x {
			t.Append(toLua(L, e))
		}
		return t
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	}
	return lua.LString(fmt.Sprint(v))
}

// finished reports whether a motion has ended.
func finished(mo *motion.Motion) bool {
	select {
	case <-mo.Done():
		return true
	default:
		return false
	}
}
