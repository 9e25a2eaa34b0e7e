package seatml

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/scxml"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// SeatNamespace is the namespace of seat's own elements and attributes in
// an SCXML document: <seat:adaptor> declares an adaptor as SEATML's
// <general> does, and seat:devices, seat:scripts and seat:rate on
// <scxml> are general's attributes (docs/scxml.md "seat's world").
const SeatNamespace = "https://github.com/seatml/seat"

// IsSCXML reports whether a file is an SCXML document, which Load reads
// with the SCXML front end: its name ends in .scxml.
func IsSCXML(path string) bool { return strings.EqualFold(filepath.Ext(path), ".scxml") }

// loadSCXML loads an SCXML document as a Program: its states and
// transitions are the document's, run by the SCXML front end, and seat's
// own elements declare the adaptors and devices it reaches, compiled as
// the <general> of a SEATML file would be. Its states are mirrored as
// States (without rules) so that the tools that list, draw and observe
// states see them.
func loadSCXML(path string, opts LoadOptions) (*Program, schema.List) {
	ld := &loader{opts: opts, files: map[string]*parsedFile{}, validated: map[string]bool{}, main: path}
	data, err := opts.ReadFile(path)
	if err != nil {
		ld.diags.Errorf(schema.Pos{File: path}, "cannot read behavior file: %v", schema.FileCause(err))
		return nil, ld.diags
	}
	root, diags := schema.ParseXML(path, data)
	ld.diags.Add(diags)
	if root == nil || diags.HasErrors() {
		ld.diags.Sort()
		return nil, ld.diags
	}
	general := seatGeneral(root, &ld.diags) // before Compile, which drops what is not SCXML's
	doc, diags := scxml.Compile(path, root)
	ld.diags.Add(diags)
	wrapper := &schema.Node{Name: "seatml", Pos: root.Pos, Children: []*schema.Node{general}}
	applyOverrides(wrapper, opts.Set)
	ld.diags.Add(schema.CheckIn(wrapper, general, adaptors.Kinds))
	c := &compiler{ld: ld, file: path, pending: new([]func()), adaptors: map[string]*AdaptorDecl{}, prog: &Program{
		File: path, Rate: 1, General: &Scope{}, stateByName: map[string]*State{}, WidgetByRef: map[string]*Widget{},
	}}
	c.declareGeneral(general)
	c.setupDevices(general)
	c.checkSeatSends(root)
	p := c.prog
	p.Name = root.AttrValue("name")
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	p.Sources = []string{path}
	ld.diags.Sort()
	if ld.diags.HasErrors() || doc == nil {
		return nil, ld.diags
	}
	p.Diagnostics = ld.diags
	p.Document = doc
	p.mirror(doc.Chart)
	// Transitions on memory keys start the device layer with the document.
	p.UsesDevices = p.UsesDevices || len(p.SCXMLMemoryKeys()) > 0
	return p, ld.diags
}

// seatGeneral gathers seat's elements and attributes of an SCXML
// document into the <general> element SEATML would have: <seat:adaptor>
// children of <scxml>, and seat: attributes of <scxml>. Other elements of
// seat's namespace are errors.
func seatGeneral(root *schema.Node, diags *schema.List) *schema.Node {
	g := &schema.Node{Name: "general", Pos: root.Pos, Attrs: []schema.Attr{{Name: "name", Value: "scxml", Pos: root.Pos}}}
	for _, a := range root.Attrs {
		if a.Space == SeatNamespace {
			a.Space = ""
			g.Attrs = append(g.Attrs, a)
		} else if why := notSeats(a.Space); why != "" {
			diags.Errorf(a.Pos, "attribute %s: %s", a.Name, why)
		}
	}
	for _, n := range root.Children {
		if n.Space != SeatNamespace {
			if why := notSeats(n.Space); why != "" {
				diags.Errorf(n.Pos, "<%s>: %s", n.Name, why)
			}
			continue
		}
		if n.Name != "adaptor" {
			diags.Errorf(n.Pos, "<seat:%s>: an SCXML document declares seat's adaptors with <seat:adaptor>; seat's other elements are SEATML's", n.Name)
			continue
		}
		// Its name begins its events' names (NAME.line).
		if a, ok := n.Attr("name"); ok && (a.Value == "" || strings.ContainsAny(a.Value, " \t\r\n")) {
			diags.Errorf(a.ValuePos, "adaptor name %q: in an SCXML document an adaptor's name begins its events' names (%s.line), so it is one word, without spaces", a.Value, a.Value)
		}
		g.Children = append(g.Children, n)
	}
	for _, n := range root.Children {
		if n.Space == SeatNamespace {
			continue
		}
		for _, d := range seatDescendants(n) {
			diags.Errorf(d.Pos, "<seat:%s> belongs directly inside <scxml> (a document an <invoke> runs has none of seat's world)", d.Name)
		}
	}
	return g
}

// notSeats says why a namespace that looks meant for seat's is not: an
// undeclared seat: prefix, or a URL near seat's; "" for any other.
func notSeats(space string) string {
	switch {
	case space == "seat":
		return fmt.Sprintf("the prefix seat: is not declared; declare seat's namespace on <scxml>: xmlns:seat=%q", SeatNamespace)
	case space != SeatNamespace && strings.Contains(strings.ToLower(space), "seatml/seat"):
		return fmt.Sprintf("its namespace %q is not seat's, so seat would ignore it; did you mean %q?", space, SeatNamespace)
	}
	return ""
}

// seatDescendants lists the elements of seat's namespace under n, at any
// depth (in an <invoke>'s <content> too).
func seatDescendants(n *schema.Node) []*schema.Node {
	var out []*schema.Node
	for _, ch := range n.Children {
		if ch.Space == SeatNamespace || notSeats(ch.Space) != "" {
			out = append(out, ch)
		}
		out = append(out, seatDescendants(ch)...)
	}
	return out
}

// mirror makes a State for each state of an SCXML chart, so that States,
// State(name), the current state and the configuration read as they do
// for SEATML.
func (p *Program) mirror(chart *statechart.Chart) {
	p.SCXMLStates = map[*statechart.State]*State{}
	for _, n := range chart.States {
		if n == chart.Root {
			continue
		}
		s := &State{Name: n.ID, Kind: n.Kind, Node: n}
		if at, ok := n.Ext.(*schema.Node); ok {
			s.Pos = at.Pos
		}
		if n.Parent != chart.Root {
			s.Parent = p.SCXMLStates[n.Parent]
			s.Parent.Children = append(s.Parent.Children, s)
		}
		p.SCXMLStates[n] = s
		p.States = append(p.States, s)
		p.stateByName[s.Name] = s
		p.Nested = p.Nested || s.Parent != nil || n.Kind != statechart.Basic
	}
	for _, s := range p.States {
		if s.Node.Initial != nil && len(s.Node.Initial.Targets) > 0 {
			s.initial = p.SCXMLStates[s.Node.Initial.Targets[0]]
		} else if !s.Node.Atomic() && s.Kind == statechart.Basic && len(s.Children) > 0 {
			s.initial = s.Children[0]
		}
	}
	if t := chart.Root.Initial; t != nil && len(t.Targets) > 0 {
		p.Initial = p.SCXMLStates[t.Targets[0]]
	} else if len(p.States) > 0 {
		p.Initial = p.States[0]
	}
}

// SCXML reports whether the program is an SCXML document.
func (p *Program) SCXML() bool { return p.Document != nil }

// checkSeatSends checks each <send type="seat">: it needs a target, and a
// target written literally must be a declared adaptor.
func (c *compiler) checkSeatSends(n *schema.Node) {
	for _, ch := range n.Children {
		if ch.Name == "content" {
			continue // a document to invoke: it cannot reach seat's adaptors
		}
		if a, ok := ch.Attr("target"); ok && ch.Name == "send" && !ch.Has("type") && !ch.Has("typeexpr") && c.adaptors[a.Value] != nil {
			c.errorf(a.ValuePos, "<send> target %q is one of seat's adaptors: add type=\"seat\" (without it the target names an SCXML session, as #_parent)", a.Value)
		}
		if ch.Name == "send" && (ch.AttrValue("type") == "seat" || ch.AttrValue("type") == scxml.SeatProcessor) {
			a, ok := ch.Attr("target")
			switch {
			case ok && c.adaptors[a.Value] == nil:
				c.errorf(a.ValuePos, "<send type=\"seat\"> target %q: no such adaptor (declare it with <seat:adaptor name=%q>)%s", a.Value, a.Value, schema.DidYouMean(a.Value, c.adaptorNames(), "%q"))
			case !ok && !ch.Has("targetexpr"):
				c.errorf(ch.Pos, "<send type=\"seat\"> needs a target: the name of one of the document's <seat:adaptor>s")
			}
		}
		c.checkSeatSends(ch)
	}
}

// scxmlHears reports whether some transition of the document takes an
// event of this name.
func (p *Program) SCXMLHears(name string) bool {
	for _, n := range p.Document.Chart.States {
		for _, t := range n.Transitions {
			for _, d := range t.Events {
				if statechart.Matches(d, name) {
					return true
				}
			}
		}
	}
	return false
}

// scxmlEdges are the document's transitions with targets, one edge per
// target, in document order.
func (p *Program) scxmlEdges() []Edge {
	var out []Edge
	for _, n := range p.Document.Chart.States {
		from := p.SCXMLStates[n]
		if from == nil {
			continue // the document itself: its initial transition is the start
		}
		for _, t := range n.Transitions {
			e := Edge{From: from.Name, On: OnEvent, Keys: t.Events}
			if x, ok := t.Ext.(*schema.Node); ok {
				e.Pos = x.Pos
				e.Cond = strings.TrimSpace(x.AttrValue("cond"))
			}
			for _, target := range t.Targets {
				e.To = p.SCXMLStates[target].Name
				out = append(out, e)
			}
		}
	}
	return out
}

// scxmlMemoryKeys are the memory keys the document's transitions name
// (event="memory.KEY"), to which it is subscribed when it starts.
func (p *Program) SCXMLMemoryKeys() []string {
	var keys []string
	for _, n := range p.Document.Chart.States {
		for _, t := range n.Transitions {
			for _, d := range t.Events {
				if k, ok := strings.CutPrefix(d, "memory."); ok && k != "" && k != "*" {
					keys = append(keys, k)
				}
			}
		}
	}
	return keys
}
