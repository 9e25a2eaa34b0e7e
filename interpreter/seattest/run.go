package seattest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/mqtt"
	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// Options configure a run.
type Options struct {
	// AllowShell lets behaviors with <shell> load and run their commands.
	AllowShell bool
	// Verbose, if set, receives every step as it runs (seat test -v).
	Verbose io.Writer
	// StepTimeout bounds how long one step may take in real time (a
	// script that loops, a + step with more onexec ticks than run in that
	// time); 10 s if 0.
	StepTimeout time.Duration
	// Context, if set, ends the run when it is done (seat test on SIGINT
	// or SIGTERM): the step under way fails as interrupted.
	Context context.Context
	// Frame, if set, is given what the behavior is like after it starts
	// and after each step (a replay's timeline, seat replay --until);
	// when it returns false the run ends there, passed so far.
	Frame func(Frame) bool
	// Debugger, if set, debugs the behavior as it runs (seat replay
	// --until with --control hands it over at a step); StepTimeout
	// should then allow for the pauses.
	Debugger *interpreter.Debugger
}

// Frame is the behavior after a step of a transcript: a point of a
// replay's timeline.
type Frame struct {
	// Step is the step's number, from 1; 0 is the start, before any.
	Step int    `json:"step"`
	Line string `json:"line"`
	// T is the virtual time since the start; Recorded what the recording
	// says of the step, if it came from one.
	T        time.Duration `json:"t"`
	Recorded *Recorded     `json:"recorded,omitempty"`
	// Said are the messages the behavior sent during the step.
	Said []string `json:"said,omitempty"`
	// Show is what the debugger would show: the states, stack, queue,
	// timers and Lua globals.
	Show interpreter.DebugState `json:"show"`
	// Failed says why the step failed; the run ends with it.
	Failed string `json:"failed,omitempty"`
	// Next is the step that runs next, nil after the last; Steps is how
	// many the transcript has.
	Next  *Step `json:"-"`
	Steps int   `json:"steps"`
}

// Result is the outcome of one transcript.
type Result struct {
	File string
	// Behavior is the behavior file the transcript ran against.
	Behavior string
	Steps    int // steps run, the failing one included
	Elapsed  time.Duration
	// Failure is nil when every step passed.
	Failure *Failure
	// Log holds what the behavior logged at warning level and above.
	Log []string
}

// Failure tells which step failed and what the behavior did instead.
type Failure struct {
	Step Step
	// What says what went wrong, for example "expected a message".
	What      string
	Want, Got string
	// State is the current state when the step failed.
	State string
	// At is the virtual time of the failure; GotRule the rule that sent
	// the message that came instead (file:line), if one did.
	At      time.Duration
	GotRule string
	// Before is the conversation that led to the failure: the last steps
	// and messages, oldest first.
	Before []string
}

// BadInputError is a transcript or behavior that cannot be run: seat test
// exits 2 for it.
type BadInputError struct{ Diags schema.List }

func (e *BadInputError) Error() string { return e.Diags.Error() }

// epoch is the virtual clock's start. Messages and steps are reported in
// time since it.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// historyLen is how many lines of conversation a failure shows.
const historyLen = 8

// BehaviorFile finds the behavior a transcript tests: the file its
// "behavior:" line names, else NAME.seatml (or NAME.scxml) beside
// NAME.seattest; a transcript named NAME.PART.seattest also finds
// NAME.seatml, so a behavior can have several, and NAME.scxml.seattest
// tests NAME.scxml (beside a NAME.seatml of the same behavior).
func BehaviorFile(t *Transcript) (string, error) {
	dir := filepath.Dir(t.File)
	if t.Behavior != "" {
		f := t.Behavior
		if !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		if _, err := os.Stat(f); err != nil {
			return "", badInput(t.BehaviorPos, "behavior %q: %v", t.Behavior, schema.FileCause(err))
		}
		return f, nil
	}
	base := strings.TrimSuffix(filepath.Base(t.File), Ext)
	var tried []string
	if ext := filepath.Ext(base); ext == ".seatml" || ext == ".scxml" {
		// reception.scxml.seattest tests reception.scxml
		if f := filepath.Join(dir, base); fileExists(f) {
			return f, nil
		}
	}
	for name := base; name != ""; {
		for _, ext := range []string{".seatml", ".scxml", ".xml"} {
			f := filepath.Join(dir, name+ext)
			if _, err := os.Stat(f); err == nil {
				return f, nil
			}
			tried = append(tried, name+ext)
		}
		i := strings.LastIndexByte(name, '.')
		if i < 0 {
			break
		}
		name = name[:i]
	}
	return "", badInput(schema.Pos{File: t.File}, "no behavior beside the transcript (looked for %s); name one on a first line \"behavior: FILE\"",
		strings.Join(tried, ", "))
}

func badInput(pos schema.Pos, format string, args ...any) error {
	var l schema.List
	l.Errorf(pos, format, args...)
	return &BadInputError{Diags: l}
}

// RunFile parses and runs the transcript in file.
func RunFile(file string, opts Options) (*Result, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, badInput(schema.Pos{File: file}, "%v", schema.FileCause(err))
	}
	t, diags := Parse(file, data)
	if t == nil {
		return nil, &BadInputError{Diags: diags}
	}
	return Run(t, opts)
}

// Run runs a parsed transcript against its behavior.
func Run(t *Transcript, opts Options) (*Result, error) {
	file, err := BehaviorFile(t)
	if err != nil {
		return nil, err
	}
	prog, diags := seatml.Load(file, seatml.LoadOptions{AllowShell: opts.AllowShell})
	if prog == nil || diags.HasErrors() {
		return nil, &BadInputError{Diags: diags}
	}
	return RunProgram(t, prog, opts)
}

// RunProgram runs a transcript against a loaded behavior.
func RunProgram(t *Transcript, prog *seatml.Program, opts Options) (*Result, error) {
	r, err := newRunner(t, prog, opts)
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	res := &Result{File: t.File, Behavior: prog.File}
	// The answers a transcript gives before its first other step are
	// there from the start, for the calls of the initial onentry.
	steps := t.Steps
	for len(steps) > 0 && steps[0].Kind == Answer {
		r.step(steps[0])
		steps = steps[1:]
		res.Steps++
	}
	if err := r.start(); err != nil {
		return nil, err
	}
	next := func(i int) *Step { // the step after steps[i-1]
		if i < len(steps) {
			return &steps[i]
		}
		return nil
	}
	more := r.frame(0, Step{Line: "(start)"}, nil, next(0))
	for i, st := range steps {
		if !more {
			break
		}
		res.Steps++
		f := r.step(st)
		more = r.frame(len(t.Steps)-len(steps)+i+1, st, f, next(i+1))
		if f != nil {
			res.Failure = f
			break
		}
	}
	if res.Failure == nil && more {
		res.Failure = r.finish()
	}
	r.stop()
	res.Elapsed = time.Since(begin)
	res.Log = r.logs.lines()
	return res, nil
}

// message is one message the behavior sent.
type message struct {
	adaptor, peer, text string
	at                  time.Duration
	rule                string // the rule that fired last before it: file:line
	topic               string // an MQTT message's own topic
}

func (m message) String() string {
	if m.topic != "" {
		return fmt.Sprintf("%s< %s   (on %s)", m.adaptor, m.text, m.topic)
	}
	if m.peer != "" {
		return fmt.Sprintf("%s< %s   (a reply to %s)", m.adaptor, m.text, m.peer)
	}
	return m.adaptor + "< " + m.text
}

type runner struct {
	t     *Transcript
	prog  *seatml.Program
	opts  Options
	clock *interpreter.FakeClock
	m     *interpreter.Machine
	hand  *interpreter.Hand // drives m on clock
	dev   *interpreter.Devices
	// stepping is set once the device loop is asked for: the virtual
	// clock then steps the engine every period.
	stepping atomic.Bool // set on the machine's goroutine, read on the runner's
	logs     *logLines
	input    string // the adaptor "> TEXT" sends from
	names    []string
	cancel   context.CancelFunc
	done     chan error
	stopped  error // why the behavior stopped, once it has
	ctx      context.Context
	ticks    int // timers run by the current + step

	mu      sync.Mutex
	fired   string    // the last rule fired, file:line
	out     []message // sent and not yet expected
	said    []string  // sent during the step, for Options.Frame
	peers   map[string][]*conn
	npeers  int
	history []string
	// answers are the services' answers the transcript gave (NAME=>
	// JSON) and no seat.call has taken yet, by adaptor.
	answers map[string][]Step
	// goals is each adaptor's request (NAME:KEY>> JSON) a rule took
	// last, which seat.result ends.
	goals map[string]*request
	// goalsOut holds the action clients with a goal in progress: sent
	// (a message to the adaptor), and no result given yet.
	goalsOut map[string]bool
	// lastPeer is the peer that spoke or connected last (the session a
	// state check looks at).
	lastPeer string
}

func newRunner(t *Transcript, prog *seatml.Program, opts Options) (*runner, error) {
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = 10 * time.Second
	}
	r := &runner{t: t, prog: prog, opts: opts, clock: interpreter.NewFakeClock(epoch), logs: &logLines{},
		peers: map[string][]*conn{}, answers: map[string][]Step{}, goals: map[string]*request{}, goalsOut: map[string]bool{}, done: make(chan error, 1), ctx: opts.Context}
	if r.ctx == nil {
		r.ctx = context.Background()
	}
	for _, d := range prog.Adaptors {
		if d.Ignored {
			continue
		}
		r.names = append(r.names, d.Name)
		if r.input == "" {
			r.input = d.Name
		}
	}
	var diags schema.List
	for _, st := range t.Steps {
		switch st.Kind {
		case Send, Expect, ExpectRe, Connect, Disconnect, Answer:
			if st.Adaptor == "" {
				if st.Kind == Send && r.input == "" {
					diags.Errorf(st.Pos, "the behavior declares no adaptor to send from")
				}
				continue
			}
			if !contains(r.names, st.Adaptor) {
				diags.Errorf(st.Pos, "the behavior has no adaptor %q%s", st.Adaptor,
					schema.DidYouMean(st.Adaptor, r.names, "%q"))
			}
		case Widget:
			var ids []string
			for _, s := range prog.States {
				for _, w := range s.Widgets {
					if w.ID != "" {
						ids = append(ids, w.ID)
					}
				}
			}
			if !contains(ids, st.Adaptor) {
				diags.Errorf(st.Pos, "the behavior has no input or button %q%s", st.Adaptor, schema.DidYouMean(st.Adaptor, ids, "%q"))
			}
		case State:
			if prog.State(st.Text) == nil {
				diags.Errorf(st.Pos, "the behavior has no state %q%s", st.Text, schema.DidYouMean(st.Text, stateNames(prog), "%q"))
			}
		case Config:
			for _, name := range st.States {
				if prog.State(name) == nil {
					diags.Errorf(st.Pos, "the behavior has no state %q%s", name, schema.DidYouMean(name, stateNames(prog), "%q"))
				}
			}
			if prog.Session != "" {
				diags.Errorf(st.Pos, "== checks the one configuration of a behavior; this one has a session for each peer of %s: check a peer's state with = STATE", prog.Session)
			}
		case Set:
			if prog.Document != nil || prog.Session != "" {
				diags.Errorf(st.Pos, "@set sets a Lua variable of a SEATML behavior without sessions, as the debugger does; %s is not one", prog.File)
			}
		case Event:
			if prog.Document == nil {
				diags.Errorf(st.Pos, "@event sends an SCXML document a named event; %s is a SEATML behavior: send it input with > TEXT (a rule of source=\"event\" hears what seat.raise raises)", prog.File)
			}
		}
	}
	if diags.HasErrors() {
		return nil, &BadInputError{Diags: diags}
	}
	e, err := hal.NewEngine(prog.Tree, hal.NewSim(), hal.Options{})
	if err != nil {
		return nil, err
	}
	p, err := motion.NewPlayer(e, prog.Servos, 1)
	if err != nil {
		return nil, err
	}
	if err := e.Step(0); err != nil {
		return nil, err
	}
	r.dev = &interpreter.Devices{Engine: e, Player: p, Start: func() { r.stepping.Store(true) }}
	return r, nil
}

// stateNames lists the behavior's states, for suggestions.
func stateNames(prog *seatml.Program) []string {
	names := make([]string, 0, len(prog.States))
	for _, s := range prog.States {
		names = append(names, s.Name)
	}
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (r *runner) start() error {
	log := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zapcore.EncoderConfig{MessageKey: "msg", LevelKey: "level",
		EncodeLevel: zapcore.LowercaseLevelEncoder}), zapcore.AddSync(r.logs), zapcore.WarnLevel))
	m, err := interpreter.New(r.prog, interpreter.Options{
		Log: log, Clock: r.clock, AllowShell: r.opts.AllowShell, Devices: r.dev, ManualDevices: true, Observer: r, Debugger: r.opts.Debugger,
		Stdin: strings.NewReader(""), Stdout: io.Discard,
		OpenAdaptor: func(c adaptors.Config) (adaptors.Adaptor, error) {
			a := &memAdaptor{r: r, name: c.Name, conns: c.Connections}
			// The stand-ins do what the real ones do for scripts.
			switch k, _ := adaptors.LookupKind(c.Type); {
			case k.Has(adaptors.Calls):
				return &memClient{a}, nil
			case k.Has(adaptors.Goals):
				return &memActionServer{a}, nil
			case k.Has(adaptors.Cancels):
				return &memActionClient{a}, nil
			}
			return a, nil
		},
	})
	if err != nil {
		return err
	}
	r.m = m
	r.hand = interpreter.NewHand(m, r.clock)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- m.Run(ctx) }()
	select {
	case <-m.Ready():
	case err := <-r.done:
		r.done <- err
		return fmt.Errorf("%s: the behavior did not start: %w", r.prog.File, err)
	case <-time.After(r.opts.StepTimeout):
		return fmt.Errorf("%s: the behavior did not start within %v", r.prog.File, r.opts.StepTimeout)
	}
	r.settle()
	return nil
}

func (r *runner) stop() {
	r.cancel()
	if r.stopped == nil { // else sync has taken Run's result
		select {
		case <-r.done:
		case <-time.After(r.opts.StepTimeout):
		}
	}
	_ = r.dev.Engine.Close()
}

// now is the virtual time since the start.
func (r *runner) now() time.Duration { return r.clock.Now().Sub(epoch) }

// sync waits until the machine has handled everything queued so far, then
// runs fn on its goroutine and handles the device events waiting. It
// reports false once the behavior has stopped.
func (r *runner) sync(fn func()) bool {
	if r.stopped != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.StepTimeout)
	defer cancel()
	if err := r.hand.Settle(ctx, fn); err != nil {
		select {
		case e := <-r.done:
			if e == nil {
				e = errors.New("the behavior ended (seat.exit or end of input)")
				if cause := r.m.EndCause(); cause != "" {
					e = errors.New("the behavior ended: " + cause)
				}
			}
			r.stopped = e
		case <-ctx.Done():
			r.stopped = fmt.Errorf("the behavior did not answer within %v (a script that never ends?)", r.opts.StepTimeout)
		}
		return false
	}
	return true
}

// settle lets the machine handle what is queued.
func (r *runner) settle() { r.sync(nil) }

// state is the current state; in a behavior with sessions, that of the
// session of the peer that spoke or connected last.
func (r *runner) state() string {
	var s string
	if !r.sync(func() { s = r.m.State() }) {
		s = r.m.CurrentState()
	}
	if r.m.IsHost() {
		for _, ss := range r.m.Sessions() {
			if ss.Peer == r.lastPeer {
				return ss.State
			}
		}
		return "(no session for " + r.lastPeer + ")"
	}
	return s
}

// configuration is the active states of a behavior without sessions
// (nested states: every level); nil for one with sessions.
func (r *runner) configuration() []string {
	var config []string
	if !r.m.IsHost() {
		r.sync(func() { config = r.m.Configuration() })
	}
	return config
}

// active reports whether the state is active at any level: "= 接客"
// holds in its child 用件.
func (r *runner) active(name string) bool {
	return slices.Contains(r.configuration(), name)
}

func (r *runner) verbose(format string, args ...any) {
	if r.opts.Verbose != nil {
		fmt.Fprintf(r.opts.Verbose, format, args...)
	}
}

func (r *runner) remember(line string) {
	r.history = append(r.history, line)
	if len(r.history) > historyLen {
		r.history = r.history[len(r.history)-historyLen:]
	}
}

func (r *runner) fail(st Step, what, want, got string) *Failure {
	return &Failure{Step: st, What: what, Want: want, Got: got, State: r.state(), At: r.now(), Before: append([]string(nil), r.history...)}
}

// Observe keeps the rule that fired last, to say which rule sent a message.
func (r *runner) Observe(rec interpreter.Record) {
	switch rec.Kind {
	case interpreter.RecFire:
		r.mu.Lock()
		r.fired = fmt.Sprintf("%s:%d", rec.At.File, rec.At.Line)
		r.mu.Unlock()
	case interpreter.RecIn, interpreter.RecConnect, interpreter.RecDisconnect, interpreter.RecTimer, interpreter.RecRaise:
		r.mu.Lock()
		r.fired = "" // what follows is this event's or timer's doing
		r.mu.Unlock()
	}
}

// step runs one step; it returns a failure, or nil.
func (r *runner) step(st Step) *Failure {
	r.verbose("    %s: %s\n", st.At(), st.Line)
	switch st.Kind {
	case Send:
		name := st.Adaptor
		if name == "" {
			name = r.input
		}
		c := r.peer(name, st.Peer)
		if c == nil {
			// A peer named for the first time is there from now on, as a
			// client of an adaptor without onconnect is.
			c = &conn{r: r, adaptor: name, peer: st.Peer}
		}
		// Plain input comes from the peer last connected or named (the
		// rule FromRecording writes transcripts by): a named peer becomes
		// the latest.
		r.mu.Lock()
		list := slices.DeleteFunc(r.peers[name], func(x *conn) bool { return x == c })
		r.peers[name] = append(list, c)
		r.mu.Unlock()
		var from adaptors.Conn = c
		switch {
		case st.Key != "":
			r.remember(fmt.Sprintf("%s:%s>> %s", name, st.Key, st.Text))
			if st.Key == "ros_action_result" { // the goal has ended
				r.mu.Lock()
				delete(r.goalsOut, name)
				r.mu.Unlock()
			}
			q := &request{conn: c}
			if st.Key == "ros_action_preempted" || st.Key == "ros_action_cancel" {
				// About the goal the behavior has: answering it ends that
				// goal, and it ends anyway, as the real adaptor's do.
				r.mu.Lock()
				q.about = r.goals[name]
				r.mu.Unlock()
				defer q.settle(st.Key)
			}
			from = q
		case st.Data != nil:
			r.remember(fmt.Sprintf("%s>> %s", name, st.Text))
		default:
			r.remember(fmt.Sprintf("%s> %s", name, st.Text))
		}
		if name == r.prog.Session {
			r.lastPeer = c.peer
		}
		if !r.deliver(adaptors.Event{Source: name, Text: st.Text, Data: st.Data, Key: st.Key, From: from}) {
			return r.fail(st, "the behavior has stopped: "+r.stopped.Error(), "", "")
		}
	case Widget:
		r.remember(fmt.Sprintf("gui:%s> %s", st.Adaptor, st.Text))
		if !r.deliver(adaptors.Event{Source: "gui", ID: st.Adaptor, Text: st.Text}) {
			return r.fail(st, "the behavior has stopped: "+r.stopped.Error(), "", "")
		}
	case Connect:
		peer := st.Text
		if peer == "" {
			r.npeers++
			peer = "peer" + strconv.Itoa(r.npeers)
		}
		c := &conn{r: r, adaptor: st.Adaptor, peer: peer}
		r.mu.Lock()
		r.peers[st.Adaptor] = append(r.peers[st.Adaptor], c)
		r.mu.Unlock()
		r.remember(fmt.Sprintf("@connect %s %s", st.Adaptor, peer))
		if st.Adaptor == r.prog.Session {
			r.lastPeer = peer
		}
		if r.wantsConnections(st.Adaptor) && !r.deliver(adaptors.Event{Source: st.Adaptor, Kind: adaptors.Connected, From: c}) {
			return r.fail(st, "the behavior has stopped: "+r.stopped.Error(), "", "")
		}
	case Disconnect:
		c := r.peer(st.Adaptor, st.Text)
		if c == nil || !r.connected(c) {
			return r.fail(st, fmt.Sprintf("no peer %s is connected to %s", or(st.Text, "at all"), st.Adaptor), "", "")
		}
		r.mu.Lock()
		list := r.peers[st.Adaptor]
		for i, x := range list {
			if x == c {
				r.peers[st.Adaptor] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		r.mu.Unlock()
		r.remember(fmt.Sprintf("@disconnect %s %s", st.Adaptor, c.peer))
		if r.wantsConnections(st.Adaptor) && !r.deliver(adaptors.Event{Source: st.Adaptor, Kind: adaptors.Disconnected, From: c}) {
			return r.fail(st, "the behavior has stopped: "+r.stopped.Error(), "", "")
		}
	case Answer:
		r.remember(fmt.Sprintf("%s=> %s", st.Adaptor, st.Text))
		r.mu.Lock()
		r.answers[st.Adaptor] = append(r.answers[st.Adaptor], st)
		r.mu.Unlock()
	case Memory:
		r.remember(fmt.Sprintf("memory> %s=%s", st.Key, st.Value))
		if err := r.setMemory(st.Key, st.Value); err != nil {
			return r.fail(st, err.Error(), "", "")
		}
	case Advance:
		r.remember(fmt.Sprintf("+%v", st.Dur))
		if err := r.advance(st.Dur); err != nil {
			return r.fail(st, err.Error(), "", "")
		}
	case Expect, ExpectRe:
		r.settle()
		want := st.Text
		if st.Kind == ExpectRe {
			want = "a message matching " + st.Text
		}
		if st.Adaptor != "" {
			want += " (to " + st.Adaptor + ")"
		}
		msg, ok := r.take()
		if !ok && r.stepping.Load() && r.stopped == nil {
			// What a device event causes comes at a control cycle, whose
			// phase a recording's robot and the simulated one do not share:
			// the message may come up to one cycle later here.
			e := r.dev.Engine
			if err := r.advance(epoch.Add(e.Now() + e.Period()).Sub(r.clock.Now())); err != nil {
				return r.fail(st, err.Error(), want, "")
			}
			msg, ok = r.take()
		}
		if !ok {
			return r.fail(st, "expected a message, got none", want, "")
		}
		if st.Adaptor != "" && msg.adaptor != st.Adaptor ||
			st.Kind == Expect && msg.text != st.Text || st.Kind == ExpectRe && !st.Re.MatchString(msg.text) {
			f := r.fail(st, "wrong message", want, msg.text+" (to "+msg.adaptor+")")
			f.GotRule, f.At = msg.rule, msg.at
			return f
		}
		r.remember(msg.String())
	case State:
		if s := r.state(); s != st.Text && !r.active(st.Text) {
			if config := r.configuration(); len(config) > 1 {
				s += " (active: " + strings.Join(config, ", ") + ")"
			}
			return r.fail(st, "wrong state", st.Text, s)
		}
		r.remember("= " + st.Text)
	case Set:
		r.remember(st.Line)
		var err error
		if !r.sync(func() { err = interpreter.SetGlobal(r.m, st.Key, st.Text) }) {
			return r.fail(st, "the behavior has stopped: "+r.stopped.Error(), "", "")
		}
		if err != nil {
			return r.fail(st, err.Error(), "", "")
		}
	case Event:
		r.remember(st.Line)
		if r.stopped != nil {
			return r.fail(st, "the behavior has stopped: "+r.stopped.Error(), "", "")
		}
		r.mu.Lock()
		r.fired = "" // what follows is this event's doing
		r.mu.Unlock()
		var err error
		if r.sync(func() { err = r.hand.PostEvent(st.Text, st.Data) }) {
			r.settle()
		}
		if err != nil {
			return r.fail(st, err.Error(), "", "")
		}
	case Config:
		r.settle()
		config := r.configuration()
		if missing, extra := setDiff(st.States, config), setDiff(config, st.States); len(missing)+len(extra) > 0 {
			var why []string
			if len(missing) > 0 {
				why = append(why, "not active: "+strings.Join(missing, ", "))
			}
			if len(extra) > 0 {
				why = append(why, "active too: "+strings.Join(extra, ", "))
			}
			return r.fail(st, "wrong active states ("+strings.Join(why, "; ")+")", strings.Join(st.States, ", "), strings.Join(config, ", "))
		}
		r.remember(st.Line)
	case Skip:
		r.settle()
		r.mu.Lock()
		if n := len(r.out); n > 0 {
			r.remember(fmt.Sprintf("... (%d messages skipped)", n))
		}
		r.out = nil
		r.mu.Unlock()
	}
	return nil
}

// setDiff lists the names of a that b lacks, in a's order.
func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// finish checks that no message is left unexpected, unless the transcript
// ends with "...".
func (r *runner) finish() *Failure {
	steps := r.t.Steps
	// What is due now runs first (a document's queued events, which it
	// handles a slice at a time): a behavior that fails after the last
	// step fails its transcript.
	if !r.m.IsHost() { // a host's sessions run on their own
		r.sync(func() { r.hand.Advance(r.clock.Now(), func() bool { return false }) })
	}
	var ee *interpreter.ExitError
	if r.settle(); len(steps) > 0 && errors.As(r.stopped, &ee) && ee.Code != 0 {
		// It failed after the last step (a bound stopped it, seat.exit(1)).
		return r.fail(steps[len(steps)-1], "the behavior has stopped: "+ee.Error(), "", "")
	}
	r.mu.Lock()
	var unused []Step
	for _, a := range r.answers {
		unused = append(unused, a...)
	}
	r.mu.Unlock()
	if len(unused) > 0 {
		slices.SortFunc(unused, func(a, b Step) int { return a.Pos.Line - b.Pos.Line })
		return r.fail(unused[0], "no seat.call took this answer", "", "")
	}
	if len(steps) > 0 && steps[len(steps)-1].Kind == Skip {
		return nil
	}
	msg, ok := r.take()
	if !ok {
		return nil
	}
	last := steps[len(steps)-1]
	f := r.fail(last, "unexpected message after the last step (end the transcript with ... to allow more)", "", msg.text+" (to "+msg.adaptor+")")
	f.GotRule, f.At = msg.rule, msg.at
	return f
}

// deliver hands an event to the behavior and waits until it is handled;
// it reports false if the behavior had stopped before (an event that makes
// it stop, by seat.exit, is handled).
func (r *runner) deliver(ev adaptors.Event) bool {
	if r.stopped != nil {
		return false
	}
	if r.m.Deliver(context.Background(), ev) == nil {
		r.sync(nil)
	}
	return true
}

func (r *runner) take() (message, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.out) == 0 {
		return message{}, false
	}
	m := r.out[0]
	r.out = r.out[1:]
	return m, true
}

// peer returns the named peer of an adaptor, or its latest one; input
// with no peer connected comes from a peer "peer" that never connected.
func (r *runner) peer(adaptor, name string) *conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.peers[adaptor]
	for i := len(list) - 1; i >= 0; i-- {
		if name == "" || list[i].peer == name {
			return list[i]
		}
	}
	if name != "" {
		return nil
	}
	return &conn{r: r, adaptor: adaptor, peer: "peer"}
}

func (r *runner) connected(c *conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return contains(connNames(r.peers[c.adaptor]), c.peer)
}

func connNames(list []*conn) []string {
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = c.peer
	}
	return out
}

func (r *runner) wantsConnections(adaptor string) bool {
	a, ok := r.m.Adaptor(adaptor).(interface{ base() *memAdaptor })
	return ok && a.base().conns
}

// advance moves the virtual clock by d: to each timer as it comes due,
// and, once the device loop runs, through every control cycle. It fails
// when the step runs past the step timeout in real time (more onexec
// ticks than that allows) or the run is interrupted.
func (r *runner) advance(d time.Duration) error {
	start := r.clock.Now()
	target := start.Add(d)
	deadline := time.Now().Add(r.opts.StepTimeout)
	over := func() error {
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("interrupted at +%v of this step", r.clock.Now().Sub(start))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the step did not end within %v of real time: it reached +%v of %v, %d timers and onexec ticks run (shorten the step, or lower the onexec rate)",
				r.opts.StepTimeout, r.clock.Now().Sub(start), d, r.ticks)
		}
		return nil
	}
	r.ticks = 0
	if !r.stepping.Load() && !r.m.IsHost() {
		// No device loop to step and no sessions: the machine runs every
		// timer up to the target itself, in one call.
		// No deadline on the call itself: Hand.Advance stops at the step's
		// limit or an interrupt (a script that loops is stopped by its
		// own limit), and the runner must not go on while it runs.
		var ran int
		err := r.m.Sync(context.Background(), func() {
			_, ran = r.hand.Advance(target, func() bool { return over() != nil })
		})
		r.ticks += ran
		if e := over(); e != nil && r.clock.Now().Before(target) {
			return e
		}
		if err != nil {
			r.sync(nil) // tells why the behavior stopped
			return nil
		}
		r.settle()
		if r.stepping.Load() && r.clock.Now().Before(target) {
			return r.advance(target.Sub(r.clock.Now())) // a timer started the device loop
		}
		return nil
	}
	for r.stopped == nil {
		if err := over(); err != nil {
			return err
		}
		next := target
		var due time.Time
		var armed bool
		if r.sync(nil) { // its device events and sessions settled
			ctx, cancel := context.WithTimeout(context.Background(), r.opts.StepTimeout)
			due, armed = r.hand.NextTimer(ctx)
			cancel()
		}
		if armed && due.Before(next) && due.After(r.clock.Now()) {
			next = due
		}
		var cycle time.Time
		if r.stepping.Load() {
			e := r.dev.Engine
			cycle = epoch.Add(e.Now() + e.Period())
			if cycle.Before(next) || cycle.Equal(next) {
				next = cycle
			}
		}
		r.clock.Advance(next.Sub(r.clock.Now()))
		r.ticks++
		if r.stepping.Load() && next.Equal(cycle) {
			_ = r.dev.Engine.Step(next.Sub(epoch))
		}
		r.settle()
		if !next.Before(target) {
			return nil
		}
	}
	return nil
}

// setMemory is memory> KEY=VALUE: a sensor of the device tree is pressed
// on the simulated robot and read at the next control cycle, which the
// clock moves to; any other key is written to memory at once.
func (r *runner) setMemory(key, value string) error {
	e := r.dev.Engine
	if s, ok := e.Tree().Resolve(key); ok && !s.IsActuator() {
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("sensor %s takes a number, not %q", key, value)
		}
		if err := e.Inject(s.Name, v); err != nil {
			return err
		}
		r.stepping.Store(true)
		return r.advance(epoch.Add(e.Now() + e.Period()).Sub(r.clock.Now()))
	}
	if strings.HasPrefix(key, "Device/") {
		return fmt.Errorf("%s is device configuration and cannot be set", key)
	}
	var v any = value
	if f, err := strconv.ParseFloat(value, 64); err == nil {
		v = f
	}
	if err := e.Memory().Set(key, v); err != nil {
		return err
	}
	r.settle()
	return nil
}

// memAdaptor stands in for every adaptor of the behavior: what it sends
// is kept for the transcript's expectations.
type memAdaptor struct {
	r     *runner
	name  string
	conns bool
}

func (a *memAdaptor) base() *memAdaptor                         { return a }
func (a *memAdaptor) Name() string                              { return a.name }
func (a *memAdaptor) Open(context.Context, adaptors.Sink) error { return nil }
func (a *memAdaptor) Close() error                              { return nil }
func (a *memAdaptor) Send(text string) error {
	a.r.sent(message{adaptor: a.name, text: text})
	return nil
}

// SendTopic keeps a message published to a topic of its own (MQTT).
func (a *memAdaptor) SendTopic(topic, text string, retain bool) error {
	a.r.sent(message{adaptor: a.name, text: text, topic: topic})
	return nil
}

// Call stands in for a service (seat.call to a ros_client): the request
// is a message to the adaptor, as JSON, and the answer is the next one
// the transcript gave (NAME=> JSON). With none given the call fails, as a
// call to a service that is not there does.
func (a *memClient) Call(_ context.Context, v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &adaptors.InvalidMessageError{Err: err}
	}
	a.r.sent(message{adaptor: a.name, text: string(b)})
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	q := a.r.answers[a.name]
	if len(q) == 0 {
		return nil, fmt.Errorf("the transcript gives no answer: write %s=> JSON before the step that calls it", a.name)
	}
	a.r.answers[a.name] = q[1:]
	if q[0].Err != "" {
		return nil, errors.New(q[0].Err)
	}
	return q[0].Data, nil
}

// Finish stands in for an action server's seat.result: it answers the
// goal a rule took last (NAME:ros_action>> JSON; id, when given, must be
// its peer) with the result as JSON, after its status when that is not
// "succeeded" ("aborted {}"). A goal a NAME:ros_action_preempted>> or
// NAME:ros_action_cancel>> step ended is adaptors.ErrGoalEnded.
func (a *memActionServer) Finish(id string, v any, status string) error {
	switch status {
	case "succeeded", "aborted", "canceled":
	default:
		return fmt.Errorf("goal status %q: want succeeded, aborted or canceled", status)
	}
	q, err := a.goal(id)
	if err != nil {
		return err
	}
	return q.Send(interpreter.ResultText(v, status))
}

// Feedback stands in for an action server's feedback on a named goal: a
// message to the adaptor, as JSON.
func (a *memActionServer) Feedback(id string, v any) error {
	if _, err := a.goal(id); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	return a.Send(string(b))
}

// goal is the goal a rule took last, when it is still in progress and
// id is "" or its peer.
func (a *memActionServer) goal(id string) (*request, error) {
	a.r.mu.Lock()
	q := a.r.goals[a.name]
	a.r.mu.Unlock()
	switch {
	case q != nil && q.ended != "" && (id == "" || id == q.peer):
		return nil, fmt.Errorf("%s: goal %q was %s: %w", a.name, q.peer, q.ended, adaptors.ErrGoalEnded)
	case q == nil || q.answered:
		return nil, fmt.Errorf("%s: no goal in progress", a.name)
	case id != "" && id != q.peer:
		return nil, fmt.Errorf("%s: no goal %q in progress", a.name, id)
	}
	return q, nil
}

// memClient stands in for a ros_client, memActionServer for a
// ros_action_server and memActionClient for a ros_action_client.
type (
	memClient       struct{ *memAdaptor }
	memActionServer struct{ *memAdaptor }
	memActionClient struct{ *memAdaptor }
)

// CancelGoal stands in for an action client's seat.cancel: a goal is in
// progress from a message to the adaptor (seat.publish) until the
// transcript gives its result (NAME:ros_action_result>> JSON), and its
// cancel is the message "cancel" to the adaptor.
func (a *memActionClient) CancelGoal() (bool, error) {
	a.r.mu.Lock()
	inProgress := a.r.goalsOut[a.name]
	a.r.mu.Unlock()
	if inProgress {
		a.r.sent(message{adaptor: a.name, text: "cancel"})
	}
	return inProgress, nil
}

// Send keeps a goal sent to the action client; it is in progress.
func (a *memActionClient) Send(text string) error {
	a.r.mu.Lock()
	a.r.goalsOut[a.name] = true
	a.r.mu.Unlock()
	return a.memAdaptor.Send(text)
}

// conn is a peer of a memAdaptor: seat.reply sends to it.
type conn struct {
	r             *runner
	adaptor, peer string
}

func (c *conn) Send(text string) error {
	c.r.sent(message{adaptor: c.adaptor, peer: c.peer, text: text})
	return nil
}

// SendTopic keeps a message published for this peer to a topic of its own
// (MQTT), with the peer in the topic's "+", as a robot's connection does.
func (c *conn) SendTopic(topic, text string, retain bool) error {
	c.r.sent(message{adaptor: c.adaptor, peer: c.peer, text: text, topic: mqtt.Fill(topic, c.peer)})
	return nil
}

// request stands for a ROS service request or action goal of a
// transcript (NAME:KEY>> JSON): the behavior answers it once (a rule's
// result, seat.reply), and the answer is a message to the adaptor, as
// JSON.
type request struct {
	*conn
	answered bool // the machine's goroutine alone reads and sets it
	// about is the goal a preemption or cancel is about (nil for a
	// goal); ended says how a goal ended when the behavior did not end it.
	about *request
	ended string
}

func (q *request) Answered() bool { return q.answered }

// Take makes a goal the one seat.result ends, as a rule firing on a real
// goal's event does; a preemption or cancel is no goal.
func (q *request) Take() {
	if q.about != nil {
		return
	}
	q.r.mu.Lock()
	q.r.goals[q.adaptor] = q
	q.r.mu.Unlock()
}

// settle ends the goal a preemption or cancel (key) was about once it
// has been handled: a rule's answer ended it, else its client's side did.
func (q *request) settle(key string) {
	g := q.about
	if g == nil || g.answered {
		return
	}
	g.answered = true
	if !q.answered {
		g.ended = "canceled at its client's request"
		if key == "ros_action_preempted" {
			g.ended = "preempted by a new goal"
		}
	}
}

func (q *request) SendMessage(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	return q.Send(string(b))
}

func (q *request) Send(text string) error {
	if q.answered {
		return errors.New("the request is answered already")
	}
	q.answered = true
	return q.conn.Send(text)
}

func (c *conn) String() string { return c.adaptor + " " + c.peer }
func (c *conn) Peer() string   { return c.peer }

// frame gives Options.Frame the behavior after step n (0: the start);
// false ends the run.
func (r *runner) frame(n int, st Step, failed *Failure, next *Step) bool {
	if r.opts.Frame == nil {
		return true
	}
	fr := Frame{Step: n, Line: st.Line, T: r.now(), Recorded: st.Recorded, Next: next, Steps: len(r.t.Steps)}
	r.mu.Lock()
	fr.Said, r.said = r.said, nil
	r.mu.Unlock()
	if failed != nil {
		fr.Failed = failed.What
	}
	if !r.sync(func() { fr.Show = interpreter.Snapshot(r.m) }) {
		fr.Show.State = r.m.CurrentState()
	}
	return r.opts.Frame(fr)
}

func (r *runner) sent(m message) {
	r.mu.Lock()
	m.at, m.rule = r.now(), r.fired
	r.out = append(r.out, m)
	if r.opts.Frame != nil {
		r.said = append(r.said, m.String())
	}
	r.mu.Unlock()
	r.verbose("        %-6v %s\n", m.at, m)
}

// logLines collects the behavior's log.
type logLines struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.TrimSpace(l.buf.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
