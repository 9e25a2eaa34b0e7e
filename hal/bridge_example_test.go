package hal_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/seatml/seat/hal"
)

// Bridge is a Backend for a real robot whose board process speaks a line
// protocol over a stream (a serial port, a socket):
//
//	engine -> robot  "W <ms> <raw0> <raw1> ..."  one raw value per subdevice
//	robot -> engine  "S <st0> <st1> ... ; <raw0> <raw1> ..."  statuses per device, then raws
//
// It is the skeleton docs/devices.md walks through.
type Bridge struct {
	conn io.ReadWriter
	r    *bufio.Reader
	tree *hal.Tree
}

func (b *Bridge) Open(ctx context.Context, t *hal.Tree) error {
	b.tree, b.r = t, bufio.NewReader(b.conn)
	return nil
}

func (b *Bridge) Read(ctx context.Context, now time.Duration, f *hal.SensorFrame) error {
	line, err := b.r.ReadString('\n') // a real bridge also honours ctx's deadline
	if err != nil {
		return err
	}
	status, raws, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "S "), " ; ")
	for i, s := range strings.Fields(status) {
		n, _ := strconv.Atoi(s)
		f.Status[i] = hal.Status(n)
	}
	for i, s := range strings.Fields(raws) {
		n, _ := strconv.Atoi(s)
		f.Raw[i] = int32(n)
	}
	return nil
}

func (b *Bridge) Write(ctx context.Context, now time.Duration, f *hal.ActuatorFrame) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "W %d", now.Milliseconds())
	for _, r := range f.Raw {
		sb.WriteString(" " + strconv.Itoa(int(r)))
	}
	sb.WriteString("\n")
	_, err := io.WriteString(b.conn, sb.String())
	for i := range f.Status {
		f.Status[i] = hal.Answered // a real board acknowledges its frame
	}
	return err
}

func (b *Bridge) Close() error { return nil }

// robot plays the board side of the protocol with a simulator.
func robot(conn net.Conn, t *hal.Tree) {
	sim := hal.NewSim()
	sim.Open(context.Background(), t)
	sf := hal.SensorFrame{Raw: make([]int32, len(t.Subs)), Status: make([]hal.Status, len(t.Devices))}
	af := hal.ActuatorFrame{Raw: make([]int32, len(t.Subs)), Status: make([]hal.Status, len(t.Devices))}
	r := bufio.NewReader(conn)
	for {
		sim.Read(context.Background(), 0, &sf)
		var sb strings.Builder
		sb.WriteString("S")
		for _, s := range sf.Status {
			sb.WriteString(" " + strconv.Itoa(int(s)))
		}
		sb.WriteString(" ;")
		for _, v := range sf.Raw {
			sb.WriteString(" " + strconv.Itoa(int(v)))
		}
		if _, err := io.WriteString(conn, sb.String()+"\n"); err != nil {
			return
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		fields := strings.Fields(line)
		ms, _ := strconv.Atoi(fields[1])
		for i, s := range fields[2:] {
			n, _ := strconv.Atoi(s)
			af.Raw[i] = int32(n)
		}
		sim.Write(context.Background(), time.Duration(ms)*time.Millisecond, &af)
	}
}

// Example_bridge runs the engine over a Bridge whose other end is a
// simulated robot, and moves the head.
func Example_bridge() {
	tree := hal.NAOTree()
	engineSide, robotSide := net.Pipe()
	defer engineSide.Close()
	go robot(robotSide, tree)
	e, err := hal.NewEngine(tree, &Bridge{conn: engineSide}, hal.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	e.Set("HeadYaw/Hardness/Actuator", []hal.Command{{Value: 1, At: 0}}, hal.ClearAll)
	e.Set("HeadYaw/Position/Actuator", []hal.Command{{Value: 0.5, At: 200 * time.Millisecond}}, hal.ClearAll)
	for now := time.Duration(0); now <= 400*time.Millisecond; now += 10 * time.Millisecond {
		e.Step(now)
	}
	s, _ := tree.Resolve("HeadYaw/Position/Sensor")
	fmt.Printf("HeadYaw sensor %.2f\n", e.Value(s))
	// Output: HeadYaw sensor 0.50
}
