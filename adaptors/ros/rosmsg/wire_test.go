package rosmsg

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/google/go-cmp/cmp"
)

// rosMaster starts Debian's rosmaster on a free loopback port with its own
// ROS_HOME, and returns its address and the environment ROS tools need.
func rosMaster(t *testing.T) (addr string, env []string) {
	t.Helper()
	if _, err := exec.LookPath("rosmaster"); err != nil {
		requireTools(t, "rosmaster is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	env = append(os.Environ(), "ROS_MASTER_URI=http://"+addr, "ROS_IP=127.0.0.1", "ROS_HOME="+t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "rosmaster", "--core", "-p", fmt.Sprint(port))
	cmd.Env = env
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr, env
		}
		if time.Now().After(deadline) {
			t.Fatalf("rosmaster did not listen on %s within 20 s: %s", addr, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBuiltTypesOnTheWire: a type built at run time from Debian's
// definitions is published by a goroslib node through a real rosmaster
// and read by rostopic echo (which checks its MD5 sum), Japanese text and
// nested fields included.
func TestBuiltTypesOnTheWire(t *testing.T) {
	addr, env := rosMaster(t)
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
			got := publishUntilEchoed(t, node, env, "wire", typ, m)
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
func publishUntilEchoed(t *testing.T, node *goroslib.Node, env []string, topic string, typ *Type, m any) string {
	t.Helper()
	pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: node, Topic: topic, Msg: typ.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	echo := exec.CommandContext(ctx, "rostopic", "echo", "-n", "1", "/"+topic)
	echo.Env = env
	var out bytes.Buffer
	echo.Stdout, echo.Stderr = &out, &out
	if err := echo.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- echo.Wait() }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("rostopic echo: %v\n%s", err, out.String())
			}
			return out.String()
		case <-tick.C:
			pub.Write(m)
		}
	}
}

// TestReadAndFillOnTheWire: rostopic pub sends a sensor_msgs/Joy that a
// goroslib subscriber of the built type reads, and Value gives its axes
// and buttons; a Twist filled from eSEAT's list text reaches rostopic
// echo.
func TestReadAndFillOnTheWire(t *testing.T) {
	addr, env := rosMaster(t)
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
		got <- Value(args[0].Interface())
		return nil
	})
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{Node: node, Topic: "joy", Callback: cb.Interface()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pub := exec.CommandContext(ctx, "rostopic", "pub", "-r", "5", "/joy", "sensor_msgs/Joy", "{axes: [0.5, -1.0], buttons: [1, 0, 1]}")
	pub.Env = env
	var out bytes.Buffer
	pub.Stdout, pub.Stderr = &out, &out
	if err := pub.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pub.Process.Kill(); _ = pub.Wait() }()
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
		t.Fatalf("no Joy arrived within 30 s; rostopic pub said:\n%s", out.String())
	}

	twist, err := r.Message("geometry_msgs/Twist")
	if err != nil {
		t.Fatal(err)
	}
	data, err := ParseText("[[2.0,0,0],[0,0,1.8]]")
	if err != nil {
		t.Fatal(err)
	}
	m := twist.New()
	if err := Fill(m, data); err != nil {
		t.Fatal(err)
	}
	echoed := publishUntilEchoed(t, node, env, "cmd_vel", twist, m)
	if want := "linear: \n  x: 2.0\n  y: 0.0\n  z: 0.0\nangular: \n  x: 0.0\n  y: 0.0\n  z: 1.8"; !strings.Contains(echoed, want) {
		t.Errorf("rostopic echo printed:\n%s\nwithout\n%s", echoed, want)
	}
}
