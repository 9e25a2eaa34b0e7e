package interpreter

// A reload that keeps state (docs/lifecycle.md, "Reload that keeps
// state"): the old version of a SEATML behavior, instead of exiting its
// states when it stops, leaves what it was doing in a carry; the new
// version starts from it instead of from its initial state.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/statechart"
)

// carry is what a reload takes from the old version to the new one. The
// manager asks for it (Replacement.KeepState); the old version fills it
// as it stops, on its own goroutine; the new version reads it as it
// starts. States, history and timers are named, not pointed to: the new
// version's are another program's.
type carry struct {
	taken bool
	// leaves are the active leaves, each with the states around it,
	// innermost first (a flat behavior: its current state).
	leaves [][]string
	// history is what each history state recorded, by the chart's ids.
	history map[string][]string
	// stack is the push stack, bottom first: each frame's leaves.
	stack [][]string
	// general is what was left of the behavior's deadline (general's, or
	// a flat behavior's state's), ok when armed; visit is seat.timeout's
	// for this visit; states, a nested state's own countdown left, by
	// name; tick, the time to the next onexec tick.
	general   time.Duration
	generalOK bool
	visit     *time.Duration
	states    map[string]time.Duration
	tick      time.Duration
	// since is how long ago each state with an onexec was entered (its
	// onexec waits a period from there), by name; flat, the state's.
	since map[string]time.Duration
	// globals are the Lua globals the behavior made that are plain data
	// (nil, booleans, numbers, strings, and tables of them), and self,
	// eSEAT's table; unplain, why the others are not (a function): it is
	// reported unless the new version makes the global too (its own
	// function of that name).
	globals map[string]any
	unplain map[string]string
	// report says, once, what could not be carried over and what was
	// done instead; the reload's answer gives it.
	report []string
	// left are the events a session had queued when it stopped: its new
	// version handles them first.
	left []item
	// sessions are a host's sessions, each with its own carry: the new
	// host makes them again for the same peers (sessions.go, adopt).
	sessions []heldSession
}

// heldSession is a session of the old version of a host, kept for the
// new one: its peer's connection and what its machine left.
type heldSession struct {
	from  adaptors.Conn
	peer  string
	since time.Time
	c     *carry
}

// plainTable is a Lua table of plain data, its keys and values in pairs.
type plainTable struct{ keys, vals []any }

// takeCarry fills c from b as it stops: the states it is in, its stack,
// timers and plain globals. Its onexit lists do not run: the behavior
// goes on in the new version.
func takeCarry(b *seatmlBehavior, c *carry) {
	now := b.clock.Now()
	c.taken = true
	leaves := []*seatml.State{b.cur}
	if b.prog.Nested {
		leaves = b.appendLeaves(nil)
	}
	for _, s := range leaves {
		var path []string
		for p := s; p != nil; p = p.Parent {
			path = append(path, p.Name)
		}
		c.leaves = append(c.leaves, path)
	}
	if b.prog.Nested {
		c.history = map[string][]string{}
		for h, states := range b.sc.History() {
			for _, s := range states {
				c.history[h.ID] = append(c.history[h.ID], s.ID)
			}
		}
	}
	for _, f := range b.stack {
		names := []string{f.leaf.Name}
		if len(f.leaves) > 1 {
			names = names[:0]
			for _, s := range f.leaves {
				names = append(names, s.Name)
			}
		}
		c.stack = append(c.stack, names)
	}
	if b.general.armed() {
		c.general, c.generalOK = b.general.at.Sub(now), true
	}
	c.visit = b.visitTimeout
	c.states = map[string]time.Duration{}
	for _, st := range b.counting {
		if st.t.armed() {
			c.states[st.s.Name] = st.t.at.Sub(now)
		}
	}
	if b.tick.armed() {
		c.tick = b.tick.at.Sub(now)
	}
	c.since = map[string]time.Duration{}
	if !b.prog.Nested {
		c.since[b.cur.Name] = now.Sub(b.enteredAt)
	} else {
		for _, n := range b.sc.Configuration() {
			if s := n.Ext.(*seatml.State); len(s.OnExec) > 0 {
				c.since[s.Name] = now.Sub(b.since[n.Index()])
			}
		}
	}
	c.globals, c.unplain = map[string]any{}, map[string]string{}
	names := make([]string, 0, len(b.globalSets)+1)
	for name := range b.globalSets {
		names = append(names, name)
	}
	if b.selfMade {
		names = append(names, "self")
	}
	sort.Strings(names)
	for _, name := range names {
		v := b.L.G.Global.RawGetString(name)
		if v == lua.LNil {
			continue
		}
		p, why := plainOf(v, map[*lua.LTable]bool{})
		if why != "" {
			c.unplain[name] = why
			continue
		}
		c.globals[name] = p
	}
}

// plainOf is v as plain data, or why it is not (a function, a userdata,
// a table that holds one or itself).
func plainOf(v lua.LValue, seen map[*lua.LTable]bool) (any, string) {
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, ""
	case lua.LBool:
		return bool(x), ""
	case lua.LNumber:
		return float64(x), ""
	case lua.LString:
		return string(x), ""
	case *lua.LTable:
		if seen[x] {
			return nil, "is a table that holds itself"
		}
		seen[x] = true
		defer delete(seen, x)
		t := &plainTable{}
		why := ""
		x.ForEach(func(k, v lua.LValue) {
			if why != "" {
				return
			}
			pk, w := plainOf(k, seen)
			if w == "" {
				var pv any
				pv, w = plainOf(v, seen)
				t.keys, t.vals = append(t.keys, pk), append(t.vals, pv)
			}
			if w != "" {
				why = "holds " + strings.TrimPrefix(strings.TrimPrefix(w, "is "), "holds ")
				if w == "is a table that holds itself" {
					why = "holds itself"
				}
			}
		})
		return t, why
	case *lua.LFunction:
		return nil, "is a function"
	}
	return nil, "is a " + v.Type().String()
}

// luaOf makes plain data a Lua value again.
func luaOf(L *lua.LState, p any) lua.LValue {
	switch x := p.(type) {
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case *plainTable:
		t := L.NewTable()
		for i, k := range x.keys {
			t.RawSet(luaOf(L, k), luaOf(L, x.vals[i]))
		}
		return t
	}
	return lua.LNil
}

// beginFrom starts b from what the old version left in c: its globals
// set, then the states it was in entered without their onentry lists
// (states it was not in, entered because the new file has them, run
// theirs), its stack and timers restored. What does not fit is reported.
func beginFrom(b *seatmlBehavior, c *carry) {
	var gone []string
	for name, why := range c.unplain {
		if b.L.G.Global.RawGetString(name) == lua.LNil {
			gone = append(gone, fmt.Sprintf("global %s %s, and the new version does not make it: not carried over", name, why))
		}
	}
	sort.Strings(gone)
	c.report = append(c.report, gone...)
	for name, p := range c.globals {
		b.L.G.Global.RawSetString(name, luaOf(b.L, p))
		if name == "self" {
			b.selfMade = true
			continue
		}
		// Made by the behavior, as if this version had set it: a later
		// reload carries it again (set raw, it would not be seen as set).
		if b.globalSets == nil {
			b.globalSets = map[string]globalSet{}
		}
		if _, ok := b.globalSets[name]; !ok {
			b.globalSets[name] = globalSet{at: "the version before a reload"}
		}
	}
	var targets []*statechart.State
	b.kept = map[*seatml.State]bool{}
	for _, path := range c.leaves {
		var to *seatml.State
		for i, name := range path {
			s := b.prog.State(name)
			if s == nil {
				continue
			}
			if to == nil {
				to = s
				if i > 0 {
					c.report = append(c.report, fmt.Sprintf("state %s is gone: entered %s, the state around it", path[0], name))
				}
			}
			b.kept[s] = true
		}
		if to == nil {
			c.report = append(c.report, fmt.Sprintf("state %s is gone, and the states around it: entered the initial state", path[0]))
			continue
		}
		if to.Node != nil {
			targets = append(targets, to.Node)
		}
	}
	history := map[*statechart.State][]*statechart.State{}
	for id, ids := range c.history {
		h := b.prog.Chart.State(id)
		if h == nil {
			continue
		}
		for _, s := range ids {
			if n := b.prog.Chart.State(s); n != nil {
				history[h] = append(history[h], n)
			}
		}
	}
	b.starting = true
	if b.prog.Nested {
		b.sc.StartAt(targets, history)
	} else if len(targets) == 1 && targets[0] != b.prog.Chart.Root.Initial.Targets[0] {
		b.sc.StartAt(targets, nil)
	} else {
		b.sc.Start()
	}
	b.starting = false
	b.kept = nil
	if b.prog.Nested {
		b.syncCur()
	}
	for _, names := range c.stack {
		f, ok := frameOf(b, names)
		if !ok {
			c.report = append(c.report, fmt.Sprintf("a pushed state (%v) is gone: dropped from the stack", names))
			continue
		}
		b.stack = append(b.stack, f)
	}
	restoreTimers(b, c)
	for _, r := range c.report {
		b.log.Warn("reload: not carried over", zap.String("what", r))
	}
	b.settle(b.takePending())
	b.drainInternal()
}

// frameOf is a pushed frame of the old version in b's states.
func frameOf(b *seatmlBehavior, names []string) (frame, bool) {
	var f frame
	for _, name := range names {
		s := b.prog.State(name)
		if s == nil {
			return frame{}, false
		}
		f.leaves = append(f.leaves, s)
	}
	f.leaf = f.leaves[0]
	if len(f.leaves) == 1 {
		f.leaves = nil
	}
	return f, true
}

// restoreTimers gives the timers the time they had left.
func restoreTimers(b *seatmlBehavior, c *carry) {
	now := b.clock.Now()
	b.visitTimeout = c.visit
	if c.generalOK && b.general.armed() {
		at := now.Add(max(c.general, 0))
		b.timers.set(&b.general, at)
		b.timerAt.Store(at.UnixNano())
	}
	for _, st := range b.counting {
		if left, ok := c.states[st.s.Name]; ok && st.t.armed() {
			b.timers.set(&st.t, now.Add(max(left, 0)))
		}
	}
	if len(b.counting) > 0 {
		b.mirrorTimeout()
	}
	if ago, ok := c.since[b.cur.Name]; ok && !b.prog.Nested {
		b.enteredAt = now.Add(-ago)
	}
	if b.prog.Nested {
		for _, n := range b.sc.Configuration() {
			if ago, ok := c.since[n.Ext.(*seatml.State).Name]; ok {
				b.since[n.Index()] = now.Add(-ago)
			}
		}
	}
	if b.tick.armed() && c.tick > 0 {
		b.nextTick = now.Add(c.tick)
		b.publishTick()
	}
}
