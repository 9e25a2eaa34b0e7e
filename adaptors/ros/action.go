package ros

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/ros/rosmsg"
)

// The keys of action events: a goal, a request to cancel it and its
// preemption by a new goal reach an action server's rules; feedback and
// the result reach an action client's.
const (
	GoalKey      = "ros_action"
	CancelKey    = "ros_action_cancel"
	PreemptedKey = "ros_action_preempted"
	FeedbackKey  = "ros_action_feedback"
	ResultKey    = "ros_action_result"
)

// Goal statuses a behavior ends a goal with (seat.result).
const (
	Succeeded = "succeeded"
	Aborted   = "aborted"
	Canceled  = "canceled"
)

// actionType is the action type of a declaration: action_type, as
// pkg/Type or eSEAT's pkg.Type.
func actionType(attrs map[string]string) (*rosmsg.Action, error) {
	at := attrs["action_type"]
	if at == "" {
		return nil, errors.New("an action adaptor needs action_type, for example action_type=\"actionlib_tutorials/Fibonacci\"")
	}
	return Types.Action(at)
}

func checkAction(attrs map[string]string) []adaptors.Problem {
	if _, err := actionType(attrs); err != nil {
		return []adaptors.Problem{typeProblem("action_type", err)}
	}
	return nil
}

// action is what action servers and clients share: the action's endpoint
// and type, and where its events go.
type action struct {
	endpoint
	typ    *rosmsg.Action
	ctx    context.Context
	cancel context.CancelFunc
	sink   adaptors.Sink

	// Events wait in queue for the forwarding goroutine: goroslib calls
	// the action callbacks holding its own locks, and the behavior may
	// handle an event on the delivering goroutine, where a rule that sends
	// the next goal would wait for those locks for ever.
	qmu       sync.Mutex
	queue     []queued
	kick      chan struct{}
	forwarded chan struct{}
}

// queued is an event waiting to be forwarded; one whose skip reports
// true by then is dropped (a notice about a goal that has ended).
type queued struct {
	ev   adaptors.Event
	skip func() bool
}

func newAction(cfg adaptors.Config) (*action, error) {
	e, err := newEndpoint(cfg, "action_id")
	if err != nil {
		return nil, err
	}
	typ, err := actionType(cfg.Attrs)
	if err != nil {
		return nil, err
	}
	return &action{endpoint: e, typ: typ}, nil
}

func (a *action) open(ctx context.Context, sink adaptors.Sink, u user) {
	// Until Close, not ctx: a reload hands the open adaptor to the next
	// version, and the context it was opened with ends with the old one.
	a.ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	a.sink = sink
	a.kick, a.forwarded = make(chan struct{}, 1), make(chan struct{})
	go a.forward()
	a.node = join(a.nodeName, a.master, a.nodeLog, u)
}

func (a *action) close(u user) {
	if a.node == nil {
		return
	}
	a.cancel()
	a.node.leave(u)
	a.node = nil
	<-a.forwarded
}

// deliver queues an event of the adaptor with structured data for the
// behavior; it never waits.
func (a *action) deliver(key string, data map[string]any, from adaptors.Conn, done func(bool)) {
	a.deliverUnless(nil, key, data, from, done)
}

// deliverUnless is deliver, for an event dropped when skip reports true
// as its turn comes (skip may be nil).
func (a *action) deliverUnless(skip func() bool, key string, data map[string]any, from adaptors.Conn, done func(bool)) {
	ev := adaptors.Event{Source: a.name, Key: key, Data: data, Text: adaptors.JSON(data), From: from, Time: time.Now(), Done: done}
	a.qmu.Lock()
	a.queue = append(a.queue, queued{ev, skip})
	a.qmu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// forward hands the queued events to the behavior, in order, until the
// adaptor closes.
func (a *action) forward() {
	defer close(a.forwarded)
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-a.kick:
		}
		for {
			a.qmu.Lock()
			if len(a.queue) == 0 {
				a.qmu.Unlock()
				break
			}
			q := a.queue[0]
			a.queue[0] = queued{}
			a.queue = a.queue[1:]
			a.qmu.Unlock()
			if q.skip != nil && q.skip() {
				continue
			}
			if err := a.sink.Deliver(a.ctx, q.ev); err != nil && a.ctx.Err() != nil {
				return
			}
		}
	}
}

// actionServer is a ros_action_server adaptor. It works on one goal at a
// time, as actionlib's simple action server does. A goal is an event
// keyed ros_action whose peer is the goal's id; the behavior takes it
// when a rule fires on that event (adaptors.Taker), and a goal no rule
// took is rejected. seat.publish sends feedback and seat.result ends
// it, for the goal named or else the goal taken last; the rule's result
// or seat.reply ends it too. A new goal preempts the one in progress:
// the behavior gets an event keyed ros_action_preempted first, and a
// client's request to cancel is one keyed ros_action_cancel; the goal is
// canceled after either unless a rule ended it.
type actionServer struct {
	*action
	mu     sync.Mutex
	server *goroslib.ActionServer
	// goals are the goals by id, until a while after they end; last is
	// the latest to arrive, cur the one a rule took last.
	goals     map[string]*goal
	last, cur *goal
	n         int // goals that came with no id
}

// NewActionServer builds a ros_action_server adaptor.
func NewActionServer(cfg adaptors.Config) (adaptors.Adaptor, error) {
	a, err := newAction(cfg)
	if err != nil {
		return nil, err
	}
	return &actionServer{action: a, goals: map[string]*goal{}}, nil
}

func (a *actionServer) Open(ctx context.Context, sink adaptors.Sink) error {
	a.open(ctx, sink, a)
	return nil
}

func (a *actionServer) attach(n *goroslib.Node) error {
	onGoal := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{reflect.TypeOf(&goroslib.ActionServerGoalHandler{}), reflect.PointerTo(a.typ.Goal.Go)}, nil, false),
		func(args []reflect.Value) []reflect.Value {
			a.onGoal(args[0].Interface().(*goroslib.ActionServerGoalHandler), args[1])
			return nil
		})
	s, err := goroslib.NewActionServer(goroslib.ActionServerConf{Node: n, Name: a.remote, Action: reflect.New(a.typ.Go).Interface(),
		OnGoal: onGoal.Interface(), OnCancel: a.onCancel})
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.server = s
	a.mu.Unlock()
	a.registered("action server", "action", a.typ.Name)
	return nil
}

func (a *actionServer) detach() {
	a.mu.Lock()
	s := a.server
	a.server, a.cur, a.last, a.goals = nil, nil, nil, map[string]*goal{}
	a.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// goalID is the id actionlib's client gave a goal: goroslib keeps it in
// an unexported field of the handler, which reflect reads.
func goalID(gh *goroslib.ActionServerGoalHandler) string {
	f := reflect.ValueOf(gh).Elem().FieldByName("id")
	if f.Kind() != reflect.String {
		return ""
	}
	return f.String()
}

// keepEnded is how many goals the server keeps after they end, so that
// seat.result naming one says how it ended.
const keepEnded = 64

func (a *actionServer) onGoal(gh *goroslib.ActionServerGoalHandler, in reflect.Value) {
	g := &goal{a: a, gh: gh, id: goalID(gh)}
	a.mu.Lock()
	if g.id == "" || a.goals[g.id] != nil {
		a.n++
		g.id = fmt.Sprintf("%s#%d", g.id, a.n)
	}
	if len(a.goals) >= keepEnded {
		for id, old := range a.goals {
			if old != a.cur && old.ended() {
				delete(a.goals, id)
			}
		}
	}
	a.goals[g.id] = g
	prev := a.last
	a.last = g
	a.mu.Unlock()
	if prev != nil && !prev.ended() {
		// Told before the new goal's event; canceled after it, unless a
		// rule ended it (its result answers the notice).
		a.deliverUnless(prev.ended, PreemptedKey, map[string]any{"goal_id": prev.id, "by": g.id}, &notice{prev}, func(bool) {
			if prev.endBy(Canceled, "preempted by goal "+g.id) {
				a.log.Info("action goal preempted by a new one", zap.String("action", a.remote), zap.String("goal", prev.id), zap.String("by", g.id))
			}
		})
	}
	a.deliver(GoalKey, rosmsg.Value(in.Interface()), g, func(bool) {
		if g.endBy(rejected, "rejected: no rule took it") {
			a.log.Info("action goal rejected: no rule of the behavior's state took it (a rule keyed "+GoalKey+")", zap.String("action", a.remote), zap.String("goal", g.id))
		}
	})
}

func (a *actionServer) onCancel(gh *goroslib.ActionServerGoalHandler) {
	a.mu.Lock()
	g := a.goals[goalID(gh)]
	a.mu.Unlock()
	if g == nil || g.gh != gh || g.ended() {
		gh.SetCanceled(reflect.New(a.typ.Result.Go).Interface()) // none of ours, or over: goroslib does nothing to an ended goal
		return
	}
	a.deliverUnless(g.ended, CancelKey, map[string]any{"goal_id": g.id}, &notice{g}, func(bool) {
		if g.endBy(Canceled, "canceled at its client's request") {
			a.log.Info("action goal canceled at the client's request", zap.String("action", a.remote), zap.String("goal", g.id))
		}
	})
}

// find is the goal of id, or with "" the goal a rule took last: only a
// goal the behavior has taken.
func (a *actionServer) find(id string) (*goal, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.cur
	if id != "" {
		g = a.goals[id]
		if g == nil || !g.wasTaken() {
			return nil, fmt.Errorf("%s: no goal %q in progress", a.name, id)
		}
	}
	if g == nil {
		return nil, fmt.Errorf("%s: no goal in progress", a.name)
	}
	return g, nil
}

// SendMessage publishes feedback on the goal a rule took last.
func (a *actionServer) SendMessage(v any) error { return a.Feedback("", v) }

// Feedback publishes feedback on a goal: the goal of id, or the one a
// rule took last. Feedback on a goal its client's side ended (preempted,
// canceled) is dropped, and logged once per goal.
func (a *actionServer) Feedback(id string, v any) error {
	g, err := a.find(id)
	if err != nil {
		return err
	}
	fb := reflect.New(a.typ.Feedback.Go).Interface()
	if err := rosmsg.Fill(fb, v); err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.done && g.why == "":
		return fmt.Errorf("%s: no goal in progress", a.name)
	case g.done:
		if !g.dropped {
			g.dropped = true
			a.log.Info("feedback dropped: the goal has ended", zap.String("action", a.remote), zap.String("goal", g.id), zap.String("how", g.why))
		}
		return nil
	}
	g.gh.PublishFeedback(fb)
	return nil
}

// Send publishes feedback written as rostopic pub takes it.
func (a *actionServer) Send(text string) error {
	data, err := adaptors.ParseText(text)
	if err != nil {
		return err
	}
	return a.SendMessage(data)
}

// Finish ends a goal (the goal of id, or the one a rule took last) with
// a result and a status: succeeded, aborted or canceled.
func (a *actionServer) Finish(id string, v any, status string) error {
	if status != Succeeded && status != Aborted && status != Canceled {
		return fmt.Errorf("goal status %q: want %s, %s or %s", status, Succeeded, Aborted, Canceled)
	}
	g, err := a.find(id)
	if err != nil {
		return err
	}
	return g.end(v, status)
}

func (a *actionServer) Close() error {
	a.close(a)
	return nil
}

// goal is a goal of an action server: the connection of its event,
// which a rule takes (accepting the goal) and whose result or seat.reply
// ends it with success.
type goal struct {
	a  *actionServer
	gh *goroslib.ActionServerGoalHandler
	id string

	mu      sync.Mutex
	taken   bool
	done    bool
	why     string // how the goal ended when the behavior did not end it
	dropped bool   // feedback dropped after the end was logged
}

func (g *goal) String() string { return g.a.name + " goal " + g.id }

// Peer is the goal's id (event.peer).
func (g *goal) Peer() string { return g.id }

func (g *goal) Answered() bool { return g.ended() }

func (g *goal) ended() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done
}

func (g *goal) wasTaken() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.taken
}

// Take accepts the goal, when a rule fires on its event: seat.result and
// feedback without a goal's id are for it from now on.
func (g *goal) Take() {
	g.mu.Lock()
	first := !g.taken
	g.taken = true
	if first && !g.done {
		g.gh.SetAccepted()
	}
	g.mu.Unlock()
	if first {
		g.a.mu.Lock()
		g.a.cur = g
		g.a.mu.Unlock()
	}
}

// SendMessage ends the goal with success and this result.
func (g *goal) SendMessage(v any) error { return g.end(v, Succeeded) }

// Send ends the goal with success and a result written as rostopic pub
// takes it.
func (g *goal) Send(text string) error {
	data, err := adaptors.ParseText(text)
	if err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	return g.end(data, Succeeded)
}

// rejected is the status of a goal no rule took.
const rejected = "rejected"

// end fills the result from v (nil: its zero value) and ends the goal with
// status; a goal ended already is an error, wrapping ErrGoalEnded when
// its client's side ended it.
func (g *goal) end(v any, status string) error {
	res := reflect.New(g.a.typ.Result.Go).Interface()
	if err := rosmsg.Fill(res, v); err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.endLocked(res, status)
}

// endLocked ends the goal with a filled result; g.mu is held.
func (g *goal) endLocked(res any, status string) error {
	switch {
	case g.done && g.why != "":
		return fmt.Errorf("%s: goal %q was %s: %w", g.a.name, g.id, g.why, adaptors.ErrGoalEnded)
	case g.done:
		return fmt.Errorf("%s: no goal in progress (goal %q has ended already)", g.a.name, g.id)
	}
	switch status {
	case Succeeded:
		g.gh.SetSucceeded(res)
	case Aborted:
		g.gh.SetAborted(res)
	case Canceled:
		g.gh.SetCanceled(res)
	default: // rejected, for a goal no rule took
		g.gh.SetRejected(res)
	}
	g.done = true
	return nil
}

// endBy ends the goal with status and an empty result, unless it has
// ended or (to reject it) a rule took it; why says how, to a later
// seat.result. It reports whether it ended the goal.
func (g *goal) endBy(status, why string) bool {
	res := reflect.New(g.a.typ.Result.Go).Interface()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done || status == rejected && g.taken || g.endLocked(res, status) != nil {
		return false
	}
	g.why = why
	return true
}

// notice is the connection of an event about a goal (its preemption, a
// request to cancel it): its peer is the goal's id, and the rule's result
// or seat.reply ends the goal canceled, with that result.
type notice struct{ g *goal }

func (n *notice) String() string          { return n.g.String() }
func (n *notice) Peer() string            { return n.g.id }
func (n *notice) Answered() bool          { return n.g.ended() }
func (n *notice) SendMessage(v any) error { return n.g.end(v, Canceled) }

func (n *notice) Send(text string) error {
	data, err := adaptors.ParseText(text)
	if err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	return n.g.end(data, Canceled)
}

// actionClient is a ros_action_client adaptor: seat.publish (or a
// <message>) sends a goal, and its feedback and result come back as events
// keyed ros_action_feedback and ros_action_result. A new goal replaces
// the one in progress, as actionlib's simple action client does. A goal
// sent before the action server is there waits for it (the last one). A
// goal in progress when the node is made again (the master restarted)
// ends with the status "lost", as actionlib's LOST: its server's answer
// can no longer come.
type actionClient struct {
	*action
	mu      sync.Mutex
	client  *goroslib.SimpleActionClient
	ready   bool // the server is there: goals go out at once
	pending any  // the goal waiting for the server
	// goals numbers the goals sent; inProgress is the one whose result
	// has not come (0: none).
	goals, inProgress uint64
}

// NewActionClient builds a ros_action_client adaptor.
func NewActionClient(cfg adaptors.Config) (adaptors.Adaptor, error) {
	a, err := newAction(cfg)
	if err != nil {
		return nil, err
	}
	return &actionClient{action: a}, nil
}

func (a *actionClient) Open(ctx context.Context, sink adaptors.Sink) error {
	a.open(ctx, sink, a)
	return nil
}

func (a *actionClient) attach(n *goroslib.Node) error {
	c, err := goroslib.NewSimpleActionClient(goroslib.SimpleActionClientConf{Node: n, Name: a.remote, Action: reflect.New(a.typ.Go).Interface()})
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.client, a.ready = c, false
	a.mu.Unlock()
	a.registered("action client", "action", a.typ.Name)
	go func() {
		c.WaitForServer() // or the client is closed
		a.mu.Lock()
		if a.client != c {
			a.mu.Unlock()
			return
		}
		a.ready = true
		g := a.pending
		a.pending = nil
		a.mu.Unlock()
		if g != nil {
			if err := a.sendGoal(c, g); err != nil {
				a.log.Warn("action goal not sent", zap.String("action", a.remote), zap.Error(err))
			}
		}
	}()
	return nil
}

func (a *actionClient) detach() {
	a.mu.Lock()
	c := a.client
	lost := a.inProgress != 0
	a.client, a.ready, a.inProgress = nil, false, 0
	a.mu.Unlock()
	if c != nil {
		c.Close()
	}
	if lost && a.ctx.Err() == nil { // not when the adaptor closes
		a.log.Warn("the action goal in progress is lost: the node was made again (the ROS master restarted?)", zap.String("action", a.remote))
		a.ended("lost", nil)
	}
}

var goalStates = map[goroslib.SimpleActionClientGoalState]string{
	goroslib.SimpleActionClientGoalStatePending:   "pending",
	goroslib.SimpleActionClientGoalStateActive:    "active",
	goroslib.SimpleActionClientGoalStateRecalled:  "recalled",
	goroslib.SimpleActionClientGoalStateRejected:  "rejected",
	goroslib.SimpleActionClientGoalStatePreempted: "preempted",
	goroslib.SimpleActionClientGoalStateAborted:   "aborted",
	goroslib.SimpleActionClientGoalStateSucceeded: "succeeded",
	goroslib.SimpleActionClientGoalStateLost:      "lost",
}

// SendMessage sends a goal given as plain values.
func (a *actionClient) SendMessage(v any) error {
	g := reflect.New(a.typ.Goal.Go).Interface()
	if err := rosmsg.Fill(g, v); err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	a.mu.Lock()
	c, ready := a.client, a.ready
	if c != nil && !ready {
		a.pending = g
	}
	a.mu.Unlock()
	switch {
	case c == nil:
		return fmt.Errorf("%s: not connected to the ROS master at %s yet; goal not sent", a.name, a.master)
	case !ready:
		a.log.Info("the action server is not there yet; the goal waits for it", zap.String("action", a.remote))
		return nil
	}
	return a.sendGoal(c, g)
}

// sendGoal sends a filled goal, its feedback and result to come back as
// events.
func (a *actionClient) sendGoal(c *goroslib.SimpleActionClient, g any) error {
	a.mu.Lock()
	if a.client != c { // made again meanwhile: goroslib's SendGoal on a closed client does nothing
		if a.client == nil || !a.ready {
			a.pending = g // for the next client, once its server is there
			a.mu.Unlock()
			return nil
		}
		c = a.client
	}
	a.goals++
	id := a.goals
	a.inProgress = id
	a.mu.Unlock()
	onDone := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{reflect.TypeOf(goroslib.SimpleActionClientGoalState(0)), reflect.PointerTo(a.typ.Result.Go)}, nil, false),
		func(args []reflect.Value) []reflect.Value {
			a.mu.Lock()
			if a.client != c { // detached: the goal was reported lost
				a.mu.Unlock()
				return nil
			}
			if a.inProgress == id {
				a.inProgress = 0
			}
			a.mu.Unlock()
			state := goalStates[args[0].Interface().(goroslib.SimpleActionClientGoalState)]
			a.ended(state, args[1].Interface())
			return nil
		})
	onFeedback := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{reflect.PointerTo(a.typ.Feedback.Go)}, nil, false),
		func(args []reflect.Value) []reflect.Value {
			a.deliver(FeedbackKey, rosmsg.Value(args[0].Interface()), nil, nil)
			return nil
		})
	err := c.SendGoal(goroslib.SimpleActionClientGoalConf{Goal: g, OnDone: onDone.Interface(), OnFeedback: onFeedback.Interface()})
	if err != nil {
		a.mu.Lock()
		if a.inProgress == id {
			a.inProgress = 0
		}
		a.mu.Unlock()
	}
	return err
}

// ended delivers a goal's end, keyed ros_action_result: its status and
// its result (a filled result message; nil for an empty one).
func (a *actionClient) ended(status string, result any) {
	if result == nil {
		result = reflect.New(a.typ.Result.Go).Interface()
	}
	a.deliver(ResultKey, map[string]any{"status": status, "result": rosmsg.Value(result)}, nil, nil)
}

// CancelGoal asks the server to cancel the goal in progress (its result,
// usually "preempted", comes as usual); a goal still waiting for its
// server is dropped and ends "recalled". It reports false when there is
// no goal to cancel.
func (a *actionClient) CancelGoal() (bool, error) {
	a.mu.Lock()
	c, inProgress, pending := a.client, a.inProgress, a.pending
	a.pending = nil
	a.mu.Unlock()
	switch {
	case pending != nil:
		a.ended("recalled", nil)
		return true, nil
	case c == nil || inProgress == 0:
		return false, nil
	}
	c.CancelGoal()
	return true, nil
}

// Send sends a goal written as rostopic pub takes it.
func (a *actionClient) Send(text string) error {
	data, err := adaptors.ParseText(text)
	if err != nil {
		return err
	}
	return a.SendMessage(data)
}

func (a *actionClient) Close() error {
	a.close(a)
	return nil
}
