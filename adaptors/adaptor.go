// Package adaptors defines how transports connect to a running behavior:
// the Adaptor interface, the events adaptors deliver, and a registry of
// adaptor types filled by each transport's init function. It never imports
// the interpreter: the interpreter imports it.
package adaptors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Event is one line of input from an adaptor.
type Event struct {
	// Source is the adaptor's name, or "gui" for widget events.
	Source string
	// Text is the event text, trailing CR and LF removed.
	Text string
	// ID names the widget of a "gui" event (an input's id or a button's label).
	ID string
	// Ref is the widget's "state:id" when the page says which state's
	// widget it is (its panel shows several states' widgets, which may
	// share an id); "" otherwise.
	Ref string
	// Key is what rules match for device-layer events (sources "memory" and
	// "motion"): a memory key, or "done:<motion>"; Text carries the data.
	Key string
	// From is the connection the event came from, for seat.reply; may be nil.
	From Conn
	// Topic is the MQTT topic an event was published on (event.topic).
	Topic string
	// Data is a structured message (a ROS message other than a
	// std_msgs/String) as plain values: map[string]any keyed by field
	// name, []any, int64, float64, string and bool. Text then holds the
	// same message as JSON, for logs and records; keyed rules match its
	// Key when it has one (a ROS service request's "ros_service") and do
	// not see it otherwise; key-less rules do; scripts read it as a table
	// (event.data, rtc_in_data). nil for a line of text.
	Data any
	// Retained marks an MQTT message the broker kept for the topic and
	// sent because a subscription was made (event.retained).
	Retained bool
	// Update marks a "gui" event that only sets a widget's value (ID is the
	// widget's "state:id"): no rule runs.
	Update bool
	// Kind tells a peer's arrival or departure from a line of text.
	Kind EventKind
	// Time is when the event arrived.
	Time time.Time
	// Done, if set, is called once with handled true when the behavior has
	// handled the event, or refused it for good (a session limit, no
	// session for it), and with handled false when it was not handled
	// because the behavior was not running or stopped first. An adaptor
	// whose peer sends again what is not acknowledged (MQTT at QoS 1)
	// acknowledges on true only.
	Done func(handled bool)
}

// EventKind is what an event reports.
type EventKind uint8

// Event kinds. A Connected event comes before any line of its connection,
// a Disconnected one after the last.
const (
	Text         EventKind = iota // a line, frame or POST body
	Connected                     // a peer connected (From is the peer)
	Disconnected                  // a peer left or the connection was lost
)

// Conn is one peer connection of an adaptor.
type Conn interface {
	// Send queues text for this peer only; it never blocks.
	Send(text string) error
	// String names the peer in logs, for example "chat 127.0.0.1:50314".
	String() string
	// Peer is the peer's address, for example "127.0.0.1:50314"
	// (event.peer).
	Peer() string
}

// SessionKeyed is implemented by connections that are not one object per
// peer, such as an MQTT publication's sender: a session host finds their
// session by this key. Other connections are their own key: a new
// connection is a new session even from the same address and port, and
// only its own Disconnected ends it. Conn implementations are pointers.
// An empty key means the connection is no sender of its own (an MQTT
// publication on a filter without "+"): its events go to every session.
type SessionKeyed interface {
	SessionKey() string
}

// Readier is implemented by sinks that tell when their behavior begins
// handling events (it has entered its initial state). Before then a
// behavior drops what it is given (it is loaded, not running); an adaptor
// whose peer keeps what is not acknowledged (MQTT at QoS 1) waits for
// Ready instead, so that nothing is lost between load and start.
type Readier interface {
	Ready() <-chan struct{}
}

// Hanger is implemented by connections the behavior's side can end:
// Hangup sends what is queued for the peer, then closes the connection.
// A session that calls seat.exit hangs up on its peer.
type Hanger interface {
	Hangup()
}

// Sink receives events. The interpreter implements it with a bounded queue.
type Sink interface {
	// Deliver queues an event, blocking while the queue is full, so that a
	// fast peer slows down instead of losing events. It fails only when ctx
	// ends or the sink is closed. The interpreter may handle the event on
	// the caller's goroutine before returning, when its behavior is idle:
	// a caller must not hold a lock that the behavior's actions (a Send
	// to this adaptor) take.
	Deliver(ctx context.Context, ev Event) error
	// EndOfInput tells the sink that the named adaptor's input has ended
	// (standard input at EOF); a behavior with no other adaptor ends its
	// run once the events queued before are handled.
	EndOfInput(source string)
}

// HandledSink is a Sink that tells when a peer's input has been handled:
// Handled returns once every event delivered from the peer before the
// call has been handled (or the behavior stopped, or ctx ended). A socket
// whose peer finished sending waits for it before it closes, so that the
// replies to the peer's last lines still go out, and no longer.
type HandledSink interface {
	Sink
	Handled(ctx context.Context, from Conn) error
}

// BatchSink is a Sink that takes several events at once, in order. An
// adaptor that has many events ready (lines already buffered) delivers them
// as one batch: one queue operation and one wake-up instead of one each.
// The sink owns evs after the call; a batch from NewBatch is handed back
// with ReleaseBatch once its events are handled.
type BatchSink interface {
	Sink
	DeliverBatch(ctx context.Context, evs []Event) error
}

// BatchCap is the capacity of the batches NewBatch hands out: the most
// events a reader should put in one batch.
const BatchCap = 64

var batches = sync.Pool{New: func() any { return new([]Event) }}

// NewBatch returns an empty batch of events, reused from earlier batches
// given back with ReleaseBatch, so that a busy reader does not allocate.
func NewBatch() []Event {
	b := *batches.Get().(*[]Event)
	if b == nil {
		b = make([]Event, 0, BatchCap)
	}
	return b[:0]
}

// ReleaseBatch gives a batch back for reuse. Nothing may use it afterwards.
// Batches that grew beyond NewBatch's capacity are left to the collector.
func ReleaseBatch(b []Event) {
	if cap(b) != BatchCap {
		return
	}
	clear(b[:cap(b)]) // drop the references the events hold
	b = b[:0]
	batches.Put(&b)
}

// FlushingSink is a Sink that calls Flush on its adaptors after each batch
// of work (the interpreter's machine). Adaptors then need not wake their
// writers for every message: they mark connections with output and start
// writing on Flush, one write per connection per batch.
type FlushingSink interface {
	Sink
	Flushes() bool
}

// Flusher is implemented by adaptors that batch output until Flush.
type Flusher interface {
	Flush()
}

// Adaptor is a transport instance declared by a behavior.
type Adaptor interface {
	// Name is the adaptor's declared name.
	Name() string
	// Open starts the adaptor: a server listens, a client makes its first
	// connection attempt. It returns once the adaptor is ready; goroutines it
	// starts deliver events to sink until Close.
	Open(ctx context.Context, sink Sink) error
	// Send sends text to every peer. It never blocks: each peer has a bounded
	// queue, and a peer that falls too far behind is disconnected.
	Send(text string) error
	// Close stops the adaptor and waits for its goroutines.
	Close() error
}

// TopicSender is implemented by adaptors, and peers, that publish to
// topics (MQTT): <message sendto="bus" topic="robot/1/led" retain="true">.
// An empty topic is the adaptor's publish topic; a peer (a robot of a
// topic session) fills a "+" in the topic with its own value.
type TopicSender interface {
	SendTopic(topic, text string, retain bool) error
}

// MessageSender is implemented by adaptors that send structured messages
// (ROS): seat.publish(adaptor, table). v is plain values, as Event.Data
// holds them. A value that does not fit the adaptor's message type is an
// *InvalidMessageError, and nothing is sent.
type MessageSender interface {
	SendMessage(v any) error
}

// Caller is implemented by adaptors that call a service and wait for its
// answer (ROS's ros_client): seat.call(adaptor, table). v and the answer
// are plain values; a value that does not fit the request is an
// *InvalidMessageError. Call returns when ctx ends, with its error.
type Caller interface {
	Call(ctx context.Context, v any) (any, error)
}

// Finisher is implemented by adaptors that work on one goal at a time
// and end it (ROS's ros_action_server): seat.result(adaptor, value,
// status, goal) and seat.publish(adaptor, feedback, goal). v is plain
// values; status is "succeeded", "aborted" or "canceled"; goal is a
// goal's id (its events' peer), or "" for the goal a rule took last
// (see Taker), never one the behavior has not been given. A goal its
// client's side ended meanwhile (preempted by a new goal, canceled) is
// an error wrapping ErrGoalEnded.
type Finisher interface {
	Finish(goal string, v any, status string) error
	Feedback(goal string, v any) error
}

// ErrGoalEnded is wrapped by Finisher's error for a goal its client's
// side ended (preempted by a new goal, canceled): seat.result then
// returns false and the reason instead of raising a Lua error, since a
// behavior cannot tell it from a race it cannot avoid.
var ErrGoalEnded = errors.New("the goal has ended")

// Taker is implemented by connections that stand for a goal the
// behavior takes on when a rule fires on its event (a ROS action goal):
// the interpreter calls Take before the rule's actions run. A goal no
// rule took is the adaptor's to refuse.
type Taker interface {
	Take()
}

// Canceler is implemented by adaptors that send goals (ROS's
// ros_action_client): seat.cancel(adaptor) asks the server to cancel the
// goal in progress, whose result then comes as usual. CancelGoal reports
// false when no goal is in progress.
type Canceler interface {
	CancelGoal() (bool, error)
}

// Answerer is implemented by connections that stand for one request
// waiting for its answer (a ROS service request): a script's result
// answers it, as seat.reply does.
type Answerer interface {
	Conn
	MessageSender
	Answered() bool
}

// InvalidMessageError is a value that does not fit a message type; the
// error names the field.
type InvalidMessageError struct{ Err error }

func (e *InvalidMessageError) Error() string { return e.Err.Error() }
func (e *InvalidMessageError) Unwrap() error { return e.Err }

// Worker is implemented by adaptors that go on working on what the
// behavior sent them after Send returns (a voice speaking it): Idle
// returns a channel that is closed once everything sent so far is done
// and the events that tell so are delivered.
type Worker interface {
	Idle() <-chan struct{}
}

// SentWatcher is implemented by adaptors that show what the behavior
// sends to its other adaptors (an operator page's log of what the robot
// said): Watched names those adaptors, and Sent is told each message to
// one of them, on the machine's goroutine (it must not block).
type SentWatcher interface {
	Watched() []string
	Sent(adaptor, text string)
}

// Interrupter is implemented by adaptors whose work the behavior's other
// adaptors may cut short (a voice, when a recognizer hears the user
// barge in): Interrupt says whether there was anything to cut.
type Interrupter interface {
	Interrupt() bool
}

// Addresser is implemented by adaptors that listen, so a port 0 can be
// discovered.
type Addresser interface {
	Addr() string
}

// StateObserver is implemented by adaptors that show the current state.
type StateObserver interface {
	StateChanged(name string)
}

// ActiveObserver is implemented by adaptors that show every active state,
// not only the current one: the states around it, and in a behavior with
// parallel regions those of the other regions (the web adaptor's page
// shows the widgets of each). The machine calls ActiveChanged instead of
// StateChanged for them.
type ActiveObserver interface {
	// ActiveChanged reports the current state and the active states,
	// outermost first in document order (for a flat behavior, the
	// current state alone), after each step that changes either.
	ActiveChanged(current string, active []string)
}

// GUIObserver is implemented by adaptors that show widget values.
type GUIObserver interface {
	// GUIUpdate reports a change of widget ref ("state:id"): op is "set",
	// "append" or "clear".
	GUIUpdate(ref, op, value string)
}

// Config is what a factory gets to build an adaptor.
type Config struct {
	// Behavior is the behavior's name (general@name).
	Behavior string
	// Anonymous is general@anonymous: a middleware node named after the
	// behavior gets a suffix of its own (ROS).
	Anonymous bool
	Name      string
	Type      string
	Attrs     map[string]string
	// Dir is the behavior file's directory, for relative paths.
	Dir string
	Log *zap.Logger
	// BehaviorLog is the behavior's logger, without the adaptor's name:
	// for what several adaptors share (a behavior's ROS node). Log if nil.
	BehaviorLog *zap.Logger
	Stdin       io.Reader
	Stdout      io.Writer
	// Tuning overrides built-in limits and delays; zero fields keep defaults.
	Tuning Tuning
	// GUI describes the behavior's widgets, for adaptors that show them.
	GUI *GUI
	// Connections asks for Connected and Disconnected events: the behavior
	// has onconnect or ondisconnect for this adaptor.
	Connections bool
	// Keys are what the behavior's rules listen for from this adaptor,
	// for kinds that make a grammar of them (Caps Grammar).
	Keys *Keys
	// Peer returns the behavior's open adaptor of that name, nil if it
	// has none (for an attribute naming another adaptor, Check.Refs).
	Peer func(name string) Adaptor
}

// Keys are the keys of the rules that listen to one adaptor (their
// source is the adaptor, or none), as written: a state's, by state name,
// and the general rules'. The machine tells such an adaptor which states
// are active (ActiveObserver): the keys that count are those of the
// active states and the general rules.
type Keys struct {
	States  map[string][]string
	General []string
}

// Address reads the host and port attributes of a network adaptor: the
// host defaults to 127.0.0.1, so nothing listens beyond this machine
// unless the file says so; the port must be 0..65535 (0: any free port).
func (c Config) Address() (addr string, port int, err error) {
	host := c.Attrs["host"]
	if host == "" {
		host = "127.0.0.1"
	}
	port, err = strconv.Atoi(c.Attrs["port"])
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not a port number", c.Attrs["port"])
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), port, nil
}

// PositiveInt reads a whole-number attribute greater than 0, such as
// maxline or maxconns; def when the attribute is absent.
func (c Config) PositiveInt(attr string, def int) (int, error) {
	v, ok := c.Attrs[attr]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s %q is not a whole number greater than 0", attr, v)
	}
	return n, nil
}

// GUI is the widget layout of a behavior, state by state (SEATML §11).
type GUI struct {
	Behavior string
	// States lists the states in document order.
	States []GUIState
}

// GUIState is one state's widgets, in document order.
type GUIState struct {
	Name    string
	Widgets []Widget
}

// Widget is one GUI widget as written in the behavior.
type Widget struct {
	Kind string // label, brk, space, button, input or text
	// ID is an input's or text's id, or a button's label; "" otherwise.
	ID string
	// Ref is "state:id" ("" for widgets without an id).
	Ref string
	// Attrs holds the attributes as written (text, color, bg_color,
	// colspan, rowspan, width, height, length).
	Attrs map[string]string
	// Value is the initial value of an input or text.
	Value string
}

// Tuning holds limits and delays an embedding program or a test may change.
type Tuning struct {
	// QueueBytes bounds each connection's output queue, in bytes
	// (DefaultQueueBytes if 0); a peer whose queue stays above it for
	// StallTime (DefaultStallTime if 0) without reading is disconnected.
	QueueBytes int
	StallTime  time.Duration
	// BackoffMin and BackoffMax bound a client's reconnection delay.
	BackoffMin, BackoffMax time.Duration
	// DialTimeout bounds the first connection attempt of a client.
	DialTimeout time.Duration
}

// Factory builds an adaptor from its declaration.
type Factory func(Config) (Adaptor, error)

// ErrNotConnected is returned when a message cannot be sent because no peer
// is connected.
var ErrNotConnected = errors.New("not connected")

// ErrQueueFull is returned when a peer's output queue is full; the peer is
// disconnected.
var ErrQueueFull = errors.New("output queue full")

// Arrive delivers a peer's Connected event, when on (the behavior asked
// for connection events, Config.Connections), and returns what delivers
// its Disconnected event: a reader defers it before deferring the
// connection's close, so that the departure comes after the last line and
// after the close (a reply to the departed peer then fails). ok is false
// when the sink no longer takes events: the reader should stop.
func Arrive(ctx context.Context, sink Sink, on bool, source string, from Conn) (leave func(), ok bool) {
	if !on {
		return func() {}, true
	}
	if err := sink.Deliver(ctx, Event{Source: source, Kind: Connected, From: from}); err != nil {
		return func() {}, false
	}
	return func() { _ = sink.Deliver(ctx, Event{Source: source, Kind: Disconnected, From: from}) }, true
}

// Keeper is implemented by adaptors that a reload may hand, open and with
// their connections, to the new version of their behavior when the new
// file declares them as the old one did. Keep gives the adaptor the new
// version's configuration: its attributes are the same, its GUI model may
// differ (widget values start again from the new file's).
type Keeper interface {
	Keep(cfg Config)
}
