// Package stdio is the "stdio" adaptor: standard input lines are events,
// each message is a line on standard output (SEATML §10.2).
package stdio

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
)

func init() {
	adaptors.RegisterKind(adaptors.Kind{Name: "stdio", New: New, Max: 1, Caps: adaptors.Stdin})
}

// Adaptor reads standard input and writes standard output.
type Adaptor struct {
	name string
	log  *zap.Logger
	in   io.Reader
	out  *bufio.Writer
	outW io.Writer

	stats  adaptors.Counters
	warned bool // a repaired line was logged (reader goroutine)
	lr     *adaptors.LineReader
	baton  *adaptors.Baton // the reading of standard input
	queue  *adaptors.Outbox
	stop   chan struct{}
	once   sync.Once
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New builds a stdio adaptor.
func New(cfg adaptors.Config) (adaptors.Adaptor, error) {
	a := &Adaptor{name: cfg.Name, log: cfg.Log, in: cfg.Stdin, outW: cfg.Stdout}
	if a.log == nil {
		a.log = zap.NewNop()
	}
	if a.in == nil {
		a.in = os.Stdin
	}
	if a.outW == nil {
		a.outW = os.Stdout
	}
	a.out = bufio.NewWriter(a.outW)
	a.queue = adaptors.NewOutbox(cfg.Tuning)
	a.stop = make(chan struct{})
	return a, nil
}

// Name returns the adaptor's name.
func (a *Adaptor) Name() string { return a.name }

// Stats counts the lines skipped as too long and repaired.
func (a *Adaptor) Stats() adaptors.Stats { return a.stats.Snapshot() }

// String names the peer for logs.
func (a *Adaptor) String() string { return a.name + " stdio" }

// Peer names standard input and output.
func (a *Adaptor) Peer() string { return "stdio" }

// Open starts reading standard input and writing standard output.
func (a *Adaptor) Open(ctx context.Context, sink adaptors.Sink) error {
	ctx, a.cancel = context.WithCancel(ctx)
	a.wg.Add(1)
	go a.write()
	go a.read(ctx, sink) // not waited for: a read from a terminal cannot be interrupted
	return nil
}

func (a *Adaptor) read(ctx context.Context, sink adaptors.Sink) {
	a.lr = adaptors.NewLineReader(a.in, adaptors.DefaultMaxLine)
	a.baton = adaptors.ReadOn(nil, func() { a.readLines(ctx, sink) }) // not waited for, as the first
	a.readLines(ctx, sink)
}

// Baton is standard input's reading (adaptors.BatonHolder).
func (a *Adaptor) Baton() *adaptors.Baton { return a.baton }

// readLines reads and delivers standard input's lines to its end; or
// returns early when the reading was passed to another goroutine while
// this one ran the behavior.
func (a *Adaptor) readLines(ctx context.Context, sink adaptors.Sink) {
	leg := a.baton.Take()
	lr := a.lr
	for {
		line, err := lr.Next()
		if lr.Repaired() {
			a.stats.NoteRepair(a.log, "standard input", &a.warned)
		}
		if err == nil || errors.Is(err, adaptors.ErrPartialLine) {
			leg.Deliver()
			derr := sink.Deliver(ctx, adaptors.Event{Source: a.name, Text: line, From: a})
			if !leg.Delivered() {
				return // the reading went on on another goroutine
			}
			if derr != nil {
				return
			}
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, adaptors.ErrLineTooLong):
			a.log.Error("standard input line too long; skipped", zap.Error(err))
			a.stats.LineTooLong.Add(1)
			continue
		}
		if ctx.Err() == nil {
			sink.EndOfInput(a.name)
		}
		return
	}
}

func (a *Adaptor) write() {
	defer a.wg.Done()
	var batch []string
	flush := func() {
		batch = a.queue.Take(batch)
		for _, text := range batch {
			adaptors.WriteLine(a.out, text)
		}
		clear(batch)
		if err := a.out.Flush(); err != nil {
			a.log.Warn("standard output", zap.Error(err))
		}
	}
	for {
		select {
		case <-a.queue.Wait():
			flush()
		case <-a.stop:
			a.queue.Close()
			flush()
			return
		}
	}
}

// Send queues a line for standard output; it fails when the reader of
// standard output has let the queue fill.
func (a *Adaptor) Send(text string) error {
	if !a.queue.Put(text) {
		return adaptors.ErrQueueFull
	}
	return nil
}

// Close flushes standard output and stops.
func (a *Adaptor) Close() error {
	a.once.Do(func() {
		if a.cancel != nil {
			a.cancel()
		}
		close(a.stop)
	})
	a.wg.Wait()
	return nil
}

// Keep serves the next version of the behavior after a reload
// (adaptors.Keeper): standard input has one reader, whichever the version.
func (a *Adaptor) Keep(adaptors.Config) {}
