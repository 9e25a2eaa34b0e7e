package interpreter

// Dispatch: an event, a connection or a widget finds its rule (the search
// of docs/seatml.md §5: the innermost state, then outward, then general).

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/julius"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// guiModel describes the behavior's widgets for adaptors that show them.
func (m *Machine) guiModel() *adaptors.GUI {
	g := &adaptors.GUI{Behavior: m.prog.Name}
	for _, s := range m.prog.States {
		st := adaptors.GUIState{Name: s.Name}
		for _, w := range s.Widgets {
			st.Widgets = append(st.Widgets, adaptors.Widget{Kind: w.Kind, ID: w.ID, Ref: w.Ref, Attrs: w.Attrs, Value: w.Initial})
		}
		g.States = append(g.States, st)
	}
	return g
}

// keysModel is what the rules listen for from the adaptor name: the
// keys of the rules whose source is name or none, as written, state by
// state and the general rules' (a recognizer's grammar, adaptors.Keys).
func (m *Machine) keysModel(name string) *adaptors.Keys {
	of := func(sc *seatml.Scope) []string {
		var out []string
		for _, r := range sc.Rules {
			for _, w := range r.Words {
				if w.Source == name || w.Source == "" {
					out = append(out, w.Text)
				}
			}
		}
		return out
	}
	k := &adaptors.Keys{States: map[string][]string{}}
	if m.prog.General != nil {
		k.General = of(m.prog.General)
	}
	for _, s := range m.prog.States {
		k.States[s.Name] = of(&s.Scope)
	}
	return k
}

// handleEvent takes an event in: it is stamped with the turn, trimmed of
// its line end and shown to the observers; a widget's new value is kept;
// anything else goes to the behavior. Its sender, if it waits, hears
// whether it was handled.
func (m *Machine) handleEvent(ev adaptors.Event) {
	if ev.Done != nil {
		m.cutShort = false
		defer func() { ev.Done(!m.cutShort) }() // a script cut short by seat stopping: not handled (MQTT sends it again)
	}
	m.evBuf = ev
	m.received(&m.evBuf)
	m.b.handle(&m.evBuf)
}

// received is handleEvent's intake, for internal events too.
func (m *env) received(ev *adaptors.Event) {
	m.turn++
	for n := len(ev.Text); n > 0 && (ev.Text[n-1] == '\n' || ev.Text[n-1] == '\r'); n-- {
		ev.Text = ev.Text[:n-1] // TrimRight(text, "\r\n") without building its set per event
	}
	if ev.Update {
		return // a widget's value: the behavior keeps it, unseen by observers and rules
	}
	if m.wants(kIn | kConnect | kDisconnect | kRaise) {
		m.observeEvent(ev)
	}
}

// handle handles an event (§5), then the internal events it raised.
func (m *seatmlBehavior) handle(ev *adaptors.Event) {
	m.handleOne(ev)
	if m.sc.HasInternal() {
		m.drainInternal()
	}
}

// handleOne handles one event (§5).
func (m *seatmlBehavior) handleOne(ev *adaptors.Event) {
	if ev.Update {
		m.updateWidget(ev)
		return
	}
	if ev.Kind != adaptors.Text {
		m.handleConnection(*ev)
		return
	}
	if ev.Source == "motion" && m.resourceCallback(*ev) {
		return
	}
	if ev.Key != "" && m.wants(kKey) {
		m.observe(Record{Kind: RecKey, Source: ev.Source, Key: ev.Key})
	}
	if ev != &m.evBuf { // an internal event
		m.evBuf = *ev
	}
	cc := m.ctx(ctxEvent)
	cc.ev = &m.evBuf
	moves := m.moves
	ran := false
	if ev.Source == "gui" {
		w, owner := m.widgetOf(ev.ID, ev.Ref)
		if w == nil {
			m.log.Warn("widget event for a widget the current state does not have", zap.String("id", ev.ID), zap.String("state", m.cur.Name))
			return
		}
		cc.lookup = ev.Text
		if m.prog.Nested {
			m.src = owner
		}
		ran = m.handleWidget(cc, w)
	} else {
		// The lookup text (§5 step 1): an event's key (every device-layer
		// and internal event has one, as a ROS request does), else the
		// text up to its first comma (the speech result "はい,0.93" is
		// looked up as "はい"); scripts read it as event.lookup. A
		// structured message without a key goes to key-less rules only.
		switch {
		case ev.Key != "":
			cc.lookup = ev.Key
			ran = m.matchKeyed(cc, ev.Source, cc.lookup)
		case ev.Data == nil:
			// A Julius result is an XML document: its first byte is < (or
			// white space before it), which a line seldom starts with.
			if t := ev.Text; t != "" && (t[0] == '<' || t[0] <= ' ') && julius.IsResult(t) {
				// Its hypotheses in rank order, as eSEAT tries them, each
				// the event's text while it is tried ("はい,0.87"); with
				// none taken, the XML, for the data rules.
				var err error
				ran, err = julius.Try(t, m.prog.ScoreLimit, func(h julius.Hypothesis) bool {
					m.evBuf.Text = h.Text + "," + strconv.FormatFloat(h.Score, 'f', -1, 64)
					cc.lookup = h.Text
					return m.matchKeyed(cc, ev.Source, cc.lookup)
				})
				if err != nil {
					m.log.Warn("a Julius result that is not well-formed XML; its hypotheses before the error were tried", zap.String("source", ev.Source), zap.Error(err))
				}
				if !ran {
					m.evBuf.Text, cc.lookup = t, t
				}
				break
			}
			cc.lookup = ev.Text
			if i := strings.IndexByte(cc.lookup, ','); i >= 0 {
				cc.lookup = cc.lookup[:i]
			}
			ran = m.matchKeyed(cc, ev.Source, cc.lookup)
		default:
			cc.lookup = ev.Text
		}
	}
	if m.exitCode == nil && (m.moves == moves || m.prog.Nested) { // in a nested behavior, the regions a move left alone
		if m.runDataRules(cc, moves) {
			ran = true
		}
	}
	m.src = nil
	if !ran {
		m.unmatched++
		m.log.Debug("unmatched event", zap.String("source", ev.Source), zap.String("text", ev.Text), zap.String("state", m.stateName()))
	}
}

// handleConnection runs the onconnect or ondisconnect list for the
// event's adaptor: the current state's if it has one, else general's; in
// a nested behavior, each region's innermost (the active state's, else
// the nearest state's around it), else general's. Like a fired rule, it
// restarts the timeouts. event.peer names the peer, and seat.reply
// answers just that peer.
func (m *seatmlBehavior) handleConnection(ev adaptors.Event) {
	what := "onconnect"
	if ev.Kind == adaptors.Disconnected {
		what = "ondisconnect"
	}
	handler := func(sc *seatml.Scope) ([]seatml.Action, bool) {
		if ev.Kind == adaptors.Disconnected {
			list, ok := sc.OnDisconnect[ev.Source]
			return list, ok
		}
		list, ok := sc.OnConnect[ev.Source]
		return list, ok
	}
	m.evBuf = ev
	cc := m.ctx(ctxEvent)
	cc.ev = &m.evBuf
	run := func(list []seatml.Action, owner *seatml.State) {
		if m.wants(kHandler) {
			m.observe(Record{Kind: RecHandler, Key: what, Source: ev.Source})
		}
		m.src = owner // its transitions leave from it, its countdowns restart
		m.resetTimeout()
		m.settle(m.runList(list, cc))
		m.src = nil
	}
	if !m.prog.Nested {
		if list, ok := handler(&m.cur.Scope); ok {
			run(list, nil)
		} else if list, ok := handler(m.prog.General); ok {
			run(list, nil)
		}
		return
	}
	m.leafBuf = m.appendLeaves(m.leafBuf[:0])
	m.doneBuf = m.doneBuf[:0] // the states whose handler ran: one shared by regions runs once
	for _, leaf := range m.leafBuf {
		if !m.sc.Active(leaf.Node) || m.touchedNow(leaf) || m.exitCode != nil {
			continue // an earlier region's transition left it
		}
	chain:
		for st := leaf; st != nil; st = st.Parent {
			list, ok := handler(&st.Scope)
			if !ok {
				continue
			}
			for _, done := range m.doneBuf {
				if done == st {
					break chain
				}
			}
			m.doneBuf = append(m.doneBuf, st)
			run(list, st)
			break
		}
	}
	if len(m.doneBuf) == 0 && m.exitCode == nil {
		if list, ok := handler(m.prog.General); ok {
			run(list, generalSource)
		}
	}
}

// matchKeyed fires the first candidate rule for lookup text l (§5 steps 2-4).
func (m *seatmlBehavior) matchKeyed(cc *callCtx, source, l string) bool {
	m.gen++
	id, known := m.sources.id(m.prog.SourceIDs, source)
	if !m.prog.Nested {
		return m.matchScope(cc, &m.cur.Scope, id, known, l) || m.matchScope(cc, m.prog.General, id, known, l)
	}
	// Each region's active state, then the states around it, inner
	// first; general's rules when no state's rule fired.
	fired := false
	m.leafBuf = m.appendLeaves(m.leafBuf[:0])
	for _, leaf := range m.leafBuf {
		if !m.sc.Active(leaf.Node) || m.touchedNow(leaf) {
			continue // an earlier region's transition left it (and maybe entered it again)
		}
		for s := leaf; s != nil; s = s.Parent {
			m.src = s
			if m.matchScope(cc, &s.Scope, id, known, l) {
				fired = true
				break
			}
		}
	}
	if !fired {
		m.src = generalSource
		fired = m.matchScope(cc, m.prog.General, id, known, l)
	}
	m.src = nil
	return fired
}

// sourceCache is the last event source looked up in a Program's
// SourceIDs, and what it said: most events come from the adaptor the last
// one came from, and comparing the name (the same string, mostly) costs
// less than hashing it.
type sourceCache struct {
	name  string
	num   int
	known bool
}

func (c *sourceCache) id(ids map[string]int, source string) (int, bool) {
	if source != c.name {
		c.name = source
		c.num, c.known = ids[source]
	}
	return c.num, c.known
}

// generalSource stands for general as the source of a transition: a
// general rule's transition leaves from the behavior itself, exiting
// every active state, as in a flat behavior.
var generalSource = &seatml.State{Name: "general"}

// appendLeaves appends the active atomic states, in document order, to
// dst: a copy, as transitions may change the configuration meanwhile.
func (m *seatmlBehavior) appendLeaves(dst []*seatml.State) []*seatml.State {
	for _, n := range m.sc.Configuration() {
		if n.Atomic() {
			dst = append(dst, n.Ext.(*seatml.State))
		}
	}
	return dst
}

// matchScope fires the first candidate rule of one scope for lookup text
// l (§5 steps 2-4): rules of the event's source, then rules of any.
func (m *seatmlBehavior) matchScope(cc *callCtx, sc *seatml.Scope, id int, known bool, l string) bool {
	for k, src := range [2]int{id, 0} {
		if k == 0 && (!known || id == 0) {
			continue // no rule names this source
		}
		if k == 1 && cc.ev.Source == seatml.InternalSource {
			break // internal events are for rules that name their source
		}
		g := sc.BySource[src]
		if g == nil {
			continue
		}
		for _, r := range g.Exact[l] {
			if m.try(cc, r, l, nil) {
				return true
			}
		}
		for _, w := range g.Patterns {
			r := w.Rule
			if m.tried[r.ID] == m.gen {
				continue
			}
			var caps []string
			if w.RE == nil {
				if !strings.HasPrefix(l, w.Text) {
					continue
				}
			} else if w.RE.NumSubexp() == 0 {
				if !w.RE.MatchString(l) {
					continue
				}
			} else {
				sm := w.RE.FindStringSubmatch(l)
				if sm == nil {
					continue
				}
				caps = sm
			}
			if m.try(cc, r, w.Text, caps) {
				return true
			}
		}
	}
	return false
}

// try runs rule r's cond and, if it holds, its actions.
func (m *seatmlBehavior) try(cc *callCtx, r *seatml.Rule, key string, caps []string) bool {
	if m.tried[r.ID] == m.gen {
		return false
	}
	m.tried[r.ID] = m.gen
	m.setEventKey(cc, key, caps)
	if !m.condTrue(r, cc) {
		return false
	}
	m.fireRule(r, cc, key)
	return true
}

func (m *seatmlBehavior) fireRule(r *seatml.Rule, cc *callCtx, key string) {
	if m.wants(kFire) {
		m.observe(Record{Kind: RecFire, At: r.Pos})
	}
	if ce := m.log.Check(zapcore.DebugLevel, "rule fired"); ce != nil {
		ce.Write(zap.String("rule", r.Pos.String()), zap.String("key", key), zap.String("source", cc.ev.Source), zap.String("state", m.stateName()))
	}
	if cc.ev.Key != "" { // a ROS goal has one (ros_action); a line has none
		if t, ok := cc.ev.From.(adaptors.Taker); ok {
			t.Take() // the behavior has the goal from now on
		}
	}
	m.resetTimeout()
	m.settle(m.runList(r.Actions, cc))
}

func (m *seatmlBehavior) condTrue(r *seatml.Rule, cc *callCtx) bool {
	if r.Cond == nil {
		return true
	}
	if r.CondPre != nil {
		if _, err := m.call(r.CondPre, cc); err != nil {
			m.scriptFailed(err, "cond")
			return false
		}
	}
	v, err := m.call(r.Cond, cc)
	if err != nil {
		m.scriptFailed(err, "cond")
		return false
	}
	return lua.LVAsBool(v)
}

// runDataRules is §5 step 5: the data rules of the active state and the
// states around it, then general's, until one moves on. In a nested
// behavior each region's run unless a transition of this event left or
// entered their state, and general's only while nothing moved (moves:
// the count when the event came).
func (m *seatmlBehavior) runDataRules(cc *callCtx, moves uint64) bool {
	ran := false
	src := cc.ev.Source
	scopes := [2]*seatml.Scope{&m.cur.Scope, m.prog.General} // a flat behavior's, without building a list
	list := scopes[:]
	if m.prog.Nested {
		list = m.scopes()
	}
	m.doneBuf = m.doneBuf[:0] // the states whose data rule moved on: their region is done with the event
scopes:
	for i, sc := range list {
		if m.prog.Nested {
			owner := m.ownerBuf[i]
			if owner == generalSource && m.moves != moves || owner != generalSource && m.touchedNow(owner) {
				continue
			}
			for _, done := range m.doneBuf {
				if done.Node.Descends(owner.Node) {
					continue scopes
				}
			}
			m.src = owner // its transitions leave from it (handleOne resets it)
		}
		for _, r := range sc.DataRules {
			if r.Source != "" && r.Source != src || r.Source == "" && src == seatml.InternalSource {
				continue // internal events are for rules that name their source
			}
			m.setEventKey(cc, "", nil)
			if !m.condTrue(r, cc) {
				continue
			}
			before := m.moves
			m.fireRule(r, cc, "")
			ran = true
			if m.exitCode != nil || m.moves != before && !m.prog.Nested {
				return true
			}
			if m.moves != before {
				m.doneBuf = append(m.doneBuf, m.ownerBuf[i])
				break // this region is done; the other regions' go on
			}
		}
	}
	return ran
}

// updateWidget sets an input's or text's value from a page, without
// running rules; only widgets of the current state can be set.
func (m *seatmlBehavior) updateWidget(ev *adaptors.Event) {
	w := m.prog.WidgetByRef[ev.ID]
	if w == nil || !m.stateActive(m.prog.State(w.State)) || (w.Kind != "input" && w.Kind != "text") {
		m.log.Warn("value update for a widget the current state does not have", zap.String("id", ev.ID), zap.String("state", m.cur.Name))
		return
	}
	if m.widgets.values[w.Ref] != ev.Text {
		m.widgets.values[w.Ref] = ev.Text
		m.notifyGUI(w.Ref, "set", ev.Text)
	}
}

// widgetOf finds a widget of an active state by id or button label, and
// the state that has it: the one ref names when the page says
// ("state:id"), else the current state's, the states' around it (inner
// first), then those of the other active states (parallel regions).
func (m *seatmlBehavior) widgetOf(id, ref string) (*seatml.Widget, *seatml.State) {
	if w := m.prog.WidgetByRef[ref]; w != nil && w.ID == id {
		if s := m.prog.State(w.State); m.stateActive(s) {
			return w, s
		}
	}
	for s := m.cur; s != nil; s = s.Parent {
		if w := s.Widget(id); w != nil {
			return w, s
		}
	}
	if m.prog.Nested {
		for _, n := range m.sc.Configuration() {
			if s, ok := n.Ext.(*seatml.State); ok {
				if w := s.Widget(id); w != nil {
					return w, s
				}
			}
		}
	}
	return nil, nil
}

// stateActive reports whether s is active: the current state of a flat
// behavior, or in the configuration of a nested one.
func (m *seatmlBehavior) stateActive(s *seatml.State) bool {
	switch {
	case s == nil:
		return false
	case !m.prog.Nested:
		return s == m.cur
	}
	return m.sc.Active(s.Node)
}

// handleWidget handles a "gui" event for widget w (§11).
func (m *seatmlBehavior) handleWidget(cc *callCtx, w *seatml.Widget) bool {
	ev := cc.ev
	if (w.Kind == "input" || w.Kind == "text") && m.widgets.values[w.Ref] != ev.Text {
		m.widgets.values[w.Ref] = ev.Text
		m.notifyGUI(w.Ref, "set", ev.Text) // every panel shows what was submitted
	}
	if w.Kind == "button" && ev.Text == "" {
		ev.Text = w.Label
	}
	if len(w.Actions) > 0 {
		m.gen++
		m.setEventKey(cc, w.ID, nil)
		if m.wants(kFire) {
			m.observe(Record{Kind: RecFire, At: w.Pos})
		}
		m.resetTimeout()
		m.settle(m.runList(w.Actions, cc))
		return true
	}
	return m.matchKeyed(cc, "gui", w.ID)
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
				text = m.widgets.values[a.Input]
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

func (m *seatmlBehavior) runScript(a *seatml.Action, cc *callCtx) bool {
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
func (m *seatmlBehavior) answerRequest(cc *callCtx, result lua.LValue, a *seatml.Action) {
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
