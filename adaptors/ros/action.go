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

// The keys of action events: a goal and a request to cancel it reach an
// action server's rules; feedback and the result reach an action
// client's.
const (
	GoalKey     = "ros_action"
	CancelKey   = "ros_action_cancel"
	FeedbackKey = "ros_action_feedback"
	ResultKey   = "ros_action_result"
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
		return []adaptors.Problem{{Attr: "action_type", Msg: err.Error()}}
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
	queue     []adaptors.Event
	kick      chan struct{}
	forwarded chan struct{}
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
	a.ctx, a.cancel = context.WithCancel(ctx)
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
	ev := adaptors.Event{Source: a.name, Key: key, Data: data, Text: rosmsg.JSON(data), From: from, Time: time.Now(), Done: done}
	a.qmu.Lock()
	a.queue = append(a.queue, ev)
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
			ev := a.queue[0]
			a.queue[0] = adaptors.Event{}
			a.queue = a.queue[1:]
			a.qmu.Unlock()
			if err := a.sink.Deliver(a.ctx, ev); err != nil && a.ctx.Err() != nil {
				return
			}
		}
	}
}

// actionServer is a ros_action_server adaptor. It works on one goal at a
// time, as actionlib's simple action server does: a goal is an event keyed
// ros_action; seat.publish sends feedback; the goal ends with the result
// of the rule's script, seat.reply, or seat.result from any rule later. A
// new goal preempts the one in progress, and a request to cancel is an
// event keyed ros_action_cancel (the goal is canceled after it unless a
// rule ended it).
type actionServer struct {
	*action
	mu     sync.Mutex
	server *goroslib.ActionServer
	cur    *goal
}

// NewActionServer builds a ros_action_server adaptor.
func NewActionServer(cfg adaptors.Config) (adaptors.Adaptor, error) {
	a, err := newAction(cfg)
	if err != nil {
		return nil, err
	}
	return &actionServer{action: a}, nil
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
	return nil
}

func (a *actionServer) detach() {
	a.mu.Lock()
	s := a.server
	a.server, a.cur = nil, nil
	a.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

func (a *actionServer) onGoal(gh *goroslib.ActionServerGoalHandler, in reflect.Value) {
	gh.SetAccepted()
	g := &goal{a: a, gh: gh}
	a.mu.Lock()
	prev := a.cur
	a.cur = g
	a.mu.Unlock()
	if prev != nil && prev.end(nil, Canceled) == nil {
		a.log.Info("action goal preempted by a new one", zap.String("action", a.remote))
	}
	a.deliver(GoalKey, rosmsg.Value(in.Interface()), g, nil)
}

func (a *actionServer) onCancel(gh *goroslib.ActionServerGoalHandler) {
	a.mu.Lock()
	g := a.cur
	a.mu.Unlock()
	if g == nil || g.gh != gh {
		gh.SetCanceled(reflect.New(a.typ.Result.Go).Interface()) // not the goal in progress
		return
	}
	a.deliver(CancelKey, map[string]any{}, g, func(bool) {
		if g.end(nil, Canceled) == nil {
			a.log.Info("action goal canceled at the client's request", zap.String("action", a.remote))
		}
	})
}

// current is the goal in progress.
func (a *actionServer) current() (*goal, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil || a.cur.Answered() {
		return nil, fmt.Errorf("%s: no goal in progress", a.name)
	}
	return a.cur, nil
}

// SendMessage publishes feedback on the goal in progress.
func (a *actionServer) SendMessage(v any) error {
	g, err := a.current()
	if err != nil {
		return err
	}
	fb := reflect.New(a.typ.Feedback.Go).Interface()
	if err := rosmsg.Fill(fb, v); err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	g.gh.PublishFeedback(fb)
	return nil
}

// Send publishes feedback written as rostopic pub takes it.
func (a *actionServer) Send(text string) error {
	data, err := rosmsg.ParseText(text)
	if err != nil {
		return err
	}
	return a.SendMessage(data)
}

// Finish ends the goal in progress with a result and a status:
// succeeded, aborted or canceled.
func (a *actionServer) Finish(v any, status string) error {
	g, err := a.current()
	if err != nil {
		return err
	}
	return g.end(v, status)
}

func (a *actionServer) Close() error {
	a.close(a)
	return nil
}

// goal is a goal of an action server: the connection of its events,
// which a script's result or seat.reply ends with success.
type goal struct {
	a    *actionServer
	gh   *goroslib.ActionServerGoalHandler
	mu   sync.Mutex
	done bool
}

func (g *goal) String() string { return g.a.name + " goal" }
func (g *goal) Peer() string   { return "" }

func (g *goal) Answered() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done
}

// SendMessage ends the goal with success and this result.
func (g *goal) SendMessage(v any) error { return g.end(v, Succeeded) }

// Send ends the goal with success and a result written as rostopic pub
// takes it.
func (g *goal) Send(text string) error {
	data, err := rosmsg.ParseText(text)
	if err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	return g.end(data, Succeeded)
}

// end fills the result from v (nil: its zero value) and ends the goal with
// status; a goal ended already is an error.
func (g *goal) end(v any, status string) error {
	res := reflect.New(g.a.typ.Result.Go).Interface()
	if err := rosmsg.Fill(res, v); err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return fmt.Errorf("%s: the goal has ended already", g.a.name)
	}
	switch status {
	case Succeeded:
		g.gh.SetSucceeded(res)
	case Aborted:
		g.gh.SetAborted(res)
	case Canceled:
		g.gh.SetCanceled(res)
	default:
		return fmt.Errorf("goal status %q: want %s, %s or %s", status, Succeeded, Aborted, Canceled)
	}
	g.done = true
	return nil
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
	data, err := rosmsg.ParseText(text)
	if err != nil {
		return err
	}
	return a.SendMessage(data)
}

func (a *actionClient) Close() error {
	a.close(a)
	return nil
}
