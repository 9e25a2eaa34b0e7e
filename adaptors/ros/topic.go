// Package ros connects a behavior to ROS 1 through a master: eSEAT's
// ros_pub and ros_sub adaptors (topics), with message types read at run
// time (package rosmsg) and the wire protocol of goroslib.
//
// The service and action adaptors (ros_server, ros_client,
// ros_action_server, ros_action_client) are not built yet (docs/ros.md).
package ros

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/ros/rosmsg"
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

func init() {
	adaptors.Register("ros_pub", func(cfg adaptors.Config) (adaptors.Adaptor, error) { return NewTopic(cfg, true) })
	adaptors.Register("ros_sub", func(cfg adaptors.Config) (adaptors.Adaptor, error) { return NewTopic(cfg, false) })
}

// rosName makes a valid ROS graph name of s: letters, digits and _,
// starting with a letter (other characters, Japanese ones too, become _).
func rosName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	n := strings.Trim(b.String(), "_")
	for strings.Contains(n, "__") {
		n = strings.ReplaceAll(n, "__", "_")
	}
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		n = "seat_" + n
	}
	return n
}

// topic is a ros_pub or ros_sub adaptor.
type topic struct {
	name, topic string
	pub         bool
	typ         *rosmsg.Type
	data        []int // the index of a std_msgs/String's data field; nil for other types
	master      string
	nodeName    string
	log         *zap.Logger

	mu     sync.Mutex
	node   *goroslib.Node
	writer *goroslib.Publisher
	reader *goroslib.Subscriber
	cancel context.CancelFunc
	done   chan struct{}
}

// NewTopic builds a ros_pub (pub) or ros_sub adaptor: name is the
// adaptor's and, by eSEAT's convention, the topic's; datatype its type.
func NewTopic(cfg adaptors.Config, pub bool) (adaptors.Adaptor, error) {
	master, err := MasterAddress(cfg.Attrs)
	if err != nil {
		return nil, err
	}
	dt := cfg.Attrs["datatype"]
	if dt == "" {
		dt = "std_msgs/String"
	}
	typ, err := Types.Message(dt)
	if err != nil {
		return nil, err
	}
	if !pub && typ.Spec.FullName() != "std_msgs/String" {
		// Other types reach scripts as event.data: not built yet.
		return nil, fmt.Errorf("ros_sub %s: only std_msgs/String is read so far, not %s (docs/ros.md)", cfg.Name, dt)
	}
	// One node per adaptor for now, named after the behavior and the
	// adaptor (a master shuts down a node whose name is registered again).
	node := rosName(cfg.Behavior + "_" + cfg.Name)
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	name := cfg.Attrs["topic"]
	if name == "" {
		name = cfg.Name // eSEAT names the adaptor after its topic: name="/chatter"
	}
	a := &topic{name: cfg.Name, topic: name, pub: pub, typ: typ, master: master, nodeName: node, log: log}
	if typ.Spec.FullName() == "std_msgs/String" {
		f, _ := typ.Go.FieldByName("FData")
		a.data = f.Index
	}
	return a, nil
}

func (a *topic) Name() string { return a.name }

// Open connects to the master, or keeps trying with back-off while the
// behavior runs (logged once): a master started after seat is found.
func (a *topic) Open(ctx context.Context, sink adaptors.Sink) error {
	ctx, cancel := context.WithCancel(ctx)
	a.cancel, a.done = cancel, make(chan struct{})
	err := a.connect(ctx, sink)
	if err == nil {
		close(a.done)
		return nil
	}
	a.log.Warn("ROS master not reachable; retrying in the background", zap.String("master", a.master), zap.Error(err))
	go func() {
		defer close(a.done)
		wait := 100 * time.Millisecond
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if err := a.connect(ctx, sink); err == nil {
				a.log.Info("connected to the ROS master", zap.String("master", a.master))
				return
			}
			wait = min(2*wait, 5*time.Second)
		}
	}()
	return nil
}

func (a *topic) connect(ctx context.Context, sink adaptors.Sink) error {
	node, err := goroslib.NewNode(goroslib.NodeConf{Name: a.nodeName, MasterAddress: a.master, Host: "127.0.0.1",
		// goroslib's own messages go to seat's log, not to the console.
		LogDestinations: goroslib.LogDestinationCallback,
		OnLog: func(level goroslib.LogLevel, msg string) {
			if level >= goroslib.LogLevelWarn {
				a.log.Warn("ROS: "+msg, zap.String("node", a.nodeName))
			} else {
				a.log.Debug("ROS: "+msg, zap.String("node", a.nodeName))
			}
		}})
	if err != nil {
		return err
	}
	if a.pub {
		w, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: node, Topic: a.topic, Msg: a.typ.New()})
		if err != nil {
			node.Close()
			return err
		}
		a.mu.Lock()
		a.node, a.writer = node, w
		a.mu.Unlock()
		return nil
	}
	cb := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{reflect.PointerTo(a.typ.Go)}, nil, false), func(args []reflect.Value) []reflect.Value {
		text := args[0].Elem().FieldByIndex(a.data).String() // a std_msgs/String
		_ = sink.Deliver(ctx, adaptors.Event{Source: a.name, Text: text, Time: time.Now(), Topic: a.topic})
		return nil
	})
	r, err := goroslib.NewSubscriber(goroslib.SubscriberConf{Node: node, Topic: a.topic, Callback: cb.Interface()})
	if err != nil {
		node.Close()
		return err
	}
	a.mu.Lock()
	a.node, a.reader = node, r
	a.mu.Unlock()
	return nil
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
		data, err := rosmsg.ParseText(text)
		if err != nil {
			return err
		}
		if err := rosmsg.Fill(m, data); err != nil {
			return err
		}
	}
	a.mu.Lock()
	w := a.writer
	a.mu.Unlock()
	if w == nil {
		return fmt.Errorf("%s: not connected to the ROS master at %s yet; not sent", a.name, a.master)
	}
	w.Write(m)
	return nil
}

// Close stops retrying and leaves the master.
func (a *topic) Close() error {
	if a.cancel != nil {
		a.cancel()
		<-a.done
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.writer != nil {
		a.writer.Close()
	}
	if a.reader != nil {
		a.reader.Close()
	}
	if a.node != nil {
		a.node.Close()
	}
	a.node, a.writer, a.reader = nil, nil, nil
	return nil
}
