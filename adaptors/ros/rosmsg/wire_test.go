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
			pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: node, Topic: "wire", Msg: typ.New()})
			if err != nil {
				t.Fatal(err)
			}
			defer pub.Close()
			m := typ.New()
			c.fill(reflect.ValueOf(m).Elem())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			echo := exec.CommandContext(ctx, "rostopic", "echo", "-n", "1", "/wire")
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
			for waiting := true; waiting; {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("rostopic echo: %v\n%s", err, out.String())
					}
					waiting = false
				case <-tick.C:
					pub.Write(m)
				}
			}
			got := out.String()
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("rostopic echo printed:\n%s\nwithout %q", got, w)
				}
			}
		})
	}
}
