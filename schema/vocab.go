package schema

import (
	"sort"
	"strconv"
)

// Kind says how an attribute's value is checked.
type Kind int

// Value kinds.
const (
	Text         Kind = iota // any text
	PosFloat                 // a number > 0
	PosInt                   // an integer > 0
	NonNegInt                // an integer >= 0
	Int                      // any integer
	Port                     // an integer from 0 to 65535
	Enum                     // one of AttrSpec.Enum
	Color                    // a CSS colour name or #rgb / #rrggbb
	Identifier               // a Lua identifier
	TopicFilters             // MQTT topic filters, comma-separated
	TopicName                // an MQTT topic to publish to (a "+" level is filled by a topic session)
)

// AttrSpec describes one attribute.
type AttrSpec struct {
	Required bool
	Kind     Kind
	Enum     []string
	// Alias names the canonical attribute this one stands for; using it is
	// a warning that suggests the canonical name.
	Alias string
	// Ignored, when set, accepts the attribute with this warning and no
	// effect (eSEAT constructs seat does not run).
	Ignored string
	// Range, when set, bounds a number (both ends included).
	Range *Range
}

// Range is the allowed span of a numeric attribute, with its unit for
// messages.
type Range struct {
	Min, Max float64
	Unit     string
}

// Ranges of the numbers seat runs on: outside them a timer would spin or
// overflow (a duration is at most 292 years of nanoseconds) or a motion
// would never end.
var (
	// TimeoutRange bounds ontimeout timeout= and seat.timeout: 1 ms (the
	// timer resolution) to 30 days.
	TimeoutRange = Range{Min: 0.001, Max: 30 * 24 * 3600, Unit: "seconds"}
	// RateRange bounds general rate=: one tick in 1000 s to 1000 a second.
	RateRange = Range{Min: 0.001, Max: 1000, Unit: "Hz"}
	// MillisRange bounds motion durations, start offsets and timeouts, and
	// the times given to the device functions: up to a day.
	MillisRange = Range{Min: 0, Max: 24 * 3600 * 1000, Unit: "ms"}
	// MultiplierRange bounds a motion's speed multiplier.
	MultiplierRange = Range{Min: 0.001, Max: 1000, Unit: ""}
)

// Contains reports whether v is within r.
func (r Range) Contains(v float64) bool { return v >= r.Min && v <= r.Max }

// Clamp returns v moved into r.
func (r Range) Clamp(v float64) float64 { return min(max(v, r.Min), r.Max) }

// String formats r for messages: "0.001 to 2592000 seconds".
func (r Range) String() string {
	s := strconv.FormatFloat(r.Min, 'f', -1, 64) + " to " + strconv.FormatFloat(r.Max, 'f', -1, 64)
	if r.Unit != "" {
		s += " " + r.Unit
	}
	return s
}

// ElementSpec describes one element in one context.
type ElementSpec struct {
	Attrs map[string]AttrSpec
	// Children lists the allowed child elements, in addition to the
	// action elements when Actions is set.
	Children []string
	Actions  bool
	// Ignored, when set, accepts the element with this warning; its
	// attributes and children are not checked.
	Ignored string
	// Once lists children that may appear at most once.
	Once []string
}

// ActionNames lists the action elements (SEATML §6).
var ActionNames = []string{"message", "statetransition", "log", "shell", "script", "motion", "raise"}

// WidgetNames lists the GUI widgets seat shows (SEATML §11).
var WidgetNames = []string{"label", "brk", "space", "button", "input", "text"}

// TkWidgetNames lists eSEAT's Tk-only widgets, accepted with a warning.
var TkWidgetNames = []string{"combobox", "checkbutton", "listbox", "radiobutton", "scale", "frame", "labelframe"}

var widgetCommon = map[string]AttrSpec{
	"frame": {Ignored: "attribute \"frame\" is Tk-only in eSEAT; ignored"},
	"args":  {Ignored: "attribute \"args\" is Tk-only in eSEAT; ignored"},
}

func with(base map[string]AttrSpec, more map[string]AttrSpec) map[string]AttrSpec {
	out := make(map[string]AttrSpec, len(base)+len(more))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

var (
	sendto   = AttrSpec{}
	hostSend = AttrSpec{Alias: "sendto"}
	colspan  = AttrSpec{Kind: PosInt}
	color    = AttrSpec{Kind: Color}
)

// Elements maps an element name to its spec. A key "parent>name" overrides
// the plain name in that parent.
var Elements = map[string]ElementSpec{
	"seatml": {Children: []string{"general", "state", "parallel", "final"}},
	"general": {
		Attrs: map[string]AttrSpec{
			"name":    {Required: true},
			"rate":    {Kind: PosFloat, Range: &RateRange},
			"devices": {},
			"scripts": {},
			// Julius results' hypotheses scored under it are skipped (docs/speech.md).
			"scorelimit": {},
			// The behavior's ROS node gets a suffix of its own (docs/ros.md).
			"anonymous": {Kind: Enum, Enum: []string{"1", "0", "true", "false"}},
		},
		Children: []string{"adaptor", "var", "script", "onexec", "ontimeout", "onconnect", "ondisconnect", "rule", "onactivated", "ondeactivated"},
		Once:     []string{"onexec", "ontimeout"},
	},
	"state": {
		Attrs: map[string]AttrSpec{"name": {Required: true}, "initial": {}},
		Children: append([]string{"onentry", "onexit", "onexec", "ontimeout", "onconnect", "ondisconnect", "rule", "onactivated", "ondeactivated",
			"state", "parallel", "history", "final"},
			append(append([]string{}, WidgetNames...), TkWidgetNames...)...),
		Once: []string{"onentry", "onexit", "onexec", "ontimeout"},
	},
	// A parallel state's regions (its child states) are all active at
	// once; every region handles each event.
	"parallel": {
		Attrs:    map[string]AttrSpec{"name": {Required: true}},
		Children: []string{"onentry", "onexit", "onexec", "ontimeout", "onconnect", "ondisconnect", "rule", "state", "parallel", "history"},
		Once:     []string{"onentry", "onexit", "onexec", "ontimeout"},
	},
	// A history state remembers its parent's active children when the
	// parent is exited; a transition to it restores them.
	"history": {Attrs: map[string]AttrSpec{"name": {Required: true}, "type": {Kind: Enum, Enum: []string{"shallow", "deep"}}}},
	// A final state: at the top level it ends the behavior; inside a
	// state, its parent is done.
	"final": {
		Attrs:    map[string]AttrSpec{"name": {Required: true}},
		Children: []string{"onentry", "onexit"},
		Once:     []string{"onentry", "onexit"},
	},
	"adaptor": {Attrs: map[string]AttrSpec{"name": {Required: true}, "type": {Required: true}}},
	"var": {Attrs: map[string]AttrSpec{
		"name":  {Required: true, Kind: Identifier},
		"value": {},
	}},
	"general>script": {Attrs: map[string]AttrSpec{
		"execfile": {},
		"import":   {Ignored: "attribute \"import\" loads Python modules in eSEAT; ignored"},
	}},
	"onentry":       {Actions: true},
	"onexit":        {Actions: true},
	"onexec":        {Actions: true},
	"ontimeout":     {Actions: true, Attrs: map[string]AttrSpec{"timeout": {Required: true, Kind: PosFloat, Range: &TimeoutRange}}},
	"onconnect":     {Actions: true, Attrs: map[string]AttrSpec{"source": {Required: true}}},
	"ondisconnect":  {Actions: true, Attrs: map[string]AttrSpec{"source": {Required: true}}},
	"onactivated":   {Ignored: "<onactivated> is an OpenRTM callback in eSEAT; ignored"},
	"ondeactivated": {Ignored: "<ondeactivated> is an OpenRTM callback in eSEAT; ignored"},

	"rule": {
		Attrs:    map[string]AttrSpec{"source": {}, "file": {}},
		Children: []string{"key", "cond"},
		Actions:  true,
		Once:     []string{"cond"},
	},
	"key":  {Attrs: map[string]AttrSpec{"source": {}}},
	"cond": {Attrs: map[string]AttrSpec{"execfile": {}}},

	"message": {Attrs: map[string]AttrSpec{
		"sendto": {Required: true}, "host": hostSend, "input": {}, "encode": {},
		"topic": {Kind: TopicName}, "retain": {Kind: Enum, Enum: []string{"true", "false"}},
	}},
	"statetransition": {Attrs: map[string]AttrSpec{"func": {Kind: Enum, Enum: []string{"push", "pop"}}}},
	// <raise event="name"/> puts an internal event on the queue: rules of
	// source "event" handle it once the current event is done (§14).
	"raise":  {Attrs: map[string]AttrSpec{"event": {Required: true}}},
	"log":    {Attrs: map[string]AttrSpec{"level": {Kind: Enum, Enum: []string{"debug", "info", "warn", "error"}}}},
	"shell":  {Attrs: map[string]AttrSpec{"sendto": sendto, "host": hostSend}},
	"script": {Attrs: map[string]AttrSpec{"execfile": {}, "sendto": sendto, "host": hostSend}},
	"motion": {Attrs: map[string]AttrSpec{
		"script":     {Required: true},
		"name":       {},
		"priority":   {Kind: Int},
		"duration":   {Kind: NonNegInt, Range: &MillisRange},
		"multiplier": {Kind: PosFloat, Range: &MultiplierRange},
		"start":      {Kind: NonNegInt, Range: &MillisRange},
		"timeout":    {Kind: NonNegInt, Range: &MillisRange},
		"stop":       {},
	}},

	"label": {Attrs: with(widgetCommon, map[string]AttrSpec{
		"text": {}, "color": color, "bg_color": color, "colspan": colspan, "rowspan": colspan,
	})},
	"brk":   {Attrs: widgetCommon},
	"space": {Attrs: with(widgetCommon, map[string]AttrSpec{"length": {Kind: PosInt}})},
	"button": {Actions: true, Attrs: with(widgetCommon, map[string]AttrSpec{
		"label": {Required: true}, "color": color, "bg_color": color, "width": {Kind: PosInt}, "colspan": colspan, "rowspan": colspan,
	})},
	"input": {Actions: true, Attrs: with(widgetCommon, map[string]AttrSpec{
		"id": {Required: true}, "width": {Kind: PosInt}, "colspan": colspan, "rowspan": colspan,
		"value": {}, // the first value when the element has no text
	})},
	"text": {Actions: true, Attrs: with(widgetCommon, map[string]AttrSpec{
		"id": {Required: true}, "width": {Kind: PosInt}, "height": {Kind: PosInt}, "colspan": colspan, "rowspan": colspan,
	})},
}

func init() {
	for _, w := range TkWidgetNames {
		Elements[w] = ElementSpec{Ignored: "widget <" + w + "> is Tk-only in eSEAT and is not shown by seat; ignored"}
	}
}

// Lookup returns the spec of element name inside parent.
func Lookup(parent, name string) (ElementSpec, bool) {
	if s, ok := Elements[parent+">"+name]; ok {
		return s, true
	}
	s, ok := Elements[name]
	return s, ok
}

// AdaptorType describes an adaptor type's attributes (SEATML §10).
type AdaptorType struct {
	Attrs map[string]AttrSpec
	// Max is how many adaptors of this type a behavior may declare (0: any).
	Max int
	// Ignored, when set, means seat does not run this type: the adaptor
	// loads with this warning, unopened, its attributes unchecked.
	Ignored bool
}

// AdaptorKinds are the adaptor types a check knows: seat's are
// adaptors.Kinds, where each transport's package describes its own.
type AdaptorKinds interface {
	Lookup(typ string) (AdaptorType, bool)
	// Names are the types seat runs, sorted.
	Names() []string
}

func keys(m map[string]AttrSpec) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		if v.Ignored == "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
