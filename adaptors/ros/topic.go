// Package ros connects a behavior to ROS 1 through a master: eSEAT's
// ros_pub and ros_sub adaptors (topics), ros_server and ros_client
// (services), ros_action_server and ros_action_client (actions), with
// message types read at run time (package rosmsg) and the wire protocol
// of goroslib. A ros_sub reads its publishers and a ros_server serves its
// clients over TCPROS itself (subscribe.go, service.go); the rest is
// goroslib's (docs/ros.md).
package ros

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/bluenviron/goroslib/v2"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/ros/rosmsg"
	"github.com/seatml/seat/schema"
)

// Types is the registry of message types the adaptors use: definitions
// from ROS_PACKAGE_PATH, then /usr/share.
var Types = rosmsg.NewRegistry(nil)

// MasterAddress returns host:port of the master: the adaptor's master
// attribute (which --set can give), else ROS_MASTER_URI.
func MasterAddress(attrs map[string]string) (string, error) {
	uri := attrs["master"]
	if uri == "" {
		uri = os.Getenv("ROS_MASTER_URI")
	}
	if uri == "" {
		return "", fmt.Errorf("no ROS master: set ROS_MASTER_URI (http://127.0.0.1:11311) or the adaptor's master attribute")
	}
	if !strings.Contains(uri, "://") {
		uri = "http://" + uri
	}
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" || u.Port() == "" {
		return "", fmt.Errorf("ROS master %q: give http://HOST:PORT", uri)
	}
	return u.Host, nil
}

// The six ROS 1 kinds (docs/ros.md): a topic is the adaptor's name, a
// service or an action too unless service= or action_id= says otherwise.
func init() {
	decl := func(check func(map[string]string) []adaptors.Problem) func(adaptors.Decl) []adaptors.Problem {
		return func(d adaptors.Decl) []adaptors.Problem { return check(d.Attrs) }
	}
	for _, k := range []adaptors.Kind{
		{Name: "ros_pub", New: func(cfg adaptors.Config) (adaptors.Adaptor, error) { return NewTopic(cfg, true) }, Caps: adaptors.Messages,
			Attrs: rosAttrs(topicAttrs, map[string]schema.AttrSpec{"size": {Ignored: `attribute "size" is rospy's publisher queue size; seat's publisher has none; ignored`}}),
			Check: adaptors.Check{Decl: decl(checkTopic), Message: checkMessage}},
		{Name: "ros_sub", New: func(cfg adaptors.Config) (adaptors.Adaptor, error) { return NewTopic(cfg, false) }, Caps: adaptors.Messages,
			Attrs: rosAttrs(topicAttrs, map[string]schema.AttrSpec{"size": {Ignored: `attribute "size" is rospy's subscriber queue size; seat's subscriber hands every message to the behavior's event queue; ignored`}}),
			Check: adaptors.Check{Decl: decl(checkTopic)}},
		{Name: "ros_server", New: NewServer,
			Attrs: rosAttrs(serviceAttrs, map[string]schema.AttrSpec{"impl": {Ignored: `attribute "impl" names a Python handler in eSEAT; write <rule source="ADAPTOR"><key>ros_service</key> whose script returns the response (docs/ros.md); ignored`}}),
			Check: adaptors.Check{Decl: decl(checkService)}},
		{Name: "ros_client", New: NewClient, Caps: adaptors.Calls,
			Attrs: rosAttrs(serviceAttrs, nil), Check: adaptors.Check{Decl: decl(checkService)}},
		{Name: "ros_action_server", New: NewActionServer, Caps: adaptors.Goals | adaptors.Messages,
			Attrs: rosAttrs(actionAttrs, map[string]schema.AttrSpec{"callback": {Ignored: `attribute "callback" names a Python goal handler in eSEAT; write <rule source="ADAPTOR"><key>ros_action</key>, with seat.publish for feedback and seat.result to end the goal (docs/ros.md); ignored`}}),
			Check: adaptors.Check{Decl: decl(checkAction)}},
		{Name: "ros_action_client", New: NewActionClient, Caps: adaptors.Cancels | adaptors.Messages,
			Attrs: rosAttrs(actionAttrs, nil), Check: adaptors.Check{Decl: decl(checkAction)}},
	} {
		adaptors.RegisterKind(k)
	}
}

// The attributes of ROS topic, service and action adaptors.
var (
	topicAttrs = map[string]schema.AttrSpec{
		"datatype": {},
		"topic":    {}, // else the adaptor's name, eSEAT's way (name="/chatter")
	}
	serviceAttrs = map[string]schema.AttrSpec{
		"service":      {}, // else the adaptor's name
		"service_type": {Required: true},
	}
	actionAttrs = map[string]schema.AttrSpec{
		"action_id":   {}, // else the adaptor's name
		"action_type": {Required: true},
	}
)

// rosAttrs are the attributes of every ROS adaptor, with a kind's and a
// type's own: the master (else ROS_MASTER_URI), and eSEAT's Python-only
// attributes, accepted with a warning saying what to write.
func rosAttrs(kind, own map[string]schema.AttrSpec) map[string]schema.AttrSpec {
	m := map[string]schema.AttrSpec{
		"master":   {},
		"callback": {Ignored: `attribute "callback" names a Python function in eSEAT; write a <rule source="ADAPTOR"> instead (docs/ros.md); ignored`},
		"impl":     {Ignored: `attribute "impl" names Python code in eSEAT; write the rule's actions in Lua instead (docs/ros.md); ignored`},
		"file":     {Ignored: `attribute "file" loads Python code in eSEAT; write the rule's actions in Lua instead (docs/ros.md); ignored`},
	}
	for _, attrs := range []map[string]schema.AttrSpec{kind, own} {
		for k, v := range attrs {
			m[k] = v
		}
	}
	return m
}

// topicType is the message type of a topic adaptor's declaration.
func topicType(attrs map[string]string) (*rosmsg.Type, error) {
	dt := attrs["datatype"]
	if dt == "" {
		dt = "std_msgs/String"
	}
	return Types.Message(dt)
}

// checkTopic finds a topic adaptor's type, for seat check.
func checkTopic(attrs map[string]string) []adaptors.Problem {
	if _, err := topicType(attrs); err != nil {
		return []adaptors.Problem{typeProblem("datatype", err)}
	}
	if attrs["master"] != "" {
		if _, err := MasterAddress(attrs); err != nil {
			return []adaptors.Problem{{Attr: "master", Msg: err.Error()}}
		}
	}
	return nil
}

// typeProblem is the problem of a type attribute whose type is not
// found: a warning when its whole package is missing from this machine
// (the file may be right; seat run needs the package), else an error.
func typeProblem(attr string, err error) adaptors.Problem {
	_, missing := rosmsg.MissingPackage(err)
	return adaptors.Problem{Attr: attr, Msg: err.Error(), Warning: missing}
}

// checkMessage fills the type of a ros_pub from a <message> text, as Send
// will, for seat check.
func checkMessage(d adaptors.Decl, text string) error {
	typ, err := topicType(d.Attrs)
	if err != nil || typ.Spec.FullName() == "std_msgs/String" {
		return nil // reported with the declaration; any text is a String
	}
	data, err := adaptors.ParseText(text)
	if err != nil {
		return err
	}
	return rosmsg.Fill(typ.New(), data)
}

// rosName makes a valid ROS graph name of s: letters, digits and _,
// starting with a letter. Other characters become _, and then a hash of s
// is added, so that names that differ only in them (受付, 案内) stay
// apart: 受付係 robot/1 is robot_1_2bb1816a, 受付 seat_f1828b55.
func rosName(s string) string {
	var b strings.Builder
	changed := false
	for _, r := range s {
		if r < 128 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
			changed = true
		}
	}
	n := strings.Trim(b.String(), "_")
	for strings.Contains(n, "__") {
		n = strings.ReplaceAll(n, "__", "_")
	}
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		n = "seat_" + n
	}
	if changed {
		h := fnv.New32a()
		h.Write([]byte(s))
		n = strings.TrimSuffix(n, "_") + fmt.Sprintf("_%08x", h.Sum32())
	}
	return n
}

// topic is a ros_pub or ros_sub adaptor.
type topic struct {
	endpoint // remote is the topic
	pub      bool
	typ      *rosmsg.Type
	data     []int // the index of a std_msgs/String's data field; nil for other types

	ctx    context.Context // ends when the adaptor closes
	cancel context.CancelFunc
	sink   adaptors.Sink

	mu     sync.Mutex
	writer *goroslib.Publisher
	sub    *subscription
}

// NewTopic builds a ros_pub (pub) or ros_sub adaptor: name is the
// adaptor's and, by eSEAT's convention, the topic's; datatype its type.
func NewTopic(cfg adaptors.Config, pub bool) (adaptors.Adaptor, error) {
	e, err := newEndpoint(cfg, "topic") // eSEAT names the adaptor after its topic: name="/chatter"
	if err != nil {
		return nil, err
	}
	typ, err := topicType(cfg.Attrs)
	if err != nil {
		return nil, err
	}
	a := &topic{endpoint: e, pub: pub, typ: typ}
	if typ.Spec.FullName() == "std_msgs/String" {
		f, _ := typ.Go.FieldByName("FData")
		a.data = f.Index
	}
	return a, nil
}

// Open registers the adaptor on its behavior's node. With no master yet,
// it returns at once and the node keeps trying (logged once): a master
// started after seat is found.
func (a *topic) Open(ctx context.Context, sink adaptors.Sink) error {
	// Until Close, not ctx: a reload hands the open adaptor to the next
	// version, and the context it was opened with ends with the old one.
	a.ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	a.sink = sink
	a.node = join(a.nodeName, a.master, a.nodeLog, a)
	return nil
}

// attach makes the adaptor's publisher or subscriber on a node.
func (a *topic) attach(n *goroslib.Node) error {
	if a.pub {
		w, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: n, Topic: a.remote, Msg: a.typ.New()})
		if err != nil {
			return err
		}
		a.mu.Lock()
		a.writer = w
		a.mu.Unlock()
		a.registered("publisher", "topic", a.typ.Spec.FullName())
		return nil
	}
	sub, err := a.subscribe()
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.sub = sub
	a.mu.Unlock()
	a.registered("subscriber", "topic", a.typ.Spec.FullName())
	return nil
}

// detach closes the publisher or subscriber; a send meanwhile is an
// error, not a wait.
func (a *topic) detach() {
	a.mu.Lock()
	w, sub := a.writer, a.sub
	a.writer, a.sub = nil, nil
	a.mu.Unlock()
	if w != nil {
		w.Close()
	}
	if sub != nil {
		sub.close()
	}
}

// publishers hands a subscriber the publishers the master lists now, by
// their slave API URLs (from the node's watch).
func (a *topic) publishers(urls []string) {
	a.mu.Lock()
	sub := a.sub
	a.mu.Unlock()
	if sub != nil {
		sub.update(urls)
	}
}

// reached reports whether the subscriber has reached the publisher at
// the URL.
func (a *topic) reached(u string) bool {
	a.mu.Lock()
	sub := a.sub
	a.mu.Unlock()
	return sub != nil && sub.settled(u)
}

// event is the event of a message received (a pointer to the built
// type): a std_msgs/String's text is a line; any other message is
// structured data, with its JSON as the text.
func (a *topic) event(m reflect.Value) adaptors.Event {
	ev := adaptors.Event{Source: a.name, Time: time.Now(), Topic: a.remote}
	if a.data != nil {
		ev.Text = m.Elem().FieldByIndex(a.data).String()
		return ev
	}
	ev.Data = rosmsg.Value(m.Interface())
	ev.Text = adaptors.JSON(ev.Data)
	return ev
}

// SendMessage publishes a message given as plain values (a list in field
// order or a mapping by name, as seat.publish gives a Lua table).
func (a *topic) SendMessage(v any) error {
	if !a.pub {
		return fmt.Errorf("%s is a ros_sub: it does not publish", a.name)
	}
	m := a.typ.New()
	if a.data != nil {
		if s, ok := v.(string); ok {
			v = []any{s}
		}
	}
	if err := rosmsg.Fill(m, v); err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	return a.write(m)
}

// Send publishes text: a std_msgs/String's data, or for any other type
// the message written as rostopic pub takes it (YAML or JSON, a list in
// field order or a mapping by name). A text that does not fit is an error
// naming the field, and nothing is sent.
func (a *topic) Send(text string) error {
	if !a.pub {
		return fmt.Errorf("%s is a ros_sub: it does not publish", a.name)
	}
	m := a.typ.New()
	if a.data != nil {
		reflect.ValueOf(m).Elem().FieldByIndex(a.data).SetString(text)
	} else {
		data, err := adaptors.ParseText(text)
		if err != nil {
			return err
		}
		if err := rosmsg.Fill(m, data); err != nil {
			return err
		}
	}
	return a.write(m)
}

// write publishes a filled message.
func (a *topic) write(m any) error {
	a.mu.Lock()
	w := a.writer
	a.mu.Unlock()
	if w == nil {
		return fmt.Errorf("%s: not connected to the ROS master at %s yet; not sent", a.name, a.master)
	}
	w.Write(m)
	return nil
}

// Close leaves the node: the node closes with its last adaptor.
func (a *topic) Close() error {
	if a.node == nil {
		return nil
	}
	a.cancel() // a delivery waiting for the behavior gives up
	a.node.leave(a)
	a.node = nil
	return nil
}
