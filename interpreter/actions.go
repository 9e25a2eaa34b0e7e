package interpreter

// Actions: a rule's or a list's actions run in order; messages go out
// through the adaptors.

import (
	"encoding/json"
	"errors"
	"fmt"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

func (m *env) notifyGUI(ref, op, value string) {
	for _, o := range m.guiObs {
		o.GUIUpdate(ref, op, value)
	}
}

// runList runs an action list (§7) and returns the transition it requests.
func (m *seatmlBehavior) runList(list []seatml.Action, cc *callCtx) request {
	m.req = request{}
	if len(list) == 0 {
		return request{} // most onentry lists: no context to swap
	}
	prev := m.cc
	m.cc = cc
	defer func() { m.cc = prev }()
	for i := range list {
		a := &list[i]
		switch a.Kind {
		case seatml.ActMessage:
			text := a.Text
			if a.Input != "" {
				text = m.values[a.Input]
			}
			enc, bad := a.Encode(text)
			if bad != 0 && !m.encodeWarned[a] {
				m.encodeWarned[a] = true // once per message element, not per send
				m.log.Warn(fmt.Sprintf("message: %q (U+%04X) cannot be encoded; sent as \"?\" (logged once for this message)", bad, bad), zap.String("at", a.Pos.String()))
			}
			if a.Topic != "" || a.Retain {
				m.sendTopic(a, enc)
				continue
			}
			m.sendSlot(a.Slot, a.SendTo, enc, &a.Pos) // a pointer: no boxing per message
		case seatml.ActTransition:
			if m.inExit {
				m.log.Error("statetransition in onexit refused: a transition is under way", zap.String("at", a.Pos.String()))
				m.req = request{}
				return request{}
			}
			m.req = request{}
			return request{ok: true, fn: a.Fn, target: a.Target, from: m.src}
		case seatml.ActLog:
			if ce := m.log.Check(a.Level, a.Text); ce != nil {
				ce.Write(zap.String("state", m.stateName()), zap.Stringer("at", a.Pos))
			}
		case seatml.ActShell:
			if !m.runShell(a) {
				return m.takeRequest(false)
			}
		case seatml.ActScript:
			if !m.runScript(a, cc) {
				return m.takeRequest(false)
			}
		case seatml.ActMotion:
			m.runMotion(a)
		case seatml.ActRaise:
			m.raise(a.Text, "", &a.Pos)
		}
	}
	return m.takeRequest(true)
}

func (m *seatmlBehavior) takeRequest(keep bool) request {
	r := m.req
	m.req = request{}
	if !keep || !r.ok {
		return request{}
	}
	r.from = m.src // seat.transition's: from the state whose list it is
	return r
}

func (m *env) runScript(a *seatml.Action, cc *callCtx) bool {
	var result lua.LValue = lua.LNil
	for _, ch := range a.Chunks {
		v, err := m.call(ch, cc)
		if err != nil {
			m.scriptFailed(err, "script")
			return false
		}
		result = v
	}
	if result == lua.LNil {
		return true
	}
	if a.SendTo == "" {
		m.answerRequest(cc, result, a)
		return true
	}
	text, ok := toText(result)
	if !ok {
		m.scriptFailed(&luadm.Error{Pos: schema.Pos{File: a.Pos.File, Line: a.Pos.Line}, Msg: fmt.Sprintf("script result is a %s; only strings, numbers and booleans can be sent", result.Type())}, "script")
		return false
	}
	m.send(a.SendTo, text, &a.Pos)
	return true
}

// answerRequest makes a script's result the answer to the request the event
// stands for (a ROS service request, eSEAT's __retval__), when it has
// not been answered yet.
func (m *env) answerRequest(cc *callCtx, result lua.LValue, a *seatml.Action) {
	if cc.ev == nil {
		return
	}
	req, ok := cc.ev.From.(adaptors.Answerer)
	if !ok || req.Answered() {
		return
	}
	data, err := luadm.FromLua(result)
	if err == nil {
		text, _ := json.Marshal(data) // FromLua's values have no NaN that matters here
		m.observeReply(string(text))
		err = req.SendMessage(data)
	}
	if err != nil {
		m.scriptFailed(&luadm.Error{Pos: schema.Pos{File: a.Pos.File, Line: a.Pos.Line}, Msg: "the result does not answer the request: " + err.Error()}, "script")
	}
}

func (m *env) scriptFailed(err error, what string) {
	m.log.Error(what+" failed", zap.String("error", err.Error()), zap.String("state", m.stateName()))
	if m.prog.HearsInternal {
		m.raise("error.execution", err.Error(), nil) // for rules of source "event"
	}
}

// raise puts an internal event on the queue: the rules of source "event"
// handle it (its name is the lookup text, data its text) once the event,
// timer or list being handled is done, before anything else. at says
// where it was raised, for the errors of drainInternal. The queue holds
// at most Options.QueueLen: past it the event is dropped, and counted
// for one error once the queue is drained.
func (m *env) raise(name, data string, at fmt.Stringer) {
	if m.sc.InternalLen() >= m.opts.QueueLen {
		m.unqueued.add(name, at)
		return
	}
	var d any // as little as says it: a <raise>'s is its place, a pointer (no allocation)
	switch pos, isPos := at.(*schema.Pos); {
	case at == nil && data != "":
		d = data
	case isPos && data == "":
		d = pos
	case at != nil:
		d = raised{text: data, at: at}
	}
	m.sc.Raise(&statechart.Event{Name: name, Type: statechart.Internal, Data: d})
}

// raised is the data of an internal event the machine raised with both
// a text and a place.
type raised struct {
	text string
	at   fmt.Stringer
}

// placeText is a place given as text (a Lua script's file:line).
type placeText string

func (p placeText) String() string { return string(p) }

// droppedEvents counts internal events dropped for one reason, and names
// the first: its name and where it was raised.
type droppedEvents struct {
	n     int
	first string
	at    fmt.Stringer
}

func (d *droppedEvents) add(name string, at fmt.Stringer) {
	if d.n == 0 {
		d.first, d.at = name, at
	}
	d.n++
}

// log logs one error for the events dropped, if any, and forgets them.
func (d *droppedEvents) log(m *env, msg string, limit int) {
	if d.n == 0 {
		return
	}
	fields := []zap.Field{zap.String("event", d.first), zap.Int("limit", limit), zap.Int("dropped", d.n), zap.String("state", m.stateName())}
	if d.at != nil { // not for the engine's own events, such as done.state
		fields = append(fields, zap.String("raised_at", d.at.String()))
	}
	m.log.Error(msg, fields...)
	*d = droppedEvents{}
}

// drainInternal handles the internal events raised so far, and those they
// raise in turn. A chain (each event raised while the one before it was
// handled) is cut past maxChain events deep; events raised side by side
// are bounded by the queue (raise); and at most maxInternal are handled
// in all, so that a fan-out (each event raising two) ends too. depths
// holds each waiting event's depth in its chain, in the queue's order: 1
// for those raised by the event, timer or list just handled, d+1 for
// those raised while an event of depth d was handled (by its rules or by
// the engine, as done.state).
func (m *seatmlBehavior) drainInternal() {
	m.depths = m.depths[:0]
	for range m.sc.InternalLen() {
		m.depths = append(m.depths, 1)
	}
	var deep, many droppedEvents
	for next := 0; m.exitCode == nil; next++ {
		ev := m.sc.NextInternal()
		if ev == nil {
			break
		}
		var text string
		var at fmt.Stringer
		switch d := ev.Data.(type) {
		case raised:
			text, at = d.text, d.at
		case *schema.Pos:
			at = d
		case string: // error.execution's message
			text = d
		}
		depth := m.depths[next]
		switch {
		case depth > maxChain:
			deep.add(ev.Name, at)
			continue
		case next >= maxInternal:
			many.add(ev.Name, at)
			continue
		}
		before := m.sc.InternalLen()
		if iev := (adaptors.Event{Source: seatml.InternalSource, Key: ev.Name, Text: text}); m.received(&iev) {
			m.handleOne(&iev)
		}
		for range m.sc.InternalLen() - before {
			m.depths = append(m.depths, depth+1)
		}
	}
	if cap(m.depths) > 4*m.opts.QueueLen {
		m.depths = nil // a fan-out's: not kept for the next
	}
	if deep.n+many.n+m.unqueued.n > 0 { // (no message is formatted for nothing)
		deep.log(m.env, fmt.Sprintf("internal events cut: a chain of %d, each raised while handling the one before (a rule that raises the event it handles?)", maxChain), maxChain)
		many.log(m.env, fmt.Sprintf("internal events cut: %d handled after one event, timer or list (each raising more than one?)", maxInternal), maxInternal)
		m.unqueued.log(m.env, fmt.Sprintf("internal event queue full: raised events dropped (at most %d wait at once)", m.opts.QueueLen), m.opts.QueueLen)
	}
}

// sendSlot is send for an adaptor known by its index in Program.Adaptors.
func (m *env) sendSlot(slot int, name, text string, at fmt.Stringer) {
	m.sent = true
	if slot >= 0 && slot < len(m.slots) && m.slots[slot] != nil && !m.tracing() && !m.watching() {
		if err := m.slots[slot].Send(text); err != nil {
			m.log.Warn("message not sent", zap.String("adaptor", name), zap.Stringer("at", at), zap.Error(err))
		}
		return
	}
	m.send(name, text, at)
}

// send delivers text to a named adaptor (or logs why not); at says where
// the send came from, formatted only if something is logged.
func (m *env) send(name, text string, at fmt.Stringer) { m.sendWith(name, text, at, nil) }

// sendWith is send, with publish doing the sending when set (a message to
// a topic of its own).
func (m *env) sendWith(name, text string, at fmt.Stringer, publish func(adaptors.Adaptor) error) {
	m.sent = true
	if m.tracing() {
		m.trace("send:" + name + ":" + text)
	}
	if m.watching() {
		m.observe(Record{Kind: RecOut, Source: name, Text: text})
	}
	m.adMu.RLock()
	a, opened := m.adaptors[name], m.opened
	m.adMu.RUnlock()
	if a == nil {
		switch {
		case m.isIgnoredAdaptor(name):
			m.log.Debug("message to an adaptor seat does not run; dropped", zap.String("adaptor", name))
		case !opened:
			m.log.Warn("message not sent: adaptor not active", zap.String("adaptor", name), zap.Stringer("at", at))
		default:
			m.log.Warn("message not sent: adaptor not open", zap.String("adaptor", name), zap.Stringer("at", at))
		}
		return
	}
	var err error
	if publish != nil {
		err = publish(a)
	} else {
		err = a.Send(text)
	}
	if err != nil {
		m.log.Warn("message not sent", zap.String("adaptor", name), zap.Stringer("at", at), zap.Error(err))
	}
}

// sendTopic publishes a message with its own topic or retain flag to an
// MQTT adaptor (adaptors.TopicSender); in a topic session its peer fills
// a "+" in the topic with its value.
func (m *env) sendTopic(a *seatml.Action, text string) {
	m.sendWith(a.SendTo, text, &a.Pos, func(ad adaptors.Adaptor) error {
		ts, ok := ad.(adaptors.TopicSender)
		if !ok {
			return errors.New("the adaptor does not publish to topics")
		}
		return ts.SendTopic(a.Topic, text, a.Retain)
	})
}

func (m *env) isIgnoredAdaptor(name string) bool {
	for _, d := range m.prog.Adaptors {
		if d.Name == name {
			return d.Ignored
		}
	}
	return false
}
