package rosmsg

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/ros/rostest"
)

// TestBuiltTypesOnTheWire: a type built at run time from Debian's
// definitions is published by a goroslib node through a real rosmaster
// and read by rostopic echo (which checks its MD5 sum), Japanese text and
// nested fields included.
func TestBuiltTypesOnTheWire(t *testing.T) {
	master := rostest.Start(t)
	addr := master.Addr
	r := NewRegistry([]string{"/usr/share"})
	for _, c := range []struct {
		typ  string
		fill func(v reflect.Value)
		want []string
	}{
		{"std_msgs/String", func(v reflect.Value) { v.FieldByName("FData").SetString("こんにちは、ロボット") },
			// rostopic prints non-ASCII text escaped.
			[]string{`data: "\u3053\u3093\u306B\u3061\u306F\u3001\u30ED\u30DC\u30C3\u30C8"`}},
		{"geometry_msgs/Twist", func(v reflect.Value) {
			v.FieldByName("FLinear").FieldByName("FX").SetFloat(2)
			v.FieldByName("FAngular").FieldByName("FZ").SetFloat(1.8)
		}, []string{"linear: \n  x: 2.0\n  y: 0.0\n  z: 0.0\nangular: \n  x: 0.0\n  y: 0.0\n  z: 1.8"}},
	} {
		t.Run(strings.ReplaceAll(c.typ, "/", "_"), func(t *testing.T) {
			typ, err := r.Message(c.typ)
			if err != nil {
				t.Fatal(err)
			}
			node, err := goroslib.NewNode(goroslib.NodeConf{Name: "seat_wire_test", MasterAddress: addr, Host: "127.0.0.1"})
			if err != nil {
				t.Fatal(err)
			}
			defer node.Close()
			m := typ.New()
			c.fill(reflect.ValueOf(m).Elem())
			got := publishUntilEchoed(t, node, master, "wire", typ, m)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("rostopic echo printed:\n%s\nwithout %q", got, w)
				}
			}
		})
	}
}

// publishUntilEchoed publishes m on topic until rostopic echo -n 1 has
// printed one message, and returns what it printed.
func publishUntilEchoed(t *testing.T, node *goroslib.Node, m *rostest.Master, topic string, typ *Type, msg any) string {
	t.Helper()
	pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: node, Topic: topic, Msg: typ.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	return m.EchoOne(t, topic, func() { pub.Write(msg) })
}

// TestReadAndFillOnTheWire: rostopic pub sends a sensor_msgs/Joy that a
// goroslib subscriber of the built type reads, and Value gives its axes
// and buttons; a Twist filled from eSEAT's list text reaches rostopic
// echo.
func TestReadAndFillOnTheWire(t *testing.T) {
	master := rostest.Start(t)
	addr := master.Addr
	r := NewRegistry([]string{"/usr/share"})
	joy, err := r.Message("sensor_msgs/Joy")
	if err != nil {
		t.Fatal(err)
	}
	node, err := goroslib.NewNode(goroslib.NodeConf{Name: "seat_read_test", MasterAddress: addr, Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	got := make(chan map[string]any, 10)
	cb := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{reflect.PointerTo(joy.Go)}, nil, false), func(args []reflect.Value) []reflect.Value {
		select { // rostopic pub may send more than the test reads: never block goroslib's dispatcher (its Close waits for it)
		case got <- Value(args[0].Interface()):
		default:
		}
		return nil
	})
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{Node: node, Topic: "joy", Callback: cb.Interface()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop := master.Publish(t, "joy", "sensor_msgs/Joy", "{axes: [0.5, -1.0], buttons: [1, 0, 1]}")
	select {
	case m := <-got:
		if diff := cmp.Diff([]any{0.5, -1.0}, m["axes"]); diff != "" {
			t.Errorf("axes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]any{int64(1), int64(0), int64(1)}, m["buttons"]); diff != "" {
			t.Errorf("buttons (-want +got):\n%s", diff)
		}
		if h, ok := m["header"].(map[string]any); !ok || h["frame_id"] != "" {
			t.Errorf("header %v", m["header"])
		}
	case <-ctx.Done():
		t.Fatalf("no Joy arrived within 30 s; rostopic pub said:\n%s", stop())
	}

	twist, err := r.Message("geometry_msgs/Twist")
	if err != nil {
		t.Fatal(err)
	}
	data, err := adaptors.ParseText("[[2.0,0,0],[0,0,1.8]]")
	if err != nil {
		t.Fatal(err)
	}
	m := twist.New()
	if err := Fill(m, data); err != nil {
		t.Fatal(err)
	}
	echoed := publishUntilEchoed(t, node, master, "cmd_vel", twist, m)
	if want := "linear: \n  x: 2.0\n  y: 0.0\n  z: 0.0\nangular: \n  x: 0.0\n  y: 0.0\n  z: 1.8"; !strings.Contains(echoed, want) {
		t.Errorf("rostopic echo printed:\n%s\nwithout\n%s", echoed, want)
	}
}
