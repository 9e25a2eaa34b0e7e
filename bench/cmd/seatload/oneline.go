package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuTime is the CPU time a process has used, from its threads'
// schedstat (nanoseconds, where /proc/PID/stat counts 10 ms ticks).
func cpuTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no schedstat for process %d", pid)
	}
	var total time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended
		}
		f := strings.Fields(string(data))
		if len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(n)
		}
	}
	return total, nil
}

// lineConn is one side of a one-line-at-a-time exchange.
type lineConn struct {
	c    net.Conn
	r    *bufio.Reader
	want string
}

// exchange sends n pings one at a time and waits for each answer; it
// returns the throughput and the CPU per event of the process pid.
func (l *lineConn) exchange(n, pid int) (perS float64, cpu time.Duration, err error) {
	one := func() error {
		if _, err := l.c.Write([]byte("ping\n")); err != nil {
			return err
		}
		line, err := l.r.ReadString('\n')
		if err == nil && line != l.want+"\n" {
			err = fmt.Errorf("answered %q, want %q", line, l.want)
		}
		return err
	}
	for range min(n/10, 2000) {
		if err := one(); err != nil {
			return 0, 0, err
		}
	}
	c0, err := cpuTime(pid)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	for range n {
		if err := one(); err != nil {
			return 0, 0, err
		}
	}
	elapsed := time.Since(start)
	c1, err := cpuTime(pid)
	if err != nil {
		return 0, 0, err
	}
	return float64(n) / elapsed.Seconds(), (c1 - c0) / time.Duration(n), nil
}

// dialEcho is the floor of seat as a client: a bare Go line client that
// connects and sends every line straight back.
func dialEcho(addr string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		panic(err)
	}
	echoLines(c)
}

// compare runs the rounds of one side: the floor's connection, then
// seat's, each time, with the CPU of the process behind each.
func compare(floor, seat *lineConn, floorPid, seatPid int) (Oneline, error) {
	var o Oneline
	for range *rounds {
		fr, fc, err := floor.exchange(*onelineN, floorPid)
		if err != nil {
			return o, fmt.Errorf("floor: %w", err)
		}
		sr, sc, err := seat.exchange(*onelineN, seatPid)
		if err != nil {
			return o, fmt.Errorf("seat: %w", err)
		}
		o.FloorPerS, o.SeatPerS = append(o.FloorPerS, fr), append(o.SeatPerS, sr)
		o.FloorCPUus, o.SeatCPUus = append(o.FloorCPUus, us(fc)), append(o.SeatCPUus, us(sc))
	}
	return o, nil
}

// accept waits for one connection on ln.
func accept(ln net.Listener) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := ln.Accept(); ch <- res{c, err} }()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-time.After(20 * time.Second):
		ln.Close()
		return nil, fmt.Errorf("nothing connected to %s", ln.Addr())
	}
}

// oneline measures one client sending one line at a time, seat as the
// server and as the client, beside a bare Go line server and client: the
// CPU the serving process spends per event and the throughput, as the
// median of the rounds. Seat runs plainly: no control API, no devices.
// Its idle CPU is measured first.
func oneline(bin string, echo *echoProc) error {
	// Seat as the server.
	srv, err := startSeat(bin, "oneline.seatml", "plain", "", "--device-loop", "auto")
	if err != nil {
		return err
	}
	defer srv.stop()
	idle := 0.0
	if *idleFor > 0 {
		c0, err := cpuTime(srv.cmd.Process.Pid)
		if err != nil {
			return err
		}
		time.Sleep(*idleFor)
		c1, _ := cpuTime(srv.cmd.Process.Pid)
		idle = 100 * float64(c1-c0) / float64(*idleFor)
	}
	dial := func(addr, want string) (*lineConn, error) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		return &lineConn{c: c, r: bufio.NewReader(c), want: want}, nil
	}
	fl, err := dial(echo.tcp, "ping")
	if err != nil {
		return err
	}
	defer fl.c.Close()
	sl, err := dial("127.0.0.1:"+srv.ports[0], "pong")
	if err != nil {
		return err
	}
	defer sl.c.Close()
	server, err := compare(fl, sl, echo.cmd.Process.Pid, srv.cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("as the server: %w", err)
	}
	server.IdlePercent = idle
	results.Oneline["server"] = server

	// Seat as the client: seatload listens, seat and the floor connect.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	self, err := os.Executable()
	if err != nil {
		return err
	}
	floorCmd := exec.Command(self, "-dial-echo", ln.Addr().String())
	floorCmd.Stderr = os.Stderr
	if err := floorCmd.Start(); err != nil {
		return err
	}
	defer func() { floorCmd.Process.Kill(); floorCmd.Wait() }()
	fc, err := accept(ln)
	if err != nil {
		return err
	}
	defer fc.Close()
	cli, err := startSeat(bin, "oneline-client.seatml", "client", "", "--device-loop", "auto", "--set", "bus.port="+port)
	if err != nil {
		return err
	}
	defer cli.stop()
	sc, err := accept(ln)
	if err != nil {
		return err
	}
	defer sc.Close()
	client, err := compare(&lineConn{c: fc, r: bufio.NewReader(fc), want: "ping"}, &lineConn{c: sc, r: bufio.NewReader(sc), want: "pong"},
		floorCmd.Process.Pid, cli.cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("as the client: %w", err)
	}
	results.Oneline["client"] = client

	fmt.Printf("one line at a time, %d requests per round, seat plain (no --control, no devices)\n", *onelineN)
	fmt.Printf("  seat idle: %.2f %% of a core over %v\n", idle, *idleFor)
	for _, side := range []string{"server", "client"} {
		o := results.Oneline[side]
		fcpu, scpu, fr, sr := median(o.FloorCPUus), median(o.SeatCPUus), median(o.FloorPerS), median(o.SeatPerS)
		fmt.Printf("  seat as the %s: CPU per event %.1f µs (floor %.1f µs) = %.2f; throughput %.0f/s (floor %.0f/s) = %.2f\n",
			side, scpu, fcpu, scpu/fcpu, sr, fr, sr/fr)
	}
	fmt.Println()
	return nil
}
