package interpreter

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
)

// A reload is all or nothing (docs/lifecycle.md, "Reload"): the new
// version is created and its adaptors opened, or taken over, while the old
// one still runs; only then does the old one stop. An adaptor is taken
// over, with its connections, when the new file declares it as the old one
// did; one whose address the old version holds is opened once the old one
// has let it go.

// Replacement is a new version of a behavior opened beside the old one.
// Switch hands the taken-over adaptors to it; once the old version has
// stopped, Finish opens the adaptors that needed its addresses. Abandon
// undoes it before Switch, leaving the old version untouched.
type Replacement struct {
	old, new *Machine
	opened   map[string]adaptors.Adaptor // opened beside the old version
	taken    map[string]bool             // to be handed over by the old version
	later    []seatml.AdaptorDecl        // opened once the old version has stopped
	built    map[string]adaptors.Adaptor // later ones, built (not opened) beside the old version
	handed   map[string]handed           // what Switch took
	switched bool
}

// Taken lists the adaptors the new version takes over, with their
// connections, in declaration order. A host's are taken over only when
// it keeps its state (KeepState, called before).
func (r *Replacement) Taken() []string {
	var out []string
	fresh := r.new.host != nil && r.new.carried.Load() == nil
	for _, d := range r.new.prog.Adaptors {
		if r.taken[d.Name] && !fresh {
			out = append(out, d.Name)
		}
	}
	return out
}

// OpenBeside opens m's adaptors while old, the version it replaces, still
// runs: adaptors old declares the same way are taken over (at Switch);
// those whose address old holds wait for Finish; the rest open now. On an
// error nothing of old is touched and m is unloaded.
//
// With start, the new version will start once the old one has stopped:
// events of the adaptors it opens are queued for it from now on, as they
// are for a behavior that starts (else they are dropped, as for any loaded
// behavior).
func (m *Machine) OpenBeside(ctx context.Context, old *Machine, start bool) (*Replacement, error) {
	if m.unloaded {
		return nil, errors.New("behavior unloaded")
	}
	if start && m.host == nil {
		m.running.Store(true)
	}
	r := &Replacement{old: old, new: m, opened: map[string]adaptors.Adaptor{}, taken: map[string]bool{}, built: map[string]adaptors.Adaptor{}}
	held := old.heldAddresses()
	fail := func(err error) (*Replacement, error) {
		r.closeOpened()
		m.unload()
		return nil, err
	}
	m.step("adaptors:open")
	for _, d := range m.prog.Adaptors {
		if d.Ignored {
			continue
		}
		if m.canTake(old, d) {
			r.taken[d.Name] = true
			continue
		}
		if k := holdKey(d); k != "" && held[k] {
			// Built now, so that what is wrong with its attributes stops
			// the reload before the old version does; opened in Finish.
			a, err := m.buildAdaptor(d)
			if err != nil {
				return fail(err)
			}
			if a != nil {
				r.built[d.Name] = a
			}
			r.later = append(r.later, d)
			continue
		}
		a, err := m.openAdaptor(ctx, d)
		if err != nil {
			return fail(err)
		}
		if a != nil {
			r.opened[d.Name] = a
		}
	}
	return r, nil
}

// canTake reports whether m can take over old's open adaptor of d's name:
// same type, attributes and connection events, an adaptor that can serve
// a new version (adaptors.Keeper), and both versions open sessions of
// the same adaptor or neither does. A host's are kept only in a reload
// that keeps state (KeepState; Switch).
func (m *Machine) canTake(old *Machine, d seatml.AdaptorDecl) bool {
	if (m.host == nil) != (old.host == nil) || m.opts.OpenAdaptor != nil {
		return false
	}
	if m.host != nil && m.prog.Session != old.prog.Session {
		return false
	}
	old.adMu.RLock()
	a, r := old.adaptors[d.Name], old.relays[d.Name]
	old.adMu.RUnlock()
	if a == nil || r == nil {
		return false
	}
	if _, ok := a.(adaptors.Keeper); !ok {
		return false
	}
	for _, od := range old.prog.Adaptors {
		if od.Name == d.Name {
			return od.Type == d.Type && maps.Equal(od.Attrs, d.Attrs) &&
				old.prog.WantsConnections(d.Name) == m.prog.WantsConnections(d.Name)
		}
	}
	return false
}

// holdKey names what an adaptor holds exclusively: its listening address,
// standard input, or what its kind says (Kind.Holds); "" for nothing.
func holdKey(d seatml.AdaptorDecl) string {
	k, _ := adaptors.LookupKind(d.Type)
	if k.Has(adaptors.Stdin) {
		return "stdio"
	}
	if k.Holds != nil {
		if h := k.Holds(d.Attrs); h != "" {
			return d.Type + ":" + h
		}
	}
	if d.Attrs["role"] == "client" || d.Attrs["port"] == "" || d.Attrs["port"] == "0" {
		return ""
	}
	addr, _, err := adaptors.Config{Attrs: d.Attrs}.Address()
	if err != nil {
		return ""
	}
	return addr
}

// heldAddresses lists what m's open adaptors hold (holdKey).
func (m *Machine) heldAddresses() map[string]bool {
	m.adMu.RLock()
	defer m.adMu.RUnlock()
	out := map[string]bool{}
	for _, d := range m.prog.Adaptors {
		if m.adaptors[d.Name] != nil {
			if k := holdKey(d); k != "" {
				out[k] = true
			}
		}
	}
	return out
}

func (r *Replacement) closeOpened() {
	for name, a := range r.opened {
		if err := a.Close(); err != nil {
			r.new.log.Warn("closing adaptor", zap.String("adaptor", name), zap.Error(err))
		}
	}
	r.opened = map[string]adaptors.Adaptor{}
}

// Abandon undoes OpenBeside: the adaptors it opened close and the new
// version is unloaded; the old one was never touched.
func (r *Replacement) Abandon() {
	if r.switched {
		panic("Replacement.Abandon after Switch")
	}
	r.closeOpened()
	r.new.unload()
}

func (r *Replacement) Switch(start bool) {
	r.switched = true
	if r.new.host != nil && r.new.carried.Load() == nil {
		// A host's sessions start afresh: its peers connect again to
		// the new version, as its adaptors open again once the old
		// version has closed them.
		for _, d := range r.new.prog.Adaptors {
			if r.taken[d.Name] {
				delete(r.taken, d.Name)
				r.later = append(r.later, d)
			}
		}
	}
	if start {
		r.new.running.Store(true)
	}
	r.old.next.Store(r.new)
	old := r.old
	old.adMu.Lock()
	if old.handed == nil {
		old.handed = map[string]bool{}
	}
	r.handed = map[string]handed{}
	for name := range r.taken {
		a, rl := old.adaptors[name], old.relays[name]
		if a == nil || rl == nil {
			// The old version ended by itself since OpenBeside (seat.exit,
			// the end of its input) and closed it: opened in Finish.
			delete(r.taken, name)
			for _, d := range r.new.prog.Adaptors {
				if d.Name == name {
					r.later = append(r.later, d)
				}
			}
			continue
		}
		old.handed[name] = true
		r.handed[name] = handed{a, rl}
	}
	old.adMu.Unlock()
	for _, h := range r.handed {
		h.relay.m.Store(r.new)
	}
}

// KeepState asks the old version, before Switch, to leave what it is
// doing for the new one instead of exiting its states as it stops: the
// new version starts where the old one was (docs/lifecycle.md, "Reload
// that keeps state"). It says why not when it cannot: a behavior with
// sessions, or an SCXML document, starts afresh.
func (r *Replacement) KeepState() error {
	if r.switched {
		panic("Replacement.KeepState after Switch")
	}
	if _, ok := r.old.b.(*seatmlBehavior); !ok {
		return errors.New("only a SEATML behavior keeps its state across a reload yet; it starts from its initial state")
	}
	if (r.old.host == nil) != (r.new.host == nil) || r.old.host != nil && r.old.prog.Session != r.new.prog.Session {
		return errors.New("the new version opens sessions of another adaptor, or none: every session starts afresh")
	}
	if r.new.host != nil && !r.taken[r.new.prog.Session] {
		return fmt.Errorf("the session adaptor %s changed (its attributes), so it opens again: every session starts afresh", r.new.prog.Session)
	}
	c := &carry{}
	r.new.carried.Store(c)
	r.old.carried.Store(c) // read as it stops, on its goroutine
	if r.new.host != nil {
		r.new.host.prev.Store(r.old.host) // its peers' events wait for their sessions
	}
	return nil
}

// Kept waits until the new version has started (or ctx ends) and says
// what of the old version's state it could not carry over; ok is false
// when it was not asked to (KeepState) or the old version left nothing.
func (r *Replacement) Kept(ctx context.Context) (report []string, ok bool) {
	c := r.new.carried.Load()
	if c == nil {
		return nil, false
	}
	select {
	case <-r.new.ready:
	case <-ctx.Done():
		return nil, false
	}
	report = c.report
	for _, hs := range c.sessions { // a host's: each session's, by its peer
		for _, line := range hs.c.report {
			report = append(report, "session "+hs.peer+": "+line)
		}
	}
	return report, c.taken
}

// handed is an adaptor handed over, with the relay it delivers through.
type handed struct {
	a     adaptors.Adaptor
	relay *relay
}

// Finish completes the new version once the old one has stopped: the
// adaptors that needed the old version's addresses open, and every adaptor
// is the new version's, in declaration order. On an error the new version
// keeps what it has (a caller may hand it back to a new copy of the old
// version, or Close it).
func (r *Replacement) Finish(ctx context.Context) error {
	m := r.new
	var err error
	for _, d := range r.later {
		var a adaptors.Adaptor
		if b := r.built[d.Name]; b != nil {
			delete(r.built, d.Name)
			a, err = m.openBuilt(ctx, d, b)
		} else {
			a, err = m.openAdaptor(ctx, d)
		}
		if err != nil {
			break
		}
		if a != nil {
			r.opened[d.Name] = a
		}
	}
	for _, d := range m.prog.Adaptors {
		if h, ok := r.handed[d.Name]; ok {
			h.a.(adaptors.Keeper).Keep(m.adaptorConfig(d))
			m.adopt(d, h.a, h.relay)
		} else if a := r.opened[d.Name]; a != nil {
			m.adopt(d, a, nil)
		}
	}
	m.adMu.Lock()
	m.opened = true
	m.adMu.Unlock()
	return err
}
