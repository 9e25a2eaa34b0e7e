package hal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Engine constants (docs/devices.md §4; §10 lists the limits).
const (
	DefaultPeriod = 10 * time.Millisecond
	// S3Gap is how long the loop may run late before hardness is cut.
	S3Gap = 500 * time.Millisecond
	// S3Ramp is how long hardness takes to come back after a cut.
	S3Ramp = 2 * time.Second
	// ErrorKeep is how long error entries stay in the lists.
	ErrorKeep = 30 * time.Second
)

// ErrTimeNotIncreasing is returned by Step for a time not after the last.
var ErrTimeNotIncreasing = errors.New("step time must increase")

// Options configure an engine.
type Options struct {
	// Period is the control period (10 ms by default).
	Period time.Duration
	// CallTimeout bounds each backend call; 0 calls the backend directly,
	// as deterministic tests want. Run uses the period when it is 0.
	CallTimeout time.Duration
	// QuietPeriod is Run's cycle while the robot is quiet: no actuator has
	// a command queued and every joint's hardness is 0. Sensors are still
	// read (a touch is seen within it), but the loop wakes far less often;
	// a command wakes it at once, and it is back to Period while anything
	// moves or holds. 0 means DefaultQuietPeriod; a negative value keeps
	// Period always (seat run --device-loop on).
	QuietPeriod time.Duration
}

// DefaultQuietPeriod is the cycle of a quiet robot.
const DefaultQuietPeriod = 50 * time.Millisecond

// Stats are the loop's figures, also in memory under DCM/.
type Stats struct {
	Time         time.Duration
	CycleTime    time.Duration
	Jitter       time.Duration
	JitterMax    time.Duration
	Cycles       int64
	LateCycles   int64
	HardnessCuts int64
}

// ErrorEntry is one entry of a device's or subdevice's error list.
type ErrorEntry struct {
	At    time.Duration
	Level int
	Text  string
}

type deviceState struct {
	ack, nack   int64
	answering   bool
	everAnswer  bool
	lastAnswer  time.Duration
	s4Reported  bool
	errors      []ErrorEntry
	errorsDirty bool
}

// Engine runs the control cycle over a tree and a backend.
type Engine struct {
	tree      *Tree
	mem       *Memory
	backend   Backend
	immediate bool // the backend is the simulator: calls skip the timeout
	opts      Options

	tickMu  sync.Mutex
	tickers []func(now time.Duration)

	mu        sync.Mutex
	acts      []*actuator // by handle; nil for sensors
	order     []*actuator // hardness and other actuators first, joint positions last
	jointOf   map[int]*Joint
	values    []float64 // current Value by handle
	valueKeys []string
	valueMem  []*entry     // memory entries of valueKeys, filled on first write
	sf        *SensorFrame // replaced, not reused, when a call overruns
	af        *ActuatorFrame
	devs      []deviceState
	subErrors map[int][]ErrorEntry

	now, prev  time.Duration
	started    bool
	lastOnTime time.Duration
	cutAt      time.Duration
	k          float64
	stats      Stats
	inflight   chan struct{}
	jitter     Histogram
	priority   string

	// Quiet mode (Run only): wake is signalled by commands; while quiet,
	// Now reads the running clock from t0, so that a command's times count
	// from when it was given, not from the last (up to QuietPeriod old)
	// cycle.
	wake      chan struct{}
	quiet     bool
	leftQuiet bool // the first cycle after quiet ones
	t0        time.Time
}

// Priority describes the scheduling priority Run obtained for its thread:
// "SCHED_FIFO 10", "nice -10", or "normal (why not)"; "" before Run.
func (e *Engine) Priority() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.priority
}

// Jitter returns the histogram of cycle start jitter recorded by Run.
func (e *Engine) Jitter() *Histogram { return &e.jitter }

// NewEngine opens the backend for tree and fills memory with the tree's
// configuration keys.
func NewEngine(tree *Tree, backend Backend, opts Options) (*Engine, error) {
	if opts.Period <= 0 {
		opts.Period = DefaultPeriod
	}
	if opts.QuietPeriod == 0 {
		opts.QuietPeriod = DefaultQuietPeriod
	}
	e := &Engine{tree: tree, backend: backend, opts: opts, jointOf: map[int]*Joint{}, k: 1, subErrors: map[int][]ErrorEntry{},
		wake: make(chan struct{}, 1)}
	e.mem = NewMemory(e.Now)
	// The simulator answers from memory and never blocks: it is called
	// on the loop's own thread, with no timeout, since the goroutine a
	// timed call needs costs the loop's locked thread several thread
	// hand-offs every cycle. (Only the simulator itself: a backend that
	// embeds it may block.)
	_, e.immediate = backend.(*Sim)
	n := len(tree.Subs)
	e.acts = make([]*actuator, n)
	e.values = make([]float64, n)
	e.valueKeys = make([]string, n)
	e.valueMem = make([]*entry, n)
	e.sf = &SensorFrame{Raw: make([]int32, n), Status: make([]Status, len(tree.Devices))}
	e.af = &ActuatorFrame{Raw: make([]int32, n), Status: make([]Status, len(tree.Devices))}
	e.devs = make([]deviceState, len(tree.Devices))
	for _, j := range tree.Joints {
		e.jointOf[j.Hardness.Handle] = j
		e.jointOf[j.Position.Handle] = j
	}
	var positions []*actuator
	for i, s := range tree.Subs {
		e.valueKeys[i] = s.Key("Value")
		_, v := quantize(s, s.Initial)
		e.values[i] = v
		if !s.IsActuator() {
			continue
		}
		a := &actuator{sub: s, held: s.Initial, out: s.Initial}
		if j := e.jointOf[i]; j != nil && j.Hardness == s && j.ZeroPosition() == 0 {
			a.uncalibrated = true
		}
		e.acts[i] = a
		if j := e.jointOf[i]; j != nil && j.Position == s {
			positions = append(positions, a)
		} else {
			e.order = append(e.order, a)
		}
	}
	e.order = append(e.order, positions...)
	if err := backend.Open(context.Background(), tree); err != nil {
		return nil, fmt.Errorf("open backend: %w", err)
	}
	e.writeConfig()
	return e, nil
}

// Tree returns the engine's tree.
func (e *Engine) Tree() *Tree { return e.tree }

// Memory returns the engine's memory.
func (e *Engine) Memory() *Memory { return e.mem }

// Backend returns the engine's backend.
func (e *Engine) Backend() Backend { return e.backend }

// Period returns the control period.
func (e *Engine) Period() time.Duration { return e.opts.Period }

// Now returns the engine time of the last cycle; while Run's loop is
// quiet, the engine time now.
func (e *Engine) Now() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.quiet {
		return max(e.now, time.Since(e.t0))
	}
	return e.now
}

// Wake makes a quiet loop run its next cycle at once: a command or a
// motion is coming. Cheap, and harmless when the loop is not quiet.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Quiet reports whether Run's loop is in its quiet cycle.
func (e *Engine) Quiet() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.quiet
}

// still reports whether nothing is commanded or held: no actuator has a
// command queued and no joint has hardness. The caller holds e.mu.
func (e *Engine) still() bool {
	for _, a := range e.order {
		if len(a.buf) > 0 {
			return false
		}
	}
	for _, j := range e.tree.Joints {
		if e.values[j.Hardness.Handle] > 0 {
			return false
		}
	}
	return true
}

// OnTick registers fn to run at the start of every cycle, before the
// backend is read (the motion tick).
func (e *Engine) OnTick(fn func(now time.Duration)) {
	e.tickMu.Lock()
	e.tickers = append(e.tickers, fn)
	e.tickMu.Unlock()
}

func number(v string) any {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	return v
}

func (e *Engine) writeConfig() {
	for i, s := range e.tree.Subs {
		w := func(k string, v any) { e.mem.write(s.Key(k), v, 0) }
		w("Value", e.values[i])
		w("Gain", s.Gain)
		w("Offset", s.Offset)
		w("Min", s.Min)
		w("Max", s.Max)
		w("Ack", int64(0))
		w("Nack", int64(0))
		w("Error", []any{})
		w("Type", s.Type)
		w("Device", s.Device.Name)
		w("SubDeviceNumber", int64(s.Number))
		if s.IsActuator() {
			w("Interpolate", s.Interpolate)
			w("Clamped", int64(0))
		}
		if s.MaxSpeed > 0 {
			w("MaxSpeed", s.MaxSpeed)
		}
		for k, v := range s.Extra {
			w(k, number(v))
		}
	}
	for _, d := range e.tree.Devices {
		w := func(k string, v any) { e.mem.write(DevPrefix+d.Name+"/"+k, v, 0) }
		w("Type", d.Type)
		w("Bus", d.Bus)
		w("Address", int64(d.Address))
		w("Ack", int64(0))
		w("Nack", int64(0))
		w("Error", []any{})
	}
	e.writeStats()
}

// Set queues timed commands for an actuator (docs/devices.md §3). key may
// carry the SubPrefix and "/Value". Times are engine times; a past one
// applies at the next cycle. Values are clamped into [Min, Max] and counted.
// The call fails whole on a non-actuator, NaN, two commands at one time, or
// more than MaxBuffered buffered.
func (e *Engine) Set(key string, cmds []Command, mode Mode) error {
	s, ok := e.tree.Resolve(key)
	if !ok || !s.IsActuator() {
		return fmt.Errorf("set %q: %w", key, ErrNotActuator)
	}
	return e.SetSub(s, cmds, mode)
}

// SetSub is Set for a resolved subdevice.
func (e *Engine) SetSub(s *SubDevice, cmds []Command, mode Mode) error {
	seen := map[time.Duration]bool{}
	for _, c := range cmds {
		if math.IsNaN(c.Value) {
			return fmt.Errorf("set %q: %w", s.Name, ErrNaN)
		}
		if seen[c.At] {
			return fmt.Errorf("set %q at %v: %w", s.Name, c.At, ErrDuplicateTime)
		}
		seen[c.At] = true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.acts[s.Handle]
	if a == nil {
		return fmt.Errorf("set %q: %w", s.Name, ErrNotActuator)
	}
	clamped := make([]Command, len(cmds))
	for i, c := range cmds {
		v := math.Min(math.Max(c.Value, s.Min), s.Max)
		if a.uncalibrated && v > 0 {
			v = 0 // S2
			if !a.s2Reported {
				a.s2Reported = true
				e.addSubError(s.Handle, 4, "joint not calibrated (jointZeroPosition 0): hardness held at 0")
			}
		}
		if v != c.Value {
			a.clamped++
			e.mem.write(s.Key("Clamped"), a.clamped, e.now)
		}
		clamped[i] = Command{Value: v, At: c.At}
	}
	if a.wouldHold(clamped, mode) > MaxBuffered {
		return fmt.Errorf("set %q: %w", s.Name, ErrBufferFull)
	}
	a.insert(clamped, mode)
	e.Wake()
	return nil
}

// Inject sets a simulated sensor, if the backend can.
func (e *Engine) Inject(path string, v float64) error {
	in, ok := e.backend.(Injector)
	if !ok {
		return fmt.Errorf("inject %q: the backend does not simulate sensors", path)
	}
	if err := in.Inject(path, v); err != nil {
		return err
	}
	e.Wake() // a quiet loop reads it now, not up to a quiet period later
	return nil
}

// Value returns a subdevice's current Value.
func (e *Engine) Value(s *SubDevice) float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.values[s.Handle]
}

// Buffered returns a copy of an actuator's pending commands.
func (e *Engine) Buffered(s *SubDevice) []Command {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a := e.acts[s.Handle]; a != nil {
		return append([]Command(nil), a.buf...)
	}
	return nil
}

// Stats returns the loop's figures.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Step runs one control cycle at engine time now, which must increase:
// motion tick, read, sensor values and Ack/Nack, timed commands, safety,
// quantize and write, actuator values, stats.
func (e *Engine) Step(now time.Duration) error {
	e.mu.Lock()
	if e.started && now <= e.now {
		e.mu.Unlock()
		return fmt.Errorf("%w: %v after %v", ErrTimeNotIncreasing, now, e.now)
	}
	e.mu.Unlock()

	e.tickMu.Lock()
	tickers := append([]func(time.Duration){}, e.tickers...)
	e.tickMu.Unlock()
	for _, fn := range tickers {
		fn(now)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	e.prev = e.now
	if !e.started {
		e.prev, e.lastOnTime = now, now
	}
	late := e.started && now-e.prev > 2*e.gap()
	e.stats.CycleTime = now - e.prev
	if e.leftQuiet {
		// Nothing moved since the last quiet cycle: anchor ramps one
		// period back, as at the normal cycle.
		e.prev = max(e.prev, now-e.opts.Period)
		e.leftQuiet = false
	}
	e.now, e.started = now, true
	if late {
		e.stats.LateCycles++
		if now-e.lastOnTime > S3Gap {
			e.stats.HardnessCuts++
			e.cutAt, e.k = now, 0
		}
	} else {
		e.lastOnTime = now
	}
	if e.k < 1 {
		e.k = math.Min(1, float64(now-e.cutAt)/float64(S3Ramp))
	}

	e.read(now)
	e.control(now)
	e.write(now)
	e.stats.Time = now
	e.stats.Cycles++
	e.pruneErrors(now)
	e.writeStats()
	return nil
}

// call runs a backend call under the call timeout. A call that overruns is
// abandoned with its frame (fresh frames are made) and counts as no answer;
// no call is made while it is still running.
func (e *Engine) call(fn func(ctx context.Context) error) bool {
	if e.opts.CallTimeout <= 0 || e.immediate {
		return fn(context.Background()) == nil
	}
	if e.inflight != nil {
		select {
		case <-e.inflight:
			e.inflight = nil
		default:
			return false
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.CallTimeout)
	defer cancel()
	done := make(chan struct{})
	var err error
	go func() {
		err = fn(ctx)
		close(done)
	}()
	select {
	case <-done:
		return err == nil
	case <-ctx.Done():
		e.inflight = done
		n := len(e.tree.Subs)
		// New frames: the abandoned call keeps the old ones.
		e.sf = &SensorFrame{Raw: make([]int32, n), Status: make([]Status, len(e.tree.Devices))}
		e.af = &ActuatorFrame{Raw: make([]int32, n), Status: make([]Status, len(e.tree.Devices))}
		return false
	}
}

func (e *Engine) read(now time.Duration) {
	sf := e.sf
	if !e.call(func(ctx context.Context) error { return e.backend.Read(ctx, now, sf) }) {
		for i := range e.sf.Status {
			e.sf.Status[i] = NoAnswer
		}
	}
	for i, s := range e.tree.Subs {
		if s.IsActuator() || e.sf.Status[s.Device.Index] != Answered {
			continue
		}
		v := float64(e.sf.Raw[i])*s.Gain + s.Offset
		e.values[i] = v
		e.mem.writeFloat(e.valueKeys[i], &e.valueMem[i], v, now)
	}
}

func (e *Engine) control(now time.Duration) {
	for _, a := range e.order {
		s := a.sub
		j := e.jointOf[s.Handle]
		var v float64
		switch {
		case j != nil && j.Hardness == s:
			v = a.advance(now, e.prev)
			if a.uncalibrated {
				v = 0 // S2
			}
			v *= e.k // S3
		case j != nil && j.Position == s:
			if e.values[j.Hardness.Handle] <= 0 { // S1
				a.hold(e.values[j.Sensor.Handle], now)
				v = a.out
			} else {
				v = a.advance(now, e.prev)
			}
		default:
			v = a.advance(now, e.prev)
		}
		r, q := quantize(s, v)
		e.af.Raw[s.Handle] = r
		e.values[s.Handle] = q
	}
}

func (e *Engine) write(now time.Duration) {
	af := e.af
	ok := e.call(func(ctx context.Context) error { return e.backend.Write(ctx, now, af) })
	for i, d := range e.tree.Devices {
		st := e.sf.Status[i]
		if !ok || e.af.Status[i] == NoAnswer {
			st = NoAnswer
		} else if st == NotContacted {
			st = e.af.Status[i]
		}
		e.account(d, st, now)
	}
	for _, a := range e.order {
		h := a.sub.Handle
		e.mem.writeFloat(e.valueKeys[h], &e.valueMem[h], e.values[h], now)
	}
}

// account counts one cycle's exchange with a device and keeps its error
// list: level 7 when it stops answering, level 0 when it is back, level 5
// when its joints have had no frame for S4Timeout.
func (e *Engine) account(d *Device, st Status, now time.Duration) {
	ds := &e.devs[d.Index]
	switch st {
	case Answered:
		ds.ack++
		e.mem.write(DevPrefix+d.Name+"/Ack", ds.ack, now)
		if ds.everAnswer && !ds.answering {
			e.addDevError(d, 0, "answering again", now)
		}
		ds.answering, ds.everAnswer, ds.lastAnswer, ds.s4Reported = true, true, now, false
	case NoAnswer:
		ds.nack++
		e.mem.write(DevPrefix+d.Name+"/Nack", ds.nack, now)
		if ds.answering || !ds.everAnswer && ds.nack == 1 {
			e.addDevError(d, 7, "not answering", now)
		}
		ds.answering = false
		if !ds.s4Reported && now-ds.lastAnswer > S4Timeout && e.hasJoints(d) {
			ds.s4Reported = true
			e.addDevError(d, 5, fmt.Sprintf("no actuator frame for %v: joints not driven", S4Timeout), now)
		}
	}
}

func (e *Engine) hasJoints(d *Device) bool {
	for _, j := range e.tree.Joints {
		if j.Position.Device == d {
			return true
		}
	}
	return false
}

func (e *Engine) addDevError(d *Device, level int, text string, now time.Duration) {
	ds := &e.devs[d.Index]
	ds.errors = append(ds.errors, ErrorEntry{At: now, Level: level, Text: text})
	e.mem.write(DevPrefix+d.Name+"/Error", errorList(ds.errors), now)
}

func (e *Engine) addSubError(h int, level int, text string) {
	e.subErrors[h] = append(e.subErrors[h], ErrorEntry{At: e.now, Level: level, Text: text})
	e.mem.write(e.tree.Subs[h].Key("Error"), errorList(e.subErrors[h]), e.now)
}

// Errors returns the current error list of a device (by name) or a
// subdevice (by path).
func (e *Engine) Errors(name string) []ErrorEntry {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.tree.Device(name); d != nil {
		return append([]ErrorEntry(nil), e.devs[d.Index].errors...)
	}
	if s, ok := e.tree.Resolve(name); ok {
		return append([]ErrorEntry(nil), e.subErrors[s.Handle]...)
	}
	return nil
}

func errorList(entries []ErrorEntry) []any {
	out := make([]any, len(entries))
	for i, x := range entries {
		out[i] = []any{x.At.Seconds(), int64(x.Level), x.Text}
	}
	return out
}

func (e *Engine) pruneErrors(now time.Duration) {
	keep := func(list []ErrorEntry) ([]ErrorEntry, bool) {
		i := 0
		for i < len(list) && now-list[i].At > ErrorKeep {
			i++
		}
		return list[i:], i > 0
	}
	for i, d := range e.tree.Devices {
		if l, changed := keep(e.devs[i].errors); changed {
			e.devs[i].errors = l
			e.mem.write(DevPrefix+d.Name+"/Error", errorList(l), now)
		}
	}
	for h, list := range e.subErrors {
		if l, changed := keep(list); changed {
			e.subErrors[h] = l
			e.mem.write(e.tree.Subs[h].Key("Error"), errorList(l), now)
		}
	}
}

func (e *Engine) writeStats() {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	w := func(k string, v any) { e.mem.write("DCM/"+k, v, e.now) }
	w("Time", ms(e.stats.Time))
	w("CycleTime", ms(e.stats.CycleTime))
	w("Jitter", ms(e.stats.Jitter))
	w("JitterMax", ms(e.stats.JitterMax))
	w("LateCycles", e.stats.LateCycles)
	w("HardnessCuts", e.stats.HardnessCuts)
}

// Run steps the engine every period on the monotonic clock until ctx ends.
// Jitter is a cycle's start minus its due time; missed ticks are skipped.
func (e *Engine) Run(ctx context.Context) error {
	if e.opts.CallTimeout <= 0 {
		e.opts.CallTimeout = e.opts.Period
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t0 := time.Now()
	e.mu.Lock()
	e.t0 = t0
	e.mu.Unlock()
	// Two goroutines take turns with the loop, passing it as a baton: the
	// precise one keeps an OS thread of its own, at a higher priority when
	// the system allows it, so that busy adaptors do not delay its ticks
	// (a thread whose priority was raised is not handed back to the Go
	// scheduler: the goroutine ends locked, and Go retires the thread);
	// the quiet one is an ordinary goroutine on a Go timer, since waking a
	// locked thread costs several thread hand-offs each time.
	toPrecise, toQuiet := make(chan int64, 1), make(chan int64, 1)
	errs := make(chan error, 2)
	go func() {
		runtime.LockOSThread()
		prio, raised := raisePriority()
		if !raised {
			defer runtime.UnlockOSThread()
		}
		e.mu.Lock()
		e.priority = prio
		e.mu.Unlock()
		err := e.runPrecise(ctx, t0, toPrecise, toQuiet)
		cancel()
		errs <- err
	}()
	go func() {
		err := e.runQuiet(ctx, t0, toQuiet, toPrecise)
		cancel()
		errs <- err
	}()
	toPrecise <- 1 // the first cycle is a normal one
	return errors.Join(<-errs, <-errs)
}

// runPrecise runs cycles at the period, each on time to the kernel's
// high-resolution timer, while it holds the loop; it hands the loop to
// runQuiet when nothing moves. The baton carries the next cycle's number.
func (e *Engine) runPrecise(ctx context.Context, t0 time.Time, baton <-chan int64, quiet chan<- int64) error {
	p := e.opts.Period
	for {
		var n int64
		select {
		case n = <-baton:
		case <-ctx.Done():
			return nil
		}
		for {
			if e.opts.QuietPeriod > 0 && e.goQuiet() {
				quiet <- n
				break
			}
			due := t0.Add(time.Duration(n) * p)
			// Sleep on this thread with the kernel's high-resolution timer:
			// Go's timers wake through the netpoller, a millisecond at a time.
			if !sleepUntil(ctx, due) {
				return nil
			}
			start := time.Now()
			jitter := start.Sub(due)
			e.jitter.Add(jitter)
			e.mu.Lock()
			e.stats.Jitter = jitter
			e.stats.JitterMax = max(e.stats.JitterMax, jitter)
			e.mu.Unlock()
			if err := e.Step(start.Sub(t0)); err != nil {
				return err
			}
			n = int64(start.Sub(t0)/p) + 1 // missed ticks are skipped
		}
	}
}

// runQuiet runs quiet cycles while it holds the loop: it parks until the
// quiet period passes or a command wakes it. Quiet cycles are not timed for
// jitter. It hands the loop back to runPrecise once anything is commanded.
func (e *Engine) runQuiet(ctx context.Context, t0 time.Time, baton <-chan int64, precise chan<- int64) error {
	p := e.opts.Period
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-baton:
		case <-ctx.Done():
			return nil
		}
		for {
			timer.Reset(e.opts.QuietPeriod)
			select {
			case <-ctx.Done():
				return nil
			case <-timer.C:
			case <-e.wake:
			}
			if !e.goQuiet() { // a command came: the next cycle is a normal one
				precise <- int64(time.Since(t0)/p) + 1
				break
			}
			if err := e.Step(time.Since(t0)); err != nil {
				return err
			}
		}
	}
}

// goQuiet decides the mode of the next cycle: quiet while nothing is
// commanded or held. Leaving quiet mode, the previous cycle counts as one
// period back, so that a command given while quiet ramps from where the
// output stood, over its whole time, as it would at the normal cycle.
func (e *Engine) goQuiet() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.started && e.still()
	if e.quiet && !q {
		e.leftQuiet = true
	}
	e.quiet = q
	return q
}

// gap is how far apart two cycles may be before the later one is late
// (S3): two periods, or two quiet periods around a quiet cycle. The caller
// holds e.mu.
func (e *Engine) gap() time.Duration {
	if e.quiet || e.leftQuiet {
		return max(e.opts.QuietPeriod, e.opts.Period)
	}
	return e.opts.Period
}

// sleepUntil sleeps the calling thread until t, waking early to notice ctx
// ending at least every 50 ms. It reports false if ctx ended.
func sleepUntil(ctx context.Context, t time.Time) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		nap := min(d, 50*time.Millisecond)
		ts := syscall.NsecToTimespec(nap.Nanoseconds())
		_ = syscall.Nanosleep(&ts, nil)
	}
}

// Close closes the backend.
func (e *Engine) Close() error { return e.backend.Close() }

// Truncate drops an actuator's buffered commands later than after.
func (e *Engine) Truncate(s *SubDevice, after time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a := e.acts[s.Handle]; a != nil {
		a.truncate(after)
	}
}

// RampDown makes every joint's hardness fall linearly to 0 over d, from the
// current cycle; S1 then lets each joint follow its sensor. It returns the
// engine time when the ramp ends.
func (e *Engine) RampDown(d time.Duration) time.Duration {
	end := e.Now() + d
	for _, j := range e.tree.Joints {
		_ = e.SetSub(j.Hardness, []Command{{Value: 0, At: end}}, ClearAll)
	}
	return end
}

// Stiff reports whether any joint has hardness above 0 (commanded or sent).
func (e *Engine) Stiff() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, j := range e.tree.Joints {
		a := e.acts[j.Hardness.Handle]
		if e.values[j.Hardness.Handle] > 0 || a.held > 0 || len(a.buf) > 0 {
			return true
		}
	}
	return false
}
