package hal

import (
	"testing"
	"time"
)

const ms = time.Millisecond

func newEngine(t *testing.T, tree *Tree) *Engine {
	t.Helper()
	e, err := NewEngine(tree, NewSim(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// steps runs cycles every period from the engine's time up to and including until.
func steps(t *testing.T, e *Engine, until time.Duration) {
	t.Helper()
	now := e.Now()
	if !e.started {
		now = -e.Period()
	}
	for now+e.Period() <= until {
		now += e.Period()
		if err := e.Step(now); err != nil {
			t.Fatal(err)
		}
	}
}

func value(t *testing.T, e *Engine, path string) float64 {
	t.Helper()
	s, ok := e.Tree().Resolve(path)
	if !ok {
		t.Fatalf("no subdevice %s", path)
	}
	return e.Value(s)
}
