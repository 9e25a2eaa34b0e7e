package seatml

import (
	"sort"
	"strings"
	"time"

	"github.com/seatml/seat/schema"
)

// Trigger is what makes an Edge happen.
type Trigger string

// Triggers of edges.
const (
	OnKey        Trigger = "key"          // a keyed rule
	OnData       Trigger = "data"         // a rule without keys: any event of its source
	OnTimeout    Trigger = "timeout"      // an ontimeout
	OnEntry      Trigger = "onentry"      // an onentry list moves on at once
	OnExec       Trigger = "onexec"       // an onexec tick
	OnConnect    Trigger = "onconnect"    // a peer connects
	OnDisconnect Trigger = "ondisconnect" // a peer leaves
	OnWidget     Trigger = "widget"       // a page's button or input
	// OnEvent is an SCXML <transition>: Keys are its event descriptors,
	// none for an eventless transition.
	OnEvent Trigger = "event"
)

// Edge is a transition the behavior file declares: a <statetransition>
// in a rule, a timer, an onentry, a connection handler or a widget. A
// transition a script makes (seat.transition) is not known before it runs
// and is not an edge.
type Edge struct {
	// From is the state the edge leaves; "" for general's, which apply in
	// every state.
	From string
	// To is the target state; "" for a pop, which returns to the state
	// below on the stack.
	To   string
	Push bool
	Pop  bool
	On   Trigger
	// Source is the rule's or handler's adaptor ("" for a rule of any
	// source).
	Source string
	// Keys are a keyed rule's keys as written; Delay an ontimeout's; Widget
	// a button's label or an input's id.
	Keys   []string
	Delay  time.Duration
	Widget string
	// Cond is the rule's <cond> expression, if any.
	Cond string
	// Pos is where the rule, handler or widget is written.
	Pos schema.Pos
}

// Edges lists the transitions the file declares: general's first, then
// each state's in the order of the file.
func (p *Program) Edges() []Edge {
	if p.Document != nil {
		return p.scxmlEdges()
	}
	var out []Edge
	add := func(from string, e Edge, list []Action) {
		for _, a := range list {
			if a.Kind != ActTransition {
				continue
			}
			e.From = from
			e.Push, e.Pop = a.Fn == TransPush, a.Fn == TransPop
			e.To = ""
			if a.Target != nil {
				e.To = a.Target.Name
			}
			if e.Pos == (schema.Pos{}) {
				e.Pos = a.Pos
			}
			out = append(out, e)
		}
	}
	scope := func(from string, sc *Scope) {
		if sc.Timeout != nil {
			add(from, Edge{On: OnTimeout, Delay: sc.Timeout.After}, sc.Timeout.Actions)
		}
		add(from, Edge{On: OnExec}, sc.OnExec)
		for _, name := range sortedKeys(sc.OnConnect) {
			add(from, Edge{On: OnConnect, Source: name}, sc.OnConnect[name])
		}
		for _, name := range sortedKeys(sc.OnDisconnect) {
			add(from, Edge{On: OnDisconnect, Source: name}, sc.OnDisconnect[name])
		}
		rules := append(append([]*Rule(nil), sc.Rules...), sc.DataRules...)
		sort.SliceStable(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
		for _, r := range rules {
			e := Edge{On: OnKey, Source: r.Source, Keys: r.Keys, Pos: r.Pos}
			if len(r.Keys) == 0 {
				e.On = OnData
			}
			if r.Cond != nil {
				e.Cond = strings.TrimSpace(r.Cond.Src)
			}
			add(from, e, r.Actions)
		}
	}
	scope("", p.General)
	for _, s := range p.States {
		add(s.Name, Edge{On: OnEntry}, s.OnEntry)
		scope(s.Name, &s.Scope)
		for _, w := range s.Widgets {
			add(s.Name, Edge{On: OnWidget, Widget: w.ID, Pos: w.Pos}, w.Actions)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
