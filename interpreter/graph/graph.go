// Package graph draws a behavior's state machine, for seat graph and the
// live monitor: states, the transitions the file declares labelled with
// what triggers them, in Graphviz's DOT or Mermaid's stateDiagram-v2.
// docs/tools.md shows the pictures.
package graph

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// Node ids of the pseudo-states: where the machine starts, general's
// edges (from any state) and pops (back to the state below on the stack).
const (
	startID = "__start"
	anyID   = "__any"
	popID   = "__pop"
)

// condLen is how much of a cond a label shows.
const condLen = 32

// Graph is a behavior's machine, ready to print.
type Graph struct {
	Name    string
	States  []string
	Initial string
	Edges   []seatml.Edge
	// Nested states (docs/seatml.md §14): each state's parent ("" at the
	// top level), kind and, for a state that holds states, its children
	// and the child it enters first.
	Parent   map[string]string
	Kind     map[string]statechart.Kind
	Children map[string][]string
	First    map[string]string
	// labelSources: more than one adaptor, so keys name their source.
	labelSources bool
}

// New builds the graph of a loaded behavior.
func New(p *seatml.Program) *Graph {
	g := &Graph{Name: p.Name, Edges: p.Edges()}
	if g.Name == "" {
		g.Name = strings.TrimSuffix(p.File, ".seatml")
	}
	g.Parent, g.Kind = map[string]string{}, map[string]statechart.Kind{}
	g.Children, g.First = map[string][]string{}, map[string]string{}
	for _, s := range p.States {
		g.States = append(g.States, s.Name)
		g.Kind[s.Name] = s.Kind
		if s.Parent != nil {
			g.Parent[s.Name] = s.Parent.Name
			g.Children[s.Parent.Name] = append(g.Children[s.Parent.Name], s.Name)
		}
		if c := s.InitialChild(); c != nil {
			g.First[s.Name] = c.Name
		}
	}
	if p.Initial != nil {
		g.Initial = p.Initial.Name
	}
	n := 0
	for _, a := range p.Adaptors {
		if !a.Ignored {
			n++
		}
	}
	g.labelSources = n > 1
	return g
}

func (g *Graph) hasAny() bool {
	for _, e := range g.Edges {
		if e.From == "" {
			return true
		}
	}
	return false
}

func (g *Graph) hasPop() bool {
	for _, e := range g.Edges {
		if e.Pop {
			return true
		}
	}
	return false
}

// Label says what triggers an edge: the keys (with their source when the
// behavior has several adaptors, or a device source), "after 10s",
// "chat connects", "button Begin session", then " [cond]" and a push
// marker.
func (g *Graph) Label(e seatml.Edge) string {
	var l string
	src := e.Source
	switch e.On {
	case seatml.OnKey:
		l = strings.Join(e.Keys, " | ")
		if src != "" && (g.labelSources || src == "memory" || src == "motion" || src == "gui") {
			l = src + ": " + l
		}
	case seatml.OnData:
		l = "any input"
		if src != "" {
			l = "any " + src + " input"
		}
	case seatml.OnTimeout:
		l = "after " + formatDelay(e.Delay)
	case seatml.OnEntry:
		l = "on entry"
	case seatml.OnExec:
		l = "onexec"
	case seatml.OnConnect:
		l = src + " connects"
	case seatml.OnDisconnect:
		l = src + " leaves"
	case seatml.OnWidget:
		l = "button " + e.Widget
	case seatml.OnEvent:
		l = strings.Join(e.Keys, " ")
	}
	if e.Cond != "" {
		l += " [" + schema.Excerpt(strings.Join(strings.Fields(e.Cond), " "), condLen) + "]"
	}
	if e.Push {
		l = "push: " + l
	}
	return l
}

func formatDelay(d time.Duration) string {
	if d%time.Second == 0 || d > time.Minute {
		return fmt.Sprintf("%gs", d.Seconds())
	}
	return d.String()
}

// style tells edges apart by trigger: timers dashed, connections dotted.
func style(e seatml.Edge) string {
	switch e.On {
	case seatml.OnTimeout, seatml.OnExec:
		return "dashed"
	case seatml.OnConnect, seatml.OnDisconnect:
		return "dotted"
	}
	return ""
}

// DOT writes the graph in Graphviz's language. Each state's node is named
// by the state's name, and a state that holds states is the cluster
// cluster_NAME, so that the <title> of its group in an SVG drawing is the
// name exactly, whatever characters it holds (see id): the monitor finds a
// state's node and cluster by their titles.
func (g *Graph) DOT(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "digraph %s {\n", id(g.Name))
	b.WriteString("\trankdir=LR;\n")
	b.WriteString("\tgraph [fontname=\"Helvetica,Arial,sans-serif\"];\n")
	b.WriteString("\tnode [shape=box, style=\"rounded\", fontname=\"Helvetica,Arial,sans-serif\"];\n")
	b.WriteString("\tedge [fontname=\"Helvetica,Arial,sans-serif\", fontsize=10];\n")
	if g.nested() {
		b.WriteString("\tcompound=true;\n") // edges may end at a cluster's border
	}
	fmt.Fprintf(b, "\t%s [shape=point, width=0.15, label=\"\"];\n", startID)
	for _, s := range g.States {
		if g.Parent[s] == "" {
			g.dotState(b, s, "\t")
		}
	}
	if g.hasAny() {
		fmt.Fprintf(b, "\t%s [label=\"any state\", style=\"rounded,dashed\"];\n", anyID)
	}
	if g.hasPop() {
		fmt.Fprintf(b, "\t%s [label=\"back (pop)\", style=\"rounded,dashed\"];\n", popID)
	}
	if g.Initial != "" {
		fmt.Fprintf(b, "\t%s -> %s%s;\n", startID, id(g.anchor(g.Initial)), g.clusterEnd("lhead", g.Initial))
	}
	for _, e := range g.Edges {
		from, to := id(g.anchor(e.From)), id(g.anchor(e.To))
		if e.From == "" {
			from = anyID
		}
		if e.Pop {
			to = popID
		}
		attrs := []string{"label=" + quote(g.Label(e))}
		// An edge between a state and one inside it is drawn from (or to)
		// the node inside: clipping it at the border it crosses from
		// within is what dot cannot draw.
		if c := g.clusterEnd("ltail", e.From); c != "" && !g.within(e.To, e.From) {
			attrs = append(attrs, strings.TrimSuffix(strings.TrimPrefix(c, " ["), "]"))
		}
		if c := g.clusterEnd("lhead", e.To); c != "" && !e.Pop && !g.within(e.From, e.To) {
			attrs = append(attrs, strings.TrimSuffix(strings.TrimPrefix(c, " ["), "]"))
		}
		if s := style(e); s != "" {
			attrs = append(attrs, "style="+s)
		}
		if e.Push {
			attrs = append(attrs, "arrowhead=veevee")
		}
		if e.Pos.IsValid() {
			attrs = append(attrs, "tooltip="+quote(fmt.Sprintf("%s:%d", e.Pos.File, e.Pos.Line)))
		}
		fmt.Fprintf(b, "\t%s -> %s [%s];\n", from, to, strings.Join(attrs, ", "))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// nested reports whether some state holds states or is not a plain one.
func (g *Graph) nested() bool {
	for _, k := range g.Kind {
		if k != statechart.Basic {
			return true
		}
	}
	return len(g.Children) > 0
}

// cluster reports whether a state is drawn as a cluster: one that holds
// states, or a parallel state.
func (g *Graph) cluster(s string) bool {
	return len(g.Children[s]) > 0 || g.Kind[s] == statechart.Parallel
}

// clusterID is the DOT name of a state's cluster, written with id:
// Graphviz draws a subgraph whose name starts with "cluster" as a box.
func clusterID(s string) string { return id("cluster_" + s) }

// anchor is the node an edge to or from a state is drawn at: the state's
// own, or for a cluster the node it enters first (its first region's,
// for a parallel state); the edge is clipped at the cluster's border.
func (g *Graph) anchor(s string) string {
	for g.cluster(s) {
		next := g.First[s]
		if next == "" {
			if kids := g.Children[s]; len(kids) > 0 {
				next = kids[0]
			} else {
				return s
			}
		}
		s = next
	}
	return s
}

// within reports whether state s is a or inside a.
func (g *Graph) within(s, a string) bool {
	for ; s != ""; s = g.Parent[s] {
		if s == a {
			return true
		}
	}
	return false
}

// clusterEnd is the edge attribute (lhead or ltail) that clips an edge at
// a cluster's border, as " [attr=...]"; "" for a plain state.
func (g *Graph) clusterEnd(attr, s string) string {
	if s == "" || !g.cluster(s) {
		return ""
	}
	return fmt.Sprintf(" [%s=%s]", attr, clusterID(s))
}

// dotState writes a state: a node, or a cluster holding its children.
func (g *Graph) dotState(b *strings.Builder, s, indent string) {
	if !g.cluster(s) {
		attrs := []string{}
		if g.Kind[s] != statechart.ShallowHistory && g.Kind[s] != statechart.DeepHistory && strings.ContainsAny(s, "\\\n\r") {
			// Graphviz's default label, the node's name, would read its
			// backslashes as escapes (\N, \n, \G ...).
			attrs = append(attrs, "label="+quote(s))
		}
		if s == g.Initial {
			attrs = append(attrs, "penwidth=2")
		}
		switch g.Kind[s] {
		case statechart.Final:
			attrs = append(attrs, "peripheries=2")
		case statechart.ShallowHistory:
			attrs = append(attrs, "shape=circle", "label="+quote("H"), "tooltip="+quote(s))
		case statechart.DeepHistory:
			attrs = append(attrs, "shape=circle", "label="+quote("H*"), "tooltip="+quote(s))
		}
		if len(attrs) == 0 {
			fmt.Fprintf(b, "%s%s;\n", indent, id(s))
		} else {
			fmt.Fprintf(b, "%s%s [%s];\n", indent, id(s), strings.Join(attrs, ", "))
		}
		return
	}
	style := "rounded"
	if g.Kind[s] == statechart.Parallel {
		style = "rounded,dashed" // its regions run at once
	}
	fmt.Fprintf(b, "%ssubgraph %s {\n", indent, clusterID(s))
	fmt.Fprintf(b, "%s\tlabel=%s; style=%q; tooltip=%s;\n", indent, quote(s), style, quote(s))
	for _, c := range g.Children[s] {
		g.dotState(b, c, indent+"\t")
	}
	fmt.Fprintf(b, "%s}\n", indent)
}

// quote writes a DOT string for an attribute that Graphviz reads as text
// with escapes (a label, a tooltip): backslashes and quotes escaped, line
// breaks as \n, and & as &amp; (Graphviz reads entities in labels, and
// writes a tooltip's "&amp;" into SVG as it is).
func quote(s string) string { return `"` + quoteEscaper.Replace(s) + `"` }

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "", "&", "&amp;")

// id writes a DOT ID that Graphviz names a node, cluster or graph by: its
// name, and the <title> of its SVG group, are s exactly. In a quoted ID
// Graphviz reads only \" as an escape and keeps every other backslash, so
// backslashes are written as they are; & is written &amp;, since Graphviz
// writes a name into SVG without escaping what looks like an entity ("&amp;"
// would read as "&"). A backslash before a quote or a line break, or at
// the end, cannot be written in a quoted ID: a name with one (or with any
// line break, to be safe) is written as an HTML-like ID, <...>, which
// Graphviz takes as it is, with &, < and > as entities.
func id(s string) string {
	if !strings.Contains(s, `\"`) && !strings.HasSuffix(s, `\`) && !strings.ContainsAny(s, "\n\r") {
		return `"` + idEscaper.Replace(s) + `"`
	}
	return "<" + htmlIDEscaper.Replace(s) + ">"
}

var (
	idEscaper     = strings.NewReplacer("&", "&amp;", `"`, `\"`)
	htmlIDEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
)

// Mermaid writes the graph as Mermaid's stateDiagram-v2. States get ids
// s0, s1, … and their names as descriptions, so any name (Japanese, with
// spaces) shows as written.
func (g *Graph) Mermaid(w io.Writer) error {
	b := &strings.Builder{}
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    direction LR\n")
	ids := map[string]string{"": anyID}
	for i, s := range g.States {
		ids[s] = fmt.Sprintf("s%d", i)
		fmt.Fprintf(b, "    state %s as %s\n", mermaidQuote(g.mermaidName(s)), ids[s])
	}
	for _, s := range g.States {
		if g.Parent[s] == "" && g.cluster(s) {
			g.mermaidComposite(b, s, ids, "    ")
		}
	}
	if g.hasAny() {
		fmt.Fprintf(b, "    state \"any state\" as %s\n", anyID)
	}
	if g.hasPop() {
		fmt.Fprintf(b, "    state \"back (pop)\" as %s\n", popID)
	}
	if g.Initial != "" {
		fmt.Fprintf(b, "    [*] --> %s\n", ids[g.Initial])
	}
	for _, e := range g.Edges {
		to := ids[e.To]
		if e.Pop {
			to = popID
		}
		fmt.Fprintf(b, "    %s --> %s : %s\n", ids[e.From], to, mermaidText(g.Label(e)))
	}
	var meta []string
	if g.hasAny() {
		meta = append(meta, anyID)
	}
	if g.hasPop() {
		meta = append(meta, popID)
	}
	if len(meta) > 0 {
		b.WriteString("    classDef meta stroke-dasharray: 4 4\n")
		fmt.Fprintf(b, "    class %s meta\n", strings.Join(meta, ","))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidName is how a state shows: history states with H or H*.
func (g *Graph) mermaidName(s string) string {
	switch g.Kind[s] {
	case statechart.ShallowHistory:
		return s + " (H)"
	case statechart.DeepHistory:
		return s + " (H*)"
	}
	return s
}

// mermaidComposite writes a state that holds states as a composite state,
// its first child marked by [*]; a parallel state's regions are
// separated by --, Mermaid's concurrency.
func (g *Graph) mermaidComposite(b *strings.Builder, s string, ids map[string]string, indent string) {
	fmt.Fprintf(b, "%sstate %s {\n", indent, ids[s])
	for i, c := range g.Children[s] {
		if g.Kind[s] == statechart.Parallel && i > 0 {
			fmt.Fprintf(b, "%s    --\n", indent)
		}
		if g.cluster(c) {
			g.mermaidComposite(b, c, ids, indent+"    ")
		} else {
			fmt.Fprintf(b, "%s    %s\n", indent, ids[c])
		}
	}
	if first := g.First[s]; first != "" && g.Kind[s] != statechart.Parallel {
		fmt.Fprintf(b, "%s    [*] --> %s\n", indent, ids[first])
	}
	fmt.Fprintf(b, "%s}\n", indent)
}

// mermaidText escapes what Mermaid would read as syntax in a label, or as
// Markdown (a backslash before "?" would vanish, "*" would italicize), or
// an entity ("&amp;" would read as "&"): its entity codes stand for the
// characters ("#59;" is ";").
func mermaidText(s string) string { return mermaidEscaper.Replace(s) }

var mermaidEscaper = strings.NewReplacer("#", "#35;", ";", "#59;", "&", "#38;", ":", "#58;", "\n", " ", "<", "#lt;", ">", "#gt;", `"`, "#quot;",
	"{", "#123;", "}", "#125;", `\`, "#92;", "*", "#42;", "_", "#95;", "`", "#96;")

func mermaidQuote(s string) string { return `"` + mermaidText(s) + `"` }
