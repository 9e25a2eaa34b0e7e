package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// installAPI defines the seat table (§9.4).
func (m *env) installAPI() {
	L := m.L
	api := L.NewTable()
	fns := map[string]lua.LGFunction{
		"send":        m.luaSend,
		"publish":     m.luaPublish,
		"call":        m.luaCall,
		"result":      m.luaResult,
		"cancel":      m.luaCancel,
		"reply":       m.luaReply,
		"state":       func(L *lua.LState) int { L.Push(lua.LString(m.stateName())); return 1 },
		"log":         m.luaLog,
		"now":         func(L *lua.LState) int { L.Push(lua.LNumber(float64(m.clock.Now().UnixNano()) / 1e9)); return 1 },
		"exit":        m.luaExit,
		"get":         m.luaGet,
		"set":         m.luaSet,
		"set_timed":   m.luaSetTimed,
		"motion":      m.luaMotion,
		"subscribe":   m.luaSubscribe,
		"unsubscribe": m.luaUnsubscribe,
	}
	for name, fn := range fns {
		api.RawSetString(name, L.NewFunction(fn))
	}
	api.RawSetString("sendto", api.RawGetString("send"))
	L.SetGlobal("seat", api)
	L.SetGlobal("print", L.NewFunction(func(L *lua.LState) int {
		parts := make([]string, L.GetTop())
		for i := range parts {
			parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
		}
		m.log.Info(strings.Join(parts, "\t"), zap.String("from", "print"))
		return 0
	}))
}

// installAPI adds SEATML's own functions to the seat table: transitions,
// the timeout, internal events and widgets (an SCXML document has its
// own ways: scxmlOnly).
func (m *seatmlBehavior) installAPI() {
	m.env.installAPI()
	L := m.L
	api := L.GetGlobal("seat").(*lua.LTable)
	fns := map[string]lua.LGFunction{
		"transition": m.luaTransition(seatml.TransGoto),
		"push":       m.luaTransition(seatml.TransPush),
		"pop":        m.luaTransition(seatml.TransPop),
		"raise": func(L *lua.LState) int {
			name := L.CheckString(1)
			if name == "" || strings.ContainsAny(name, " \t\r\n") {
				L.ArgError(1, fmt.Sprintf("event name %q: an event name is one word, without spaces", name))
			}
			m.raise(name, "", placeText(m.where(L)))
			return 0
		},
		"timeout": m.luaTimeout,
		"reset_timer": func(L *lua.LState) int {
			if !m.inExit { // in an onexit the state's visit is over
				m.resetTimeout()
			}
			return 0
		},
		"get_entry":   m.widgets.get("input"),
		"set_entry":   m.widgets.set("input", "set"),
		"get_text":    m.widgets.get("text"),
		"set_text":    m.widgets.set("text", "set"),
		"append_text": m.widgets.set("text", "append"),
		"clear_text":  m.widgets.set("text", "clear"),
	}
	for name, fn := range fns {
		api.RawSetString(name, L.NewFunction(fn))
	}
	for alias, name := range map[string]string{"getEntry": "get_entry", "setEntry": "set_entry", "getText": "get_text", "appendText": "append_text", "clearText": "clear_text"} {
		api.RawSetString(alias, api.RawGetString(name))
	}
}

// luaSend is seat.send(adaptor, text): a table is sent as
// seat.publish sends it (an OpenRTM port's data, a ROS message, JSON).
func (m *env) luaSend(L *lua.LState) int {
	if _, ok := L.Get(2).(*lua.LTable); ok {
		return m.publish(L, "seat.send")
	}
	name := m.luaAdaptor(L, "seat.send")
	text := luaText(L, 2)
	m.send(name, text, luaWhere{m, L})
	return 0
}

// luaAdaptor is the adaptor named by argument 1 of fn; a name the
// behavior does not declare is a Lua error.
func (m *env) luaAdaptor(L *lua.LState, fn string) string {
	name := L.CheckString(1)
	if !m.declaredAdaptor(name) {
		var names []string
		for _, d := range m.prog.Adaptors {
			names = append(names, d.Name)
		}
		L.RaiseError("%s: %q is not a declared adaptor%s", fn, name, schema.DidYouMean(name, names, "%q"))
	}
	return name
}

// luaPublish is seat.publish(adaptor, value [, goal]): a table goes to a
// ROS adaptor as a message of its type (a sequence fills the fields in
// order, a table with names fills them by name) and to any other adaptor
// as JSON text; a string is sent as seat.send sends it. A value that does
// not fit the message is a Lua error naming the field, and nothing is
// sent. goal names the goal an action server's feedback is for.
func (m *env) luaPublish(L *lua.LState) int { return m.publish(L, "seat.publish") }

// publish is seat.publish, and seat.send given a table, as fn.
func (m *env) publish(L *lua.LState, fn string) int {
	name := m.luaAdaptor(L, fn)
	t, ok := L.Get(2).(*lua.LTable)
	if !ok {
		m.send(name, luaText(L, 2), luaWhere{m, L})
		return 0
	}
	data, text := luaMessage(L, 2, t)
	goal := L.OptString(3, "")
	if a := m.adaptor(name); goal != "" && a != nil {
		if _, ok := a.(adaptors.Finisher); !ok {
			L.RaiseError("%s: %q is not an adaptor that works on goals (a ros_action_server): its messages name no goal", fn, name)
		}
	}
	var bad error
	m.sendWith(name, text, luaWhere{m, L}, func(a adaptors.Adaptor) error {
		if f, ok := a.(adaptors.Finisher); ok && goal != "" {
			bad = f.Feedback(goal, data)
		} else {
			bad = sendMessage(a, data, text)
		}
		if errors.As(bad, new(*adaptors.InvalidMessageError)) {
			return nil // a Lua error, below
		}
		err := bad
		bad = nil
		return err
	})
	if bad != nil {
		L.RaiseError("%s(%q): %v", fn, name, bad)
	}
	return 0
}

// luaCall is seat.call(adaptor, request [, seconds]): it calls the
// service of a ros_client and returns its response as a table, or nil and
// what went wrong (no answer within the time limit, the service gone).
// The request is a table (a sequence fills the fields in order, names by
// name), or, as eSEAT's callRosService took them, the fields' values in
// order: seat.call("add_two_ints", 1, 2). The call waits at most seconds,
// and never beyond the script's own time limit, which it counts against.
func (m *env) luaCall(L *lua.LState) int {
	name := m.luaAdaptor(L, "seat.call")
	var data any
	var limit time.Duration
	if t, ok := L.Get(2).(*lua.LTable); ok && L.GetTop() <= 3 {
		data, _ = luaMessage(L, 2, t)
		if L.GetTop() == 3 {
			limit = time.Duration(float64(L.CheckNumber(3)) * float64(time.Second))
		}
	} else {
		var fields []any
		for i := 2; i <= L.GetTop(); i++ {
			v, err := luadm.FromLua(L.Get(i))
			if err != nil {
				L.ArgError(i, err.Error())
			}
			fields = append(fields, v)
		}
		data = fields
	}
	if l, ok := data.([]any); ok && len(l) == 0 { // seat.call("/reset", {}) or seat.call("/reset")
		data = map[string]any{} // an empty request: {} in recordings and transcripts
	}
	a := m.adaptor(name)
	c, ok := a.(adaptors.Caller)
	switch {
	case a == nil:
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("seat.call: adaptor %q is not open", name)))
		return 2
	case !ok:
		L.RaiseError("seat.call: %q is not an adaptor that calls a service (a ros_client)", name)
	}
	ctx := L.Context() // cancelled when the script overruns its limit
	if ctx == nil {
		ctx = context.Background()
	}
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	// A recording has the request, as a message to the adaptor, and the
	// answer, which seat replay and seat test --from give back.
	m.step("call:" + name)
	answer := m.wants(kAnswer) // asked with the request: a page opened during the call gets neither
	if m.wants(kOut) {
		m.observe(Record{Kind: RecOut, Op: "call", Source: name, Text: jsonText(data)})
	}
	res, err := c.Call(ctx, data)
	if errors.As(err, new(*adaptors.InvalidMessageError)) {
		L.RaiseError("seat.call(%q): %v", name, err)
	}
	if err != nil {
		if answer { // a failed call: its reason, with the key "error"
			m.observe(Record{Kind: RecAnswer, Source: name, Key: "error", Text: err.Error()})
		}
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("seat.call(%q): %v", name, err)))
		return 2
	}
	if answer {
		m.observe(Record{Kind: RecAnswer, Source: name, Text: jsonText(res)})
	}
	L.Push(luadm.ToLua(L, res))
	return 1
}

// jsonText is v as JSON, for a recording; plain values always are.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return string(b)
}

// luaResult is seat.result(adaptor, value [, status [, goal]]): it ends
// the goal an action server works on, with a result (a table, or nil for
// an empty one) and a status: "succeeded" (the default), "aborted" or
// "canceled"; goal names it by id (event.peer), else it is the goal a
// rule took last. It returns true, or false and the reason when the
// goal's client's side ended it meanwhile (preempted, canceled). A goal
// the behavior ended already, or none, is a Lua error, as is a value
// that does not fit the result.
func (m *env) luaResult(L *lua.LState) int {
	name := m.luaAdaptor(L, "seat.result")
	var data any
	if t, ok := L.Get(2).(*lua.LTable); ok {
		data, _ = luaMessage(L, 2, t)
	} else if L.Get(2) != lua.LNil {
		L.ArgError(2, "a table, or nil for an empty result, expected, got "+L.Get(2).Type().String())
	}
	status := L.OptString(3, "succeeded")
	goal := L.OptString(4, "")
	a := m.adaptor(name)
	f, ok := a.(adaptors.Finisher)
	if !ok {
		L.RaiseError("seat.result: %q is not an adaptor that works on goals (a ros_action_server)", name)
	}
	m.step("result:" + name + ":" + status)
	if err := f.Finish(goal, data, status); err != nil {
		if !errors.Is(err, adaptors.ErrGoalEnded) {
			L.RaiseError("seat.result(%q): %v", name, err)
		}
		m.log.Info("result not sent", zap.String("adaptor", name), zap.String("at", m.where(L)), zap.Error(err))
		L.Push(lua.LFalse)
		L.Push(lua.LString(fmt.Sprintf("seat.result(%q): %v", name, err)))
		return 2
	}
	if m.wants(kOut) {
		m.observe(Record{Kind: RecOut, Op: "result", Source: name, Text: ResultText(data, status)})
	}
	L.Push(lua.LTrue)
	return 1
}

// luaCancel is seat.cancel(adaptor): it asks the server of a
// ros_action_client to cancel the goal in progress, and returns whether
// there was one. The goal's result (usually "preempted") comes as usual.
// A recording has the cancel as the message "cancel" to the adaptor.
func (m *env) luaCancel(L *lua.LState) int {
	name := m.luaAdaptor(L, "seat.cancel")
	a := m.adaptor(name)
	c, ok := a.(adaptors.Canceler)
	if !ok {
		L.RaiseError("seat.cancel: %q is not an adaptor that sends goals (a ros_action_client)", name)
	}
	canceled, err := c.CancelGoal()
	if err != nil {
		L.RaiseError("seat.cancel(%q): %v", name, err)
	}
	if canceled && m.wants(kOut) {
		m.observe(Record{Kind: RecOut, Op: "cancel", Source: name, Text: "cancel"})
	}
	L.Push(lua.LBool(canceled))
	return 1
}

// ResultText is how seat.result reads in recordings and transcripts: the
// result as JSON ({} for none), after its status unless it succeeded
// ("aborted {}").
func ResultText(v any, status string) string {
	if v == nil {
		v = map[string]any{}
	}
	if status == "succeeded" {
		return jsonText(v)
	}
	return status + " " + jsonText(v)
}

// luaMessage is table argument n as plain values and as JSON text; a
// value JSON cannot hold (a table that contains itself, NaN) is an
// argument error.
func luaMessage(L *lua.LState, n int, t *lua.LTable) (data any, text string) {
	data, err := luadm.FromLua(t)
	if err != nil {
		L.ArgError(n, err.Error())
	}
	b, err := json.Marshal(data)
	if err != nil {
		L.ArgError(n, err.Error())
	}
	return data, string(b)
}

// sendMessage sends a message given as plain values: a MessageSender
// (a ROS adaptor, a service request) fills its type from them; anything
// else gets the JSON text.
func sendMessage(to interface{ Send(string) error }, data any, text string) error {
	if ms, ok := to.(adaptors.MessageSender); ok {
		if err := ms.SendMessage(data); !errors.Is(err, errNoCapability) {
			return err
		}
	}
	return to.Send(text)
}

func (m *env) luaReply(L *lua.LState) int {
	if t, ok := L.Get(1).(*lua.LTable); ok && m.cc != nil && m.cc.ev != nil && m.cc.ev.From != nil {
		// A table answers a request with a message (a ROS service's
		// response), or goes to the peer as JSON text.
		data, text := luaMessage(L, 1, t)
		m.observeReply(text)
		err := sendMessage(m.cc.ev.From, data, text)
		if errors.As(err, new(*adaptors.InvalidMessageError)) {
			L.RaiseError("seat.reply: %v", err)
		}
		if err != nil {
			m.log.Warn("reply not sent", zap.String("to", m.cc.ev.From.String()), zap.Error(err))
		}
		return 0
	}
	text := luaText(L, 1)
	if (m.cc == nil || m.cc.ev == nil || m.cc.ev.From == nil) && m.opts.session != nil {
		// In a session, onentry, timers and the like answer its own peer.
		m.send(m.prog.Session, text, luaWhere{m, L})
		return 0
	}
	if m.cc == nil || m.cc.ev == nil || m.cc.ev.From == nil {
		L.RaiseError("seat.reply: the current event has no connection to reply to")
	}
	m.observeReply(text)
	if err := m.cc.ev.From.Send(text); err != nil {
		m.log.Warn("reply not sent", zap.String("to", m.cc.ev.From.String()), zap.Error(err))
	}
	return 0
}

// observeReply traces and records a reply to the current event's peer.
func (m *env) observeReply(text string) {
	if m.wants(kOut) {
		m.observe(Record{Kind: RecOut, Op: "reply", Source: m.cc.ev.Source, Peer: m.cc.ev.From.Peer(), Text: text})
	}
	m.sent = true
}

func luaText(L *lua.LState, n int) string {
	v := L.Get(n)
	if s, ok := toText(v); ok {
		return s
	}
	L.ArgError(n, "string expected, got "+v.Type().String())
	return ""
}

// luaWhere names the Lua line running now, when formatted.
type luaWhere struct {
	m *env
	L *lua.LState
}

func (w luaWhere) String() string { return w.m.where(w.L) }

func (m *env) where(L *lua.LState) string {
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil {
			return fmt.Sprintf("%s:%d", dbg.Source, dbg.CurrentLine)
		}
	}
	return m.prog.File
}

func (m *env) declaredAdaptor(name string) bool {
	for _, d := range m.prog.Adaptors {
		if d.Name == name {
			return true
		}
	}
	return false
}

func (m *seatmlBehavior) luaTransition(fn seatml.TransFunc) lua.LGFunction {
	return func(L *lua.LState) int {
		req := request{ok: true, fn: fn}
		if fn != seatml.TransPop {
			name := L.CheckString(1)
			req.target = m.prog.State(name)
			if req.target == nil {
				var names []string
				for _, st := range m.prog.States {
					names = append(names, st.Name)
				}
				m.log.Error("transition to an unknown state refused; staying"+schema.DidYouMean(name, names, "%q"), zap.String("target", name), zap.String("state", m.stateName()), zap.String("at", m.where(L)))
				L.Push(lua.LFalse)
				return 1
			}
		} else if len(m.stack) == 0 {
			L.Push(lua.LFalse)
			return 1
		}
		if m.inExit {
			m.log.Error("transition requested in onexit refused: a transition is under way", zap.String("at", m.where(L)))
			L.Push(lua.LFalse)
			return 1
		}
		m.req = req
		L.Push(lua.LTrue)
		return 1
	}
}

// luaTimeout is seat.timeout(seconds): <= 0 disarms; a value outside
// schema.TimeoutRange is clamped into it with a logged error (2e10 s would
// overflow a duration and fire at once, 1e-9 s would spin); NaN is refused.
func (m *seatmlBehavior) luaTimeout(L *lua.LState) int {
	secs := float64(L.CheckNumber(1))
	switch {
	case math.IsNaN(secs):
		m.log.Error("seat.timeout(nan) refused: not a number; the timeout is unchanged", zap.String("state", m.stateName()))
		return 0
	case secs > 0 && !schema.TimeoutRange.Contains(secs):
		clamped := schema.TimeoutRange.Clamp(secs)
		m.log.Error(fmt.Sprintf("seat.timeout(%g) is out of range (allowed %s, or <= 0 to disarm); using %g", secs, schema.TimeoutRange, clamped), zap.String("state", m.stateName()))
		secs = clamped
	}
	m.setTimeout(time.Duration(max(secs, 0) * float64(time.Second)))
	return 0
}

// checkMillis raises a Lua argument error for a time in milliseconds that
// is not a number within schema.MillisRange, and returns it as a duration.
func checkMillis(L *lua.LState, arg int, ms float64) time.Duration {
	if math.IsNaN(ms) || !schema.MillisRange.Contains(ms) {
		L.ArgError(arg, fmt.Sprintf("%g ms is out of range: allowed %s", ms, schema.MillisRange))
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func (m *env) luaLog(L *lua.LState) int {
	var level zapcore.Level
	if err := level.Set(L.CheckString(1)); err != nil {
		L.ArgError(1, "level must be debug, info, warn or error")
	}
	m.log.Log(level, luaText(L, 2), zap.String("state", m.stateName()), zap.String("at", m.where(L)))
	return 0
}

func (m *env) luaExit(L *lua.LState) int {
	code := L.OptInt(1, 0)
	m.exitCode, m.endCause = &code, fmt.Sprintf("seat.exit(%d)", code)
	return 0
}

// widgets are a SEATML behavior's widgets: their values, by ref, which
// pages set (updateWidget) and the seat functions read and set, and the
// observers that show them.
type widgets struct {
	byRef  map[string]*seatml.Widget
	values map[string]string
	obs    *binding
}

func newWidgets(byRef map[string]*seatml.Widget, obs *binding) widgets {
	w := widgets{byRef: byRef, values: map[string]string{}, obs: obs}
	for ref, wd := range byRef {
		w.values[ref] = wd.Initial
	}
	return w
}

// widget is the widget a seat function's first argument names, of kind.
func (m *widgets) widget(L *lua.LState, kind string) *seatml.Widget {
	ref := L.CheckString(1)
	w := m.byRef[ref]
	if w == nil {
		L.RaiseError("unknown widget %q (widgets are named \"state:id\")", ref)
	}
	if w.Kind != kind {
		L.RaiseError("widget %q is a %s, not a%s %s", ref, w.Kind, map[bool]string{true: "n", false: ""}[kind == "input"], kind)
	}
	return w
}

func (m *widgets) get(kind string) lua.LGFunction {
	return func(L *lua.LState) int {
		w := m.widget(L, kind)
		L.Push(lua.LString(m.values[w.Ref]))
		return 1
	}
}

func (m *widgets) set(kind, op string) lua.LGFunction {
	return func(L *lua.LState) int {
		w := m.widget(L, kind)
		var v string
		if op != "clear" {
			v = luaText(L, 2)
		}
		shown := op
		switch op {
		case "set":
			m.values[w.Ref] = v
		case "append":
			nv := m.values[w.Ref] + v
			if len(nv) > maxWidgetText {
				// The pages get the kept text whole, so that theirs and a
				// new page's are the same.
				nv = keepTail(nv, keptWidgetText)
				shown, v = "set", nv
			}
			m.values[w.Ref] = nv
		case "clear":
			m.values[w.Ref] = ""
		}
		m.obs.notifyGUI(w.Ref, shown, v)
		return 0
	}
}

// A text widget appended to for days keeps its last part: past
// maxWidgetText bytes it is cut to at most keptWidgetText, from a line's
// start where one is near (docs/seatml.md §11).
const (
	maxWidgetText  = 64 << 10
	keptWidgetText = 48 << 10
)

// keepTail returns the end of s, at most n bytes, starting after a newline
// in its first quarter if there is one, else at a character's start.
func keepTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	t := s[len(s)-n:]
	if i := strings.IndexByte(t[:n/4], '\n'); i >= 0 {
		return t[i+1:]
	}
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	return t
}

// call runs a chunk under the time limit with the event globals set, and
// returns its result (§9.2). Its error is a *luadm.Error.
func (m *env) call(ch *luadm.Code, cc *callCtx) (lua.LValue, error) {
	m.setGlobals(cc)
	ret, err := m.dm.Eval(ch)
	if err != nil {
		m.noteStop(err)
		return lua.LNil, err
	}
	if r := m.result(); r != lua.LNil {
		ret = r
	}
	return ret, nil
}

// callFunc calls a Lua callback (onLoad and the like), with arguments.
// Its error, a *luadm.Error, names it.
func (m *env) callFunc(fn *lua.LFunction, name string, cc *callCtx, args ...lua.LValue) error {
	pos := schema.Pos{File: m.prog.File}
	if fn.Proto != nil {
		pos.File, pos.Line = fn.Proto.SourceName, fn.Proto.LineDefined
	}
	m.setGlobals(cc)
	if err := m.dm.Call(fn, luadm.NewChunk("", pos, false, 0), 0, args...); err != nil {
		m.noteStop(err)
		se := err.(*luadm.Error)
		se.Msg = name + ": " + se.Msg
		return se
	}
	return nil
}

// noteStop notes a script that seat's stopping cut short: the event is
// not handled (an adaptor that acknowledges does not), and observers
// hear of it.
func (m *env) noteStop(err error) {
	if se, ok := err.(*luadm.Error); ok && se.Stopped == luadm.StoppedAborted {
		m.cutShort = true
		if m.wants(kCut) {
			m.observe(Record{Kind: RecCut})
		}
	}
}
