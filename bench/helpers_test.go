package bench

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
)

// load compiles a behavior from its text, failing tb on any error.
func load(tb testing.TB, src string) *seatml.Program {
	tb.Helper()
	prog, diags := seatml.LoadBytes("bench.seatml", []byte(src), seatml.LoadOptions{})
	if prog == nil {
		tb.Fatal(diags)
	}
	return prog
}

// machine is a behavior ready for Dispatch on the caller's goroutine: no
// adaptors are opened.
func machine(tb testing.TB, src string) *interpreter.Hand {
	tb.Helper()
	m, err := interpreter.New(load(tb, src), interpreter.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	h := interpreter.NewHand(m, nil)
	h.Begin()
	return h
}

// serve runs a behavior with its adaptors open and returns once its
// initial state is entered; stop ends it and reports Run's error to tb.
func serve(tb testing.TB, prog *seatml.Program) (m *interpreter.Machine, stop func()) {
	tb.Helper()
	return serveWith(tb, prog, interpreter.Options{})
}

// serveWith is serve with options (their log is always discarded).
func serveWith(tb testing.TB, prog *seatml.Program, opts interpreter.Options) (m *interpreter.Machine, stop func()) {
	tb.Helper()
	opts.Log = zap.NewNop()
	m, err := interpreter.New(prog, opts)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case <-m.Ready():
	case err := <-done:
		cancel()
		tb.Fatalf("Run ended before the behavior was ready: %v", err)
	}
	return m, func() {
		cancel()
		if err := <-done; err != nil {
			tb.Error(err)
		}
	}
}
