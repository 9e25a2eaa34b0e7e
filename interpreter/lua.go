package interpreter

// The Lua world: running a chunk or a callback in the machine's datamodel
// with the event globals set, and the "event" value scripts read.

import (
	"fmt"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/seatml/seat/interpreter/luadm"
)

// newSandbox returns the Lua sandbox of luadm. eSEAT's self, a table for
// the behavior's own values as eSEAT scripts keep them on their self
// (self.count = 0; docs/porting.md), is made on first use (installGlobals).
func newSandbox(memory uint64) *lua.LState {
	return luadm.Sandbox(memory)
}

// toText converts a script result for sending: strings as they are,
// numbers as Lua prints them, booleans as true or false.
func toText(v lua.LValue) (string, bool) {
	switch v.Type() {
	case lua.LTString, lua.LTNumber:
		return v.String(), true
	case lua.LTBool:
		if v == lua.LTrue {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// The event globals (§9.2) are not stored in the globals table: its
// metatable answers them from the current call context, so a call costs no
// table writes and the event value is built only when a script reads it.
// An assignment to one of them holds until the next call, as it did when
// each call set them.
const (
	gEvent = iota
	gRtcInData
	gWebInData
	gRtcResult
	numEventGlobals
)

var eventGlobals = [numEventGlobals]string{"event", "rtc_in_data", "web_in_data", "rtc_result"}

func eventGlobal(name string) int {
	for i, n := range eventGlobals {
		if n == name {
			return i
		}
	}
	return -1
}

// setGlobals makes the event globals show cc for the next call.
func (m *luaWorld) setGlobals(cc *callCtx) {
	m.luaCC = cc
	m.luaAssigned = [numEventGlobals]lua.LValue{}
}

// eventGlobalValue is what a script reads for event global i.
func (m *luaWorld) eventGlobalValue(i int) lua.LValue {
	if v := m.luaAssigned[i]; v != nil {
		return v
	}
	cc := m.luaCC
	if cc == nil || i == gRtcResult {
		return lua.LNil
	}
	if i == gEvent {
		return m.eventTable(cc)
	}
	if cc.dataLV == nil { // converted once per event, not per chunk
		switch {
		case cc.kind == ctxEvent && cc.ev.Data != nil:
			m.eventTable(cc) // the same table as event.data
			cc.dataLV = cc.data.message(m.L)
		case cc.kind == ctxEvent:
			cc.dataLV = lua.LString(cc.ev.Text)
		case cc.kind == ctxPeriodic:
			cc.dataLV = lua.LString("")
		default:
			cc.dataLV = lua.LNil
		}
	}
	return cc.dataLV
}

// installGlobals gives the globals table the metatable that answers the
// event globals, py and self (luadm.ProtectGlobals: protected, the
// libraries opened on first use). The hooks are closures, not method
// values, which would add a call to each read of an event global.
func (m *luaWorld) installGlobals() {
	luadm.ProtectGlobals(m.L, luadm.Globals{
		Get: func(L *lua.LState, name string) (lua.LValue, bool) {
			if i := eventGlobal(name); i >= 0 {
				return m.eventGlobalValue(i), true
			}
			// Built on first use: most behaviors never port Python, and
			// most never keep values on eSEAT's self.
			var t *lua.LTable
			switch name {
			case "py":
				t = luadm.PyLib(L)
			case "self":
				if m.selfMade {
					return nil, false
				}
				t = L.NewTable()
				m.selfMade = true
			default:
				return nil, false
			}
			L.G.Global.RawSetString(name, t)
			return t, true
		},
		// An event global's assignment holds until the next call; any
		// other is noted for explanations and stored.
		Set: func(L *lua.LState, name string, v lua.LValue) bool {
			if i := eventGlobal(name); i >= 0 {
				m.luaAssigned[i] = v
				return true
			}
			m.noteGlobalSet(L, name, v == lua.LNil)
			return false
		},
	})
}

// result is the value of rtc_result after a call, nil when unset.
func (m *luaWorld) result() lua.LValue {
	if v := m.luaAssigned[gRtcResult]; v != nil {
		return v
	}
	return lua.LNil
}

// eventData is what the Lua "event" value shows of one event or list. It
// is read-only; its fields are read on access through a shared metatable,
// so an event costs two small allocations whether or not a script looks.
type eventData struct {
	source, text  string
	peer          string // the connection the event came from, if any
	topic         string // the MQTT topic it was published on, if any
	hasText       bool
	retained      bool // an MQTT message the broker kept
	time          float64
	key           string
	caps          []string
	capsTable     *lua.LTable
	lookup        string // the text rules matched: up to the first comma
	hasLookup     bool
	confidence    float64 // the number after the first comma
	hasConfidence bool
	msg           any        // a structured message (adaptors.Event.Data)
	msgLV         lua.LValue // msg as a Lua table, made on first read
}

// message is the event's structured message as a Lua value (event.data,
// rtc_in_data), converted once: nil for a line of text.
func (d *eventData) message(L *lua.LState) lua.LValue {
	if d.msgLV == nil {
		d.msgLV = luadm.ToLua(L, d.msg)
	}
	return d.msgLV
}

const eventType = "seat.event"

// installEventType defines the metatable of "event" values.
func (m *luaWorld) installEventType() {
	L := m.L
	mt := L.NewTypeMetatable(eventType)
	L.SetField(mt, "__index", L.NewFunction(func(L *lua.LState) int {
		d := L.CheckUserData(1).Value.(*eventData)
		switch L.CheckString(2) {
		case "source":
			L.Push(lua.LString(d.source))
		case "text":
			pushOptional(L, d.text, d.hasText)
		case "time":
			L.Push(lua.LNumber(d.time))
		case "topic":
			pushOptional(L, d.topic, d.topic != "")
		case "retained":
			L.Push(lua.LBool(d.retained))
		case "data":
			L.Push(d.message(L))
		case "peer":
			pushOptional(L, d.peer, d.peer != "")
		case "key":
			pushOptional(L, d.key, d.key != "")
		case "lookup":
			pushOptional(L, d.lookup, d.hasLookup)
		case "confidence":
			if d.hasConfidence {
				L.Push(lua.LNumber(d.confidence))
			} else {
				L.Push(lua.LNil)
			}
		case "captures":
			if d.capsTable == nil {
				d.capsTable = L.CreateTable(max(len(d.caps)-1, 0), 0)
				for i := 1; i < len(d.caps); i++ {
					d.capsTable.RawSetInt(i, lua.LString(d.caps[i]))
				}
			}
			L.Push(d.capsTable)
		default:
			L.Push(lua.LNil)
		}
		return 1
	}))
	L.SetField(mt, "__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("event is read-only; copy what you need into your own variables")
		return 0
	}))
	L.SetField(mt, "__tostring", L.NewFunction(func(L *lua.LState) int {
		d := L.CheckUserData(1).Value.(*eventData)
		L.Push(lua.LString(fmt.Sprintf("event{source=%q, text=%q, key=%q}", d.source, d.text, d.key)))
		return 1
	}))
}

// pushOptional pushes s, or nil when it is absent.
func pushOptional(L *lua.LState, s string, present bool) {
	if present {
		L.Push(lua.LString(s))
	} else {
		L.Push(lua.LNil)
	}
}

// eventTable returns the Lua "event" value of a call context, building it
// on first use.
func (m *luaWorld) eventTable(cc *callCtx) lua.LValue {
	if cc.table != nil {
		return cc.table
	}
	d := &eventData{key: cc.key, caps: cc.caps}
	switch cc.kind {
	case ctxEvent:
		d.source, d.text, d.hasText = cc.ev.Source, cc.ev.Text, true
		d.time = float64(cc.ev.Time.UnixNano()) / 1e9
		if cc.ev.From != nil {
			d.peer = cc.ev.From.Peer()
		}
		d.topic, d.retained, d.msg = cc.ev.Topic, cc.ev.Retained, cc.ev.Data
		// A speech result "3,0.91": the lookup text and the confidence. A
		// widget's text is not cut.
		d.lookup, d.hasLookup = cc.lookup, true
		if cc.ev.Key == "" && len(d.lookup) < len(cc.ev.Text) { // cut at a comma
			if f, err := strconv.ParseFloat(strings.TrimSpace(cc.ev.Text[len(d.lookup)+1:]), 64); err == nil {
				d.confidence, d.hasConfidence = f, true
			}
		}
	case ctxPeriodic:
		d.hasText = true
		d.time = float64(m.clock.Now().UnixNano()) / 1e9
	default:
		d.time = float64(m.clock.Now().UnixNano()) / 1e9
	}
	ud := m.L.NewUserData()
	ud.Value = d
	ud.Metatable = m.L.GetTypeMetatable(eventType)
	cc.data, cc.table = d, ud
	return ud
}

// setEventKey records the word that fired and its submatches. For
// device-layer events it is the event's own key (a memory path or
// "done:<motion>"): the word may be a pattern, which tells a script little.
func (m *luaWorld) setEventKey(cc *callCtx, key string, caps []string) {
	if cc.ev != nil && cc.ev.Key != "" {
		key = cc.ev.Key
	}
	cc.key, cc.caps = key, caps
	if cc.data != nil {
		cc.data.key, cc.data.caps, cc.data.capsTable = key, caps, nil
	}
}
