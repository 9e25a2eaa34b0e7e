package scxml

import (
	"slices"
	"strings"

	"github.com/seatml/seat/schema"
)

// Namespace is SCXML's XML namespace.
const Namespace = "http://www.w3.org/2005/07/scxml"

// element is what an SCXML element may have: its attributes, the elements
// it may hold, and the rules on its attributes.
type element struct {
	attrs    []string
	children []string // nil: executable content
	anyXML   bool     // its children are data, not SCXML (<content>, <data>)
	required []string // attributes it must have
	oneOf    []string // attributes of which it must have exactly one
	pairs    [][2]string
}

var executable = []string{"raise", "if", "foreach", "log", "assign", "script", "send", "cancel"}

// none is no children at all.
var none = []string{}

// vocabulary is SCXML 1.0's elements, as seat reads them.
var vocabulary = map[string]element{
	"scxml":      {attrs: []string{"initial", "name", "version", "datamodel", "binding", "exmode"}, children: []string{"state", "parallel", "final", "datamodel", "script"}},
	"state":      {attrs: []string{"id", "initial"}, children: []string{"onentry", "onexit", "transition", "initial", "state", "parallel", "final", "history", "datamodel", "invoke"}},
	"parallel":   {attrs: []string{"id"}, children: []string{"onentry", "onexit", "transition", "state", "parallel", "history", "datamodel", "invoke"}},
	"final":      {attrs: []string{"id"}, children: []string{"onentry", "onexit", "donedata"}},
	"initial":    {children: []string{"transition"}},
	"history":    {attrs: []string{"id", "type"}, children: []string{"transition"}},
	"transition": {attrs: []string{"event", "cond", "target", "type"}},
	"onentry":    {},
	"onexit":     {},
	"finalize":   {},
	"raise":      {attrs: []string{"event"}, children: none, required: []string{"event"}},
	"if":         {attrs: []string{"cond"}, children: append([]string{"elseif", "else"}, executable...), required: []string{"cond"}},
	"elseif":     {attrs: []string{"cond"}, children: none, required: []string{"cond"}},
	"else":       {children: none},
	"foreach":    {attrs: []string{"array", "item", "index"}, required: []string{"array", "item"}},
	"log":        {attrs: []string{"label", "expr"}, children: none},
	"datamodel":  {children: []string{"data"}},
	"data":       {attrs: []string{"id", "src", "expr"}, anyXML: true, required: []string{"id"}},
	"assign":     {attrs: []string{"location", "expr"}, anyXML: true, required: []string{"location"}},
	"donedata":   {children: []string{"content", "param"}},
	"content":    {attrs: []string{"expr"}, anyXML: true},
	"param":      {attrs: []string{"name", "expr", "location"}, children: none, required: []string{"name"}, oneOf: []string{"expr", "location"}},
	"script":     {attrs: []string{"src"}, children: none},
	"send": {attrs: []string{"event", "eventexpr", "target", "targetexpr", "type", "typeexpr", "id", "idlocation", "delay", "delayexpr", "namelist"},
		children: []string{"param", "content"},
		pairs:    [][2]string{{"event", "eventexpr"}, {"target", "targetexpr"}, {"type", "typeexpr"}, {"id", "idlocation"}, {"delay", "delayexpr"}}},
	"cancel": {attrs: []string{"sendid", "sendidexpr"}, children: none, oneOf: []string{"sendid", "sendidexpr"}},
	"invoke": {attrs: []string{"type", "typeexpr", "src", "srcexpr", "id", "idlocation", "namelist", "autoforward"},
		children: []string{"param", "finalize", "content"},
		pairs:    [][2]string{{"type", "typeexpr"}, {"src", "srcexpr"}, {"id", "idlocation"}}},
}

// enumerations are the attributes whose values are a closed set.
var enumerations = map[[2]string][]string{
	{"transition", "type"}:    {"external", "internal"},
	{"history", "type"}:       {"shallow", "deep"},
	{"scxml", "binding"}:      {"early", "late"},
	{"invoke", "autoforward"}: {"true", "false"},
	{"scxml", "version"}:      {"1.0"},
}

// foreign reports whether n belongs to another vocabulary (another
// namespace): SCXML leaves such elements to their own tools.
func foreign(n *schema.Node) bool { return n.Space != "" && n.Space != Namespace }

// validate checks n and what it holds against the vocabulary: every
// element and attribute known (a misspelt one with a suggestion), in a
// place it may be, with the attributes it needs. It reports whether n's
// own element and attributes are sound, and removes from n's children
// those that are not and those of other namespaces, so that compiling
// the rest finds the document's other errors without repeating these.
func (c *compiler) validate(n *schema.Node, parent *schema.Node) bool {
	before := c.errorCount()
	el, ok := vocabulary[n.Name]
	if !ok {
		names := make([]string, 0, len(vocabulary))
		for k := range vocabulary {
			names = append(names, k)
		}
		if parent != nil {
			names = allowed(vocabulary[parent.Name])
		}
		hint := schema.DidYouMean(n.Name, names, "<%s>")
		if n.Name == "adaptor" {
			hint = "; seat's adaptors are declared with <seat:adaptor>, in seat's namespace (xmlns:seat=\"https://github.com/seatml/seat\")"
		}
		c.errorf(n.Pos, "<%s> is not an SCXML element%s", n.Name, hint)
		return false
	}
	if parent != nil {
		if may := allowed(vocabulary[parent.Name]); !slices.Contains(may, n.Name) {
			c.errorf(n.Pos, "<%s> cannot be in <%s>%s", n.Name, parent.Name, mayHold(parent.Name, may))
			return false
		}
	}
	for _, a := range n.Attrs {
		if a.Space != "" {
			continue // another vocabulary's (xml:lang, a tool's own)
		}
		if !slices.Contains(el.attrs, a.Name) {
			c.errorf(a.Pos, "<%s> has no attribute %q%s", n.Name, a.Name, schema.DidYouMean(a.Name, el.attrs, "%q"))
			continue
		}
		if values, ok := enumerations[[2]string{n.Name, a.Name}]; ok && !slices.Contains(values, a.Value) {
			c.errorf(a.ValuePos, "%s=%q: it is one of %s", a.Name, a.Value, quoteAll(values))
		}
		c.validateValue(n, a)
	}
	for _, r := range el.required {
		if _, ok := n.Attr(r); !ok {
			c.errorf(n.Pos, "<%s> needs the %s attribute", n.Name, r)
		}
	}
	if len(el.oneOf) > 0 {
		if count := c.present(n, el.oneOf); count != 1 {
			c.errorf(n.Pos, "<%s> needs exactly one of %s", n.Name, strings.Join(el.oneOf, ", "))
		}
	}
	for _, p := range el.pairs {
		if c.present(n, p[:]) > 1 {
			a, _ := n.Attr(p[1])
			c.errorf(a.Pos, "<%s> has both %s and %s: give one", n.Name, p[0], p[1])
		}
	}
	sound := c.errorCount() == before
	if !el.anyXML {
		n.Children = slices.DeleteFunc(n.Children, func(ch *schema.Node) bool { return foreign(ch) || !c.validate(ch, n) })
	}
	c.validateContent(n)
	return sound
}

func (c *compiler) errorCount() int {
	k := 0
	for _, d := range c.diags {
		if d.Severity == schema.Error {
			k++
		}
	}
	return k
}

// validateValue checks the values that have a form of their own: ids,
// event names, literal delays.
func (c *compiler) validateValue(n *schema.Node, a schema.Attr) {
	switch {
	case a.Name == "id" && (n.Name == "state" || n.Name == "parallel" || n.Name == "final" || n.Name == "history"):
		if a.Value == "" || strings.ContainsAny(a.Value, " \t\r\n") {
			c.errorf(a.ValuePos, "state id %q: an id is one word, without spaces (a target names it)", a.Value)
		}
	case a.Name == "initial" || a.Name == "target":
		if strings.TrimSpace(a.Value) == "" {
			c.errorf(a.ValuePos, "%s is empty: name a state, or leave the attribute out", a.Name)
		}
	case a.Name == "event" && n.Name == "transition":
		if strings.TrimSpace(a.Value) == "" {
			c.errorf(a.ValuePos, "event is empty: leave it out for an eventless transition")
		}
	case a.Name == "event" && (n.Name == "raise" || n.Name == "send"):
		if a.Value == "" || strings.ContainsAny(a.Value, " \t\r\n") {
			c.errorf(a.ValuePos, "event name %q: an event name is one word, without spaces (dots separate its parts: 挨拶.朝)", a.Value)
		}
	case a.Name == "delay" && n.Name == "send":
		if _, err := parseDelay(a.Value); err != nil {
			c.errorf(a.ValuePos, "%v", err)
		}
	}
}

// validateContent checks the rules that involve an element's children.
func (c *compiler) validateContent(n *schema.Node) {
	count := func(name string) int {
		k := 0
		for _, ch := range n.Children {
			if ch.Name == name && !foreign(ch) {
				k++
			}
		}
		return k
	}
	hasText := strings.TrimSpace(n.Text) != ""
	_, hasExpr := n.Attr("expr")
	_, hasSrc := n.Attr("src")
	states := count("state") + count("parallel") + count("final")
	switch n.Name {
	case "scxml":
		if states == 0 {
			c.warnf(n.Pos, "the document has no state: it never ends")
		}
	case "state":
		if a, ok := n.Attr("initial"); ok && states == 0 {
			c.errorf(a.Pos, "state %q has no child states for initial to name", n.AttrValue("id"))
		}
		if count("initial") > 0 && states == 0 {
			c.errorf(n.Pos, "state %q has an <initial> but no child states", n.AttrValue("id"))
		}
		if _, ok := n.Attr("initial"); ok && count("initial") > 0 {
			c.errorf(n.Pos, "state %q has both an initial attribute and an <initial> element", n.AttrValue("id"))
		}
		if count("initial") > 1 {
			c.errorf(n.Pos, "state %q has more than one <initial>", n.AttrValue("id"))
		}
	case "history", "initial":
		if count("transition") != 1 {
			c.errorf(n.Pos, "<%s> needs exactly one <transition>", n.Name)
			return
		}
		for _, t := range n.Children {
			if t.Name != "transition" {
				continue
			}
			for _, a := range []string{"event", "cond"} {
				if at, ok := t.Attr(a); ok {
					c.errorf(at.Pos, "the <transition> of <%s> may not have %s %s: it is taken on entry", n.Name, map[string]string{"event": "an", "cond": "a"}[a], a)
				}
			}
			if _, ok := t.Attr("target"); !ok {
				c.errorf(t.Pos, "the <transition> of <%s> needs a target", n.Name)
			}
		}
	case "data":
		if (hasExpr || hasSrc) && (len(n.Children) > 0 || hasText) || hasExpr && hasSrc {
			c.errorf(n.Pos, "<data> has more than one of expr, src and content: give one")
		}
	case "assign":
		switch {
		case hasExpr && (len(n.Children) > 0 || hasText):
			c.errorf(n.Pos, "<assign> has both expr and content: give one")
		case !hasExpr && len(n.Children) == 0 && !hasText:
			c.errorf(n.Pos, "<assign> needs an expr or content: the value to assign")
		}
	case "script":
		if hasSrc && hasText {
			c.errorf(n.Pos, "<script> has both src and code: give one")
		}
	case "content":
		if hasExpr && (len(n.Children) > 0 || hasText) {
			c.errorf(n.Pos, "<content> has both expr and content: give one")
		}
	case "donedata":
		if count("content") > 0 && count("param") > 0 {
			c.errorf(n.Pos, "<donedata> has both <content> and <param>: give one")
		}
		if count("content") > 1 {
			c.errorf(n.Pos, "<donedata> has more than one <content>")
		}
	case "send":
		if count("content") > 0 && (count("param") > 0 || n.AttrValue("namelist") != "") {
			c.errorf(n.Pos, "<send> has <content> and also namelist or <param>: give one")
		}
		if count("content") > 1 {
			c.errorf(n.Pos, "<send> has more than one <content>")
		}
		toAdaptor := isSeatType(n.AttrValue("type")) && (count("content") > 0 || count("param") > 0 || n.Has("namelist"))
		if c.present(n, []string{"event", "eventexpr"}) == 0 && !toAdaptor { // a line to an adaptor needs no name
			c.errorf(n.Pos, "<send> needs an event or eventexpr attribute: the name of the event it sends")
		}
		if a, ok := n.Attr("type"); ok && !knownType(a.Value) {
			// A warning: SCXML requires the document to run and the send
			// to raise error.execution (W3C test 199).
			c.warnf(a.ValuePos, "<send> type %q is not one seat has: it sends with the SCXML event I/O processor (scxml) and to its adaptors (seat); this send will raise error.execution%s",
				a.Value, schema.DidYouMean(a.Value, []string{"seat", "scxml"}, "%q"))
		}
	case "invoke":
		if count("content") > 0 && (n.AttrValue("src") != "" || n.AttrValue("srcexpr") != "") {
			c.errorf(n.Pos, "<invoke> has <content> and also src or srcexpr: give one")
		}
		if count("content") > 1 {
			c.errorf(n.Pos, "<invoke> has more than one <content>")
		}
		if _, ok := n.Attr("namelist"); ok && count("param") > 0 {
			c.errorf(n.Pos, "<invoke> has both namelist and <param>: give one")
		}
	case "if":
		seenElse := false
		for _, ch := range n.Children {
			switch ch.Name {
			case "elseif", "else":
				if seenElse {
					c.errorf(ch.Pos, "<%s> after <else>: <else> comes last", ch.Name)
				}
				seenElse = seenElse || ch.Name == "else"
			}
		}
	}
	for _, name := range []string{"datamodel", "donedata", "finalize"} {
		if count(name) > 1 {
			c.errorf(n.Pos, "<%s> has more than one <%s>", n.Name, name)
		}
	}
}

func (c *compiler) present(n *schema.Node, names []string) int {
	k := 0
	for _, name := range names {
		if _, ok := n.Attr(name); ok {
			k++
		}
	}
	return k
}

// allowed is the elements el may hold.
func allowed(el element) []string {
	if el.children == nil {
		return executable
	}
	return el.children
}

func mayHold(name string, may []string) string {
	if len(may) == 0 {
		return ": <" + name + "> holds no elements"
	}
	tags := make([]string, len(may))
	for i, m := range may {
		tags[i] = "<" + m + ">"
	}
	return ": <" + name + "> may hold " + quoteAll(tags)
}

func quoteAll(names []string) string {
	var b strings.Builder
	for i, n := range names {
		switch {
		case i > 0 && i == len(names)-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}
