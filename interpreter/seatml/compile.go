package seatml

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
	_ "github.com/seatml/seat/adaptors/all" // every kind: what check knows never depends on what was linked
	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/srcfile"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// LoadOptions tune loading.
type LoadOptions struct {
	// AllowShell permits <shell> actions (--allow-shell).
	AllowShell bool
	// ReadFile reads behavior, include, device and motion files;
	// srcfile.ReadRegular (a regular file of at most 64 MiB) if nil.
	// (execfile files are read with srcfile.Read, held to the behavior's
	// directory.)
	ReadFile func(path string) ([]byte, error)
	// ScriptsDir overrides where motion scripts are found (--scripts).
	ScriptsDir string
	// Tree overrides the device tree (--devices, already loaded).
	Tree *hal.Tree
	// Set overrides adaptor attributes of the loaded file (not of its
	// includes) before it is checked (seat run --set chat.port=5100).
	Set []Override
	// HereAndNow: the behavior is to run on this machine (seat check,
	// seat run), so what the machine lacks for an adaptor (a speech
	// engine) is an error; otherwise a warning.
	HereAndNow bool
}

// Override sets attribute Attr of the adaptor named Adaptor to Value.
type Override struct {
	Adaptor, Attr, Value string
}

// ParseOverride reads "ADAPTOR.ATTR=VALUE".
func ParseOverride(s string) (Override, error) {
	lhs, value, ok := strings.Cut(s, "=")
	adaptor, attr, dot := strings.Cut(lhs, ".")
	if !ok || !dot || adaptor == "" || attr == "" {
		return Override{}, fmt.Errorf("%q: want ADAPTOR.ATTRIBUTE=VALUE, for example chat.port=5100", s)
	}
	return Override{Adaptor: adaptor, Attr: attr, Value: value}, nil
}

func (o Override) String() string { return o.Adaptor + "." + o.Attr + "=" + o.Value }

// applyOverrides sets the overridden attributes on the file's adaptor
// elements; a new attribute is placed at its element.
func applyOverrides(root *schema.Node, set []Override) {
	for _, g := range root.Children {
		if g.Name != "general" {
			continue
		}
		for _, a := range g.Children {
			if a.Name != "adaptor" {
				continue
			}
			for _, o := range set {
				if a.AttrValue("name") != o.Adaptor {
					continue
				}
				// What is wrong with the value is reported against --set,
				// saying where the file had it.
				i := slices.IndexFunc(a.Attrs, func(x schema.Attr) bool { return x.Name == o.Attr })
				var where schema.Pos
				if i < 0 {
					where = schema.Pos{File: fmt.Sprintf("--set %s (for the adaptor at %s)", o, a.Pos)}
					a.Attrs = append(a.Attrs, schema.Attr{Name: o.Attr})
					i = len(a.Attrs) - 1
				} else {
					where = schema.Pos{File: fmt.Sprintf("--set %s (%s has %q)", o, a.Attrs[i].ValuePos, a.Attrs[i].Value)}
				}
				a.Attrs[i].Value, a.Attrs[i].Pos, a.Attrs[i].ValuePos = o.Value, where, where
			}
		}
	}
}

// Reserved names: globals seat defines, and event sources adaptors may not use.
var (
	reservedGlobals = map[string]bool{"seat": true, "event": true, "rtc_result": true, "rtc_in_data": true, "web_in_data": true}
	// event is the source of internal events: done.state.*, error.*, and
	// those raised with <raise> or seat.raise (§14).
	builtinSources = []string{"gui", "memory", "motion", InternalSource}
)

// Load reads, validates and compiles a behavior file and everything it
// includes. It returns the program, or nil when any error was found, and
// every diagnostic, sorted.
func Load(path string, opts LoadOptions) (*Program, schema.List) {
	if opts.ReadFile == nil {
		opts.ReadFile = srcfile.ReadRegular
	}
	if IsSCXML(path) {
		return loadSCXML(filepath.Clean(path), opts)
	}
	ld := &loader{opts: opts, files: map[string]*parsedFile{}, validated: map[string]bool{}, scripts: map[string]*motion.Script{}, main: filepath.Clean(path)}
	prog := ld.load(ld.main, nil)
	ld.compileAll()
	ld.diags.Sort()
	if ld.diags.HasErrors() || prog == nil {
		return nil, ld.diags
	}
	prog.Diagnostics = ld.diags
	for f := range ld.files {
		prog.Sources = append(prog.Sources, f)
	}
	sort.Strings(prog.Sources)
	return prog, ld.diags
}

// LoadBytes compiles a behavior from memory; path names it in messages and
// anchors relative paths.
func LoadBytes(path string, data []byte, opts LoadOptions) (*Program, schema.List) {
	read := opts.ReadFile
	if read == nil {
		read = srcfile.ReadRegular
	}
	clean := filepath.Clean(path)
	opts.ReadFile = func(p string) ([]byte, error) {
		if filepath.Clean(p) == clean {
			return data, nil
		}
		return read(p)
	}
	return Load(path, opts)
}

type loader struct {
	opts      LoadOptions
	diags     schema.List
	files     map[string]*parsedFile
	validated map[string]bool
	scripts   map[string]*motion.Script // parsed motion scripts by path; nil = failed
	main      string                    // the file loaded; Set applies to it
	luaJobs   []*luaJob
	// Keys and patterns repeat across states; each is worked out once.
	expansions map[string]expansion
	patterns   map[string]compiledWord
}

type expansion struct {
	words []string
	err   error
}

type compiledWord struct {
	re  *regexp.Regexp
	err error
}

// expand is ExpandKey, once per distinct key text of a load. The words are
// shared, never modified.
func (ld *loader) expand(text string) ([]string, error) {
	if e, ok := ld.expansions[text]; ok {
		return e.words, e.err
	}
	words, err := ExpandKey(text)
	if ld.expansions == nil {
		ld.expansions = map[string]expansion{}
	}
	ld.expansions[text] = expansion{words, err}
	return words, err
}

// pattern is compileWord, once per distinct word of a load (a compiled
// regexp is safe to share).
func (ld *loader) pattern(w string) (*regexp.Regexp, error) {
	if p, ok := ld.patterns[w]; ok {
		return p.re, p.err
	}
	re, err := compileWord(w)
	if ld.patterns == nil {
		ld.patterns = map[string]compiledWord{}
	}
	ld.patterns[w] = compiledWord{re, err}
	return re, err
}

type parsedFile struct {
	root *schema.Node
	err  error // reading failed
}

// include is one step of an include chain.
type include struct {
	file string
	pos  schema.Pos // the <rule file> that left this file
	attr string
}

func (ld *loader) parse(path string) *parsedFile {
	if pf, ok := ld.files[path]; ok {
		return pf
	}
	pf := &parsedFile{}
	ld.files[path] = pf
	data, err := ld.opts.ReadFile(path)
	if err != nil {
		pf.err = err
		return pf
	}
	root, diags := schema.ParseXML(path, data)
	ld.diags.Add(diags)
	if root != nil {
		ld.diags.Add(schema.Modernize(root, adaptors.Kinds))
		if path == ld.main {
			applyOverrides(root, ld.opts.Set)
		}
		ld.diags.Add(schema.Check(root, adaptors.Kinds))
		pf.root = root
	}
	return pf
}

// load compiles the file at path; chain holds the includes that led here.
func (ld *loader) load(path string, chain []include) *Program {
	pf := ld.parse(path)
	if pf.err != nil {
		ld.diags.Errorf(schema.Pos{File: path}, "cannot read behavior file: %v", schema.FileCause(pf.err))
		return nil
	}
	if pf.root == nil || pf.root.Name != "seatml" {
		return nil
	}
	ld.validated[path] = true
	c := &compiler{ld: ld, file: path, chain: chain, pending: new([]func()), prog: &Program{
		File: path, Rate: 1, General: &Scope{},
		stateByName: map[string]*State{}, WidgetByRef: map[string]*Widget{},
	}}
	c.compile(pf.root)
	return c.prog
}

type compiler struct {
	ld       *loader
	file     string
	chain    []include
	prog     *Program
	adaptors map[string]*AdaptorDecl
	hearers  map[string]func(key string) error // hearing's, by adaptor name
	pending  *[]func()                         // checks that need every state's widgets
	// via, for rules compiled from an include, says where they were included.
	via string
}

func (c *compiler) errorf(pos schema.Pos, format string, args ...any) {
	c.ld.diags.Errorf(pos, format+c.via, args...)
}

func (c *compiler) warnf(pos schema.Pos, format string, args ...any) {
	c.ld.diags.Warnf(pos, format, args...)
}

func (c *compiler) compile(root *schema.Node) {
	var general *schema.Node
	var states []*schema.Node
	for _, n := range root.Children {
		switch n.Name {
		case "general":
			if general == nil {
				general = n
			}
		case "state", "parallel", "final":
			states = append(states, n)
		}
	}
	// Pass 1: names everything else refers to.
	c.adaptors = map[string]*AdaptorDecl{}
	if general != nil {
		c.declareGeneral(general)
		c.setupDevices(general)
	}
	for _, n := range states {
		c.declareState(n, nil)
	}
	c.resolveInitials()
	if len(c.prog.States) > 0 {
		c.prog.Initial = c.prog.States[0]
		if s := c.prog.stateByName["start"]; s != nil && s.Parent == nil {
			c.prog.Initial = s
		}
	}
	// Pass 2: bodies.
	if general != nil {
		c.compileGeneral(general)
	}
	for _, s := range c.prog.States {
		if !s.Kind.IsHistory() {
			c.compileState(s, s.XML)
		}
	}
	c.indexAll()
	c.warnCatchAll()
	c.warnUnshownWidgets()
	c.buildChart()
	c.warnUnreachable()
}

// buildChart makes the behavior's statechart: its states under a root
// that stands for the behavior, the initial state, and for each state the
// transition that statetransition takes to it. The engine exits and
// enters the states; each Machine runs their lists from the engine's
// OnExit and OnEnter (a state's Ext is its *State).
func (c *compiler) buildChart() {
	if c.prog.Initial == nil || c.ld.diags.HasErrors() {
		return // the behavior will not run
	}
	root := &statechart.State{}
	for _, s := range c.prog.States { // parents come before their children
		parent := root
		if s.Parent != nil {
			parent = s.Parent.Node
		}
		s.Node = &statechart.State{ID: s.Name, Kind: s.Kind, Parent: parent, Ext: s}
		parent.Children = append(parent.Children, s.Node)
		c.prog.HasOnExit = c.prog.HasOnExit || len(s.OnExit) > 0
	}
	for _, s := range c.prog.States {
		switch {
		case s.Kind.IsHistory():
			// Its default: the parent's initial state.
			s.Node.Initial = &statechart.Transition{Targets: []*statechart.State{s.Parent.initial.Node}}
		case s.initial != nil && s.Kind != statechart.Parallel:
			s.Node.Initial = &statechart.Transition{Targets: []*statechart.State{s.initial.Node}}
		}
	}
	root.Initial = &statechart.Transition{Targets: []*statechart.State{c.prog.Initial.Node}}
	chart, err := statechart.Build(root)
	if err != nil {
		pos := schema.Pos{File: c.file}
		var be *statechart.BuildError
		if errors.As(err, &be) {
			pos = be.State.Ext.(*State).Pos
		}
		c.errorf(pos, "%v", err)
		return
	}
	c.prog.Chart = chart
	for _, s := range c.prog.States {
		s.Into = chart.Transition(root, s.Node)
	}
}

// warnUnreachable warns of each state that no statetransition, initial
// state or history leads to (the outermost, when a state and what it
// holds are), unless a script names it in quotes: seat.transition may
// take it there.
func (c *compiler) warnUnreachable() {
	p := c.prog
	if p.Chart == nil || len(c.chain) > 0 {
		return // an included file is there for its rules
	}
	targets := map[*State][]*statechart.State{}
	for _, e := range p.Edges() {
		to := p.stateByName[e.To]
		if to == nil {
			continue // a pop: back to a state entered before
		}
		from := p.stateByName[e.From] // nil for general's: open in every state
		targets[from] = append(targets[from], to.Node)
	}
	reach := p.Chart.Reachable(func(n *statechart.State) []*statechart.State {
		if n == nil {
			return targets[nil]
		}
		if s, ok := n.Ext.(*State); ok {
			return targets[s]
		}
		return nil
	})
	for _, s := range p.States {
		if reach[s.Node.Index()] || s.Kind.IsHistory() || s.Parent != nil && !reach[s.Parent.Node.Index()] || c.scriptsName(s.Name) {
			continue
		}
		c.warnf(s.Pos, "state %q is never entered: no statetransition, initial state or history leads to it", s.Name)
	}
	c.warnWidgetsNeverShown(reach)
}

// warnWidgetsNeverShown warns of the widgets of a state that is never
// active, once per state, at its first widget: the page shows the
// widgets of the active states only. A state is never active when
// nothing leads to it or to a state around it that scripts may name.
// (Without a web adaptor no widget shows: warnUnshownWidgets says so.)
func (c *compiler) warnWidgetsNeverShown(reach []bool) {
	if !c.hasPage() {
		return
	}
	for _, s := range c.prog.States {
		first := slices.IndexFunc(s.Widgets, func(w *Widget) bool { return w.Kind != "brk" && w.Kind != "space" })
		if first < 0 || reach[s.Node.Index()] {
			continue
		}
		why := "the state is never entered"
		outer := s
		for a := s; a != nil; a = a.Parent {
			if c.scriptsName(a.Name) {
				outer = nil // a script may enter it
				break
			}
			if a.Parent != nil && !reach[a.Parent.Node.Index()] {
				outer = a.Parent
			}
		}
		if outer == nil {
			continue
		}
		if outer != s {
			why = fmt.Sprintf("state %q around it is never entered", outer.Name)
		}
		w := s.Widgets[first]
		which := fmt.Sprintf("<%s> here", w.Kind)
		if more := len(s.Widgets) - first - 1; more > 0 {
			which += fmt.Sprintf(" and %d more", more)
		}
		c.warnf(w.Pos, "the widgets of state %q never show on the page (%s): %s; no statetransition, initial state or history leads to it",
			s.Name, which, why)
	}
}

// scriptsName reports whether some script of the behavior has the name in
// quotes.
func (c *compiler) scriptsName(name string) bool {
	for _, j := range c.ld.luaJobs {
		if strings.Contains(j.ch.Src, `"`+name+`"`) || strings.Contains(j.ch.Src, `'`+name+`'`) {
			return true
		}
	}
	return false
}

// catchAllProbes are texts a key word must match, from their start, to
// catch every text: letters, digits, kana, kanji, a space, punctuation,
// an emoji.
var catchAllProbes = []string{"!", "a", "Z", "0", "あ", "ア", "漢", " ", "\t", "😀", "x,y"}

// catchesAll reports whether a key word matches every non-empty text
// (".", ".*", "(.+)", "\S*"...).
func catchesAll(w *Word) bool {
	if w.RE == nil {
		return false // a plain word is a prefix of some texts only
	}
	for _, p := range catchAllProbes {
		if !w.RE.MatchString(p) {
			return false
		}
	}
	return true
}

// warnCatchAll warns of a catch-all key word (".", ".*") of a state's
// rule without a cond: for the texts of its source, the search of §5
// stops at it, so the keyed rules of the states around the state and of
// general never see them while it is active. The warning names them.
func (c *compiler) warnCatchAll() {
	if len(c.chain) > 0 {
		return // an included file is there for its rules
	}
	for _, s := range c.prog.States {
		told := map[string]bool{} // sources warned of: a second catch-all is hidden by the first
		for _, r := range s.Rules {
			if r.Cond != nil {
				continue
			}
			for _, w := range r.Words {
				if !catchesAll(w) || told[w.Source] || told[""] && w.Source != InternalSource {
					continue
				}
				told[w.Source] = true
				if hidden := c.hiddenBy(s, w.Source); len(hidden) > 0 {
					from := ""
					if w.Source != "" {
						from = fmt.Sprintf(" from %q", w.Source)
					}
					c.warnf(w.Pos, "key %q takes every text%s in state %q, so while it is active no rule around it sees such text: %s; give this rule a <cond>, or make it <general>'s fallback",
						schema.Excerpt(w.Text, maxQuoted), from, s.Name, strings.Join(hidden, "; "))
				}
				break // once per rule
			}
		}
	}
}

// hiddenBy lists, by scope, the keyed rules of the states around s and
// of general that see texts of source after s's own rules (§5): those
// of the source and those of none; for a catch-all of no source, those
// of every source but internal events (which no-source rules never see).
func (c *compiler) hiddenBy(s *State, source string) []string {
	sees := func(r *Rule) bool {
		for _, w := range r.Words {
			switch {
			case source == "" && w.Source != InternalSource,
				w.Source == source,
				w.Source == "" && source != InternalSource:
				return true
			}
		}
		return false
	}
	var out []string
	list := func(where string, rules []*Rule) {
		var at []string
		for _, r := range rules {
			if sees(r) {
				p := fmt.Sprintf("%d:%d", r.Pos.Line, r.Pos.Col)
				if r.Pos.File != s.Pos.File {
					p = r.Pos.String()
				}
				if len(r.Keys) > 0 {
					p += fmt.Sprintf(" (%q)", schema.Excerpt(r.Keys[0], 20))
				}
				at = append(at, p)
			}
		}
		if len(at) > 0 {
			out = append(out, fmt.Sprintf("%s at %s", where, schema.Names(at, maxNamesListed)))
		}
	}
	for p := s.Parent; p != nil; p = p.Parent {
		list(fmt.Sprintf("state %q's rules", p.Name), p.Rules)
	}
	list("<general>'s rules", c.prog.General.Rules)
	return out
}

// warnUnshownWidgets warns once when states have widgets but no web
// adaptor shows them (§11); their values still work from Lua.
func (c *compiler) warnUnshownWidgets() {
	if c.hasPage() {
		return
	}
	for _, s := range c.prog.States {
		if len(s.Widgets) > 0 {
			c.warnf(s.Widgets[0].Pos, "widgets are not shown: the behavior has no web adaptor (their values still work from Lua and message input=)")
			return
		}
	}
}

func (c *compiler) declareGeneral(g *schema.Node) {
	p := c.prog
	p.Name = g.AttrValue("name")
	v := g.AttrValue("anonymous")
	p.Anonymous = v == "1" || v == "true"
	if r, ok := g.Attr("rate"); ok {
		if f, ok := schema.ParseNumber(r.Value); ok && schema.RateRange.Contains(f) {
			p.Rate = f
		}
	}
	if a, ok := g.Attr("scorelimit"); ok {
		if f, ok := schema.ParseNumber(a.Value); ok {
			p.ScoreLimit = f
		} else {
			c.errorf(a.ValuePos, "scorelimit is a number (the lowest score of a Julius hypothesis that is tried), not %q", a.Value)
		}
	}
	p.Devices = g.AttrValue("devices")
	p.Scripts = g.AttrValue("scripts")
	p.UsesDevices = p.Devices != "" || p.Scripts != ""
	perType := map[string]int{}
	for _, n := range g.Children {
		if n.Name != "adaptor" {
			continue
		}
		d := &AdaptorDecl{Name: n.AttrValue("name"), Type: n.AttrValue("type"), Pos: n.Pos, Attrs: map[string]string{}}
		for _, a := range n.Attrs {
			d.Attrs[a.Name] = a.Value
		}
		if v, ok := d.Attrs["document_root"]; ok && d.Attrs["dir"] == "" {
			d.Attrs["dir"] = v
		}
		t, known := adaptors.LookupKind(d.Type)
		if !known {
			continue // reported by schema.Check
		}
		d.Ignored = t.Ignored
		sessionRefused := false
		if t.Check.Decl != nil && !d.Ignored {
			for _, p := range t.Check.Decl(adaptors.Decl{Name: d.Name, Attrs: d.Attrs, Dir: filepath.Dir(c.file)}) {
				c.problem(n, d.Name, p)
				sessionRefused = sessionRefused || p.Attr == "session" && !p.Warning
			}
		}
		if d.Name == "" {
			continue
		}
		for _, b := range builtinSources {
			if d.Name == b {
				c.errorf(n.Pos, "adaptor name %q is reserved for seat's built-in event source", d.Name)
			}
		}
		if prev, dup := c.adaptors[d.Name]; dup {
			c.errorf(n.Pos, "adaptor %q is declared twice (first at %d:%d)", d.Name, prev.Pos.Line, prev.Pos.Col)
			continue
		}
		perType[d.Type]++
		if t.Max > 0 && perType[d.Type] > t.Max {
			c.errorf(n.Pos, "only %d adaptor of type %q is allowed", t.Max, d.Type)
		}
		if sess := d.Attrs["session"]; sess == "peer" || sess == "topic" {
			a, _ := n.Attr("session")
			switch {
			case sessionRefused:
			case p.Session != "":
				c.errorf(a.Pos, "adaptor %q: only one adaptor may open sessions; %q does already", d.Name, p.Session)
			default:
				p.Session = d.Name
				if max, ok := d.Attrs["maxsessions"]; ok && sess == "peer" {
					d.Attrs["maxconns"] = max // a refused peer is counted as the adaptor counts refusals
				}
			}
		} else if _, ok := d.Attrs["maxsessions"]; ok {
			a, _ := n.Attr("maxsessions")
			c.warnf(a.Pos, "adaptor %q: maxsessions has no effect without session", d.Name)
		}
		if a, ok := n.Attr("sessionidle"); ok && d.Attrs["session"] != "topic" {
			c.warnf(a.Pos, "adaptor %q: sessionidle is for session=\"topic\"; other sessions end when their peer disconnects", d.Name)
		}
		c.adaptors[d.Name] = d
		p.Adaptors = append(p.Adaptors, *d)
	}
	c.checkRefs(g)
}

// checkRefs reports the attributes that name another adaptor
// (adaptors.Check.Refs) when it is not one of the kind they need.
func (c *compiler) checkRefs(g *schema.Node) {
	for _, n := range g.Children {
		if n.Name != "adaptor" {
			continue
		}
		k, _ := adaptors.LookupKind(n.AttrValue("type"))
		for attr, kind := range k.Check.Refs {
			a, ok := n.Attr(attr)
			if !ok || a.Value == "" {
				continue
			}
			name := n.AttrValue("name")
			if kind == adaptors.AnyAdaptors {
				for _, ref := range strings.Split(a.Value, ",") {
					if ref = strings.TrimSpace(ref); c.adaptors[ref] == nil {
						c.errorf(a.ValuePos, "adaptor %q: %s names no adaptor %q of this behavior", name, attr, ref)
					}
				}
				continue
			}
			switch d := c.adaptors[a.Value]; {
			case d == nil:
				c.errorf(a.ValuePos, "adaptor %q: %s names no adaptor %q (it names a %s adaptor of this behavior)", name, attr, a.Value, kind)
			case d.Type != kind:
				c.errorf(a.ValuePos, "adaptor %q: %s names adaptor %q, a %s adaptor; it names a %s adaptor", name, attr, a.Value, d.Type, kind)
			}
		}
	}
}

// declareState declares the state n, inside parent (nil: at the top
// level), and the states it holds.
func (c *compiler) declareState(n *schema.Node, parent *State) {
	name := n.AttrValue("name")
	if name == "" {
		return
	}
	if name == "all" {
		c.errorf(n.Pos, `state name "all" is reserved: eSEAT merged it into general; put its rules in <general>`)
		return
	}
	if prev, dup := c.prog.stateByName[name]; dup {
		c.errorf(n.Pos, "state %q is declared twice (first at %d:%d)", name, prev.Pos.Line, prev.Pos.Col)
		return
	}
	s := &State{Name: name, Pos: n.Pos, Parent: parent, XML: n}
	switch n.Name {
	case "parallel":
		s.Kind = statechart.Parallel
	case "final":
		s.Kind = statechart.Final
	case "history":
		s.Kind = statechart.ShallowHistory
		if n.AttrValue("type") == "deep" {
			s.Kind = statechart.DeepHistory
		}
	}
	if parent != nil {
		parent.Children = append(parent.Children, s)
		c.prog.Nested = true
	} else if s.Kind != statechart.Basic {
		c.prog.Nested = true
	}
	c.prog.stateByName[name] = s
	c.prog.States = append(c.prog.States, s)
	for _, ch := range n.Children {
		switch ch.Name {
		case "state", "parallel", "final", "history":
			c.declareState(ch, s)
		}
	}
}

// resolveInitials finds each compound state's initial child: its initial
// attribute, which names a state inside it, else its first child state
// (SCXML's default). A history state needs a parent that holds states.
func (c *compiler) resolveInitials() {
	for _, s := range c.prog.States {
		var kids []string
		for _, ch := range s.Children {
			if !ch.Kind.IsHistory() {
				kids = append(kids, ch.Name)
				if s.initial == nil {
					s.initial = ch
				}
			}
		}
		if s.Kind.IsHistory() && (s.Parent == nil || !holdsStates(s.Parent.XML)) {
			c.errorf(s.Pos, "history %q is not inside a state that holds states: it has nothing to remember", s.Name)
		}
		a, ok := s.XML.Attr("initial")
		if !ok || s.Kind != statechart.Basic {
			continue // the schema refuses initial on the others
		}
		name := strings.TrimSpace(a.Value)
		t := c.prog.stateByName[name]
		switch {
		case len(kids) == 0:
			c.errorf(a.Pos, "state %q holds no states for initial to name", s.Name)
		case t == nil:
			c.errorf(a.ValuePos, "initial %q: no such state%s", name, schema.DidYouMean(name, kids, "%q"))
		case !descends(t, s):
			c.errorf(a.ValuePos, "initial %q is not inside state %q%s", name, s.Name, schema.DidYouMean(name, kids, "%q"))
		case t.Kind.IsHistory():
			c.errorf(a.ValuePos, "initial %q is a history state, which starts from its parent's initial state: name a state%s", name, schema.DidYouMean(name, kids, "%q"))
		default:
			s.initial = t
		}
	}
}

// holdsStates reports whether an element holds a state, parallel or
// final state.
func holdsStates(n *schema.Node) bool {
	for _, ch := range n.Children {
		switch ch.Name {
		case "state", "parallel", "final":
			return true
		}
	}
	return false
}

// descends reports whether s is inside a (not a itself).
func descends(s, a *State) bool {
	for p := s.Parent; p != nil; p = p.Parent {
		if p == a {
			return true
		}
	}
	return false
}

func (c *compiler) compileGeneral(g *schema.Node) {
	for _, n := range g.Children {
		switch n.Name {
		case "var":
			c.compileVar(n)
		case "script":
			var chunks []*luadm.Code
			if f, ok := n.Attr("execfile"); ok {
				if ch := c.execfile(f); ch != nil {
					chunks = append(chunks, ch)
				}
			}
			if ch := c.luaChunk(n, false); ch != nil {
				chunks = append(chunks, ch)
			}
			c.prog.Setup = append(c.prog.Setup, SetupItem{Pos: n.Pos, Chunks: chunks})
		case "onexec":
			c.prog.General.OnExec = c.actions(n, nil, false)
		case "ontimeout":
			c.prog.General.Timeout = c.timeout(n)
		case "onconnect", "ondisconnect":
			c.connection(c.prog.General, n, nil)
		case "rule":
			c.rules(c.prog.General, n, nil)
		}
	}
}

var numberRE = regexp.MustCompile(`^[+-]?(0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)$`)

func (c *compiler) compileVar(n *schema.Node) {
	name := n.AttrValue("name")
	if reservedGlobals[name] {
		c.errorf(n.Pos, "var name %q is defined by seat; choose another name", name)
		return
	}
	raw := n.AttrValue("value")
	var v lua.LValue = lua.LString(raw)
	if t := strings.TrimSpace(raw); numberRE.MatchString(t) {
		if f, err := parseLuaNumber(t); err == nil {
			v = lua.LNumber(f)
		}
	}
	c.prog.Setup = append(c.prog.Setup, SetupItem{Pos: n.Pos, IsVar: true, Name: name, Value: v})
}

func (c *compiler) compileState(s *State, n *schema.Node) {
	ids := map[string]*schema.Node{}
	for _, ch := range n.Children {
		switch ch.Name {
		case "onentry":
			s.OnEntry = c.actions(ch, s, false)
		case "onexit":
			s.OnExit = c.actions(ch, s, true)
		case "onexec":
			s.OnExec = c.actions(ch, s, false)
		case "ontimeout":
			s.Timeout = c.timeout(ch)
		case "onconnect", "ondisconnect":
			c.connection(&s.Scope, ch, s)
		case "rule":
			c.rules(&s.Scope, ch, s)
		case "label", "brk", "space", "button", "input", "text":
			c.widget(s, ch, ids)
		}
	}
}

func (c *compiler) widget(s *State, n *schema.Node, ids map[string]*schema.Node) {
	w := &Widget{Kind: n.Name, Pos: n.Pos, State: s.Name, Attrs: map[string]string{}}
	for _, a := range n.Attrs {
		w.Attrs[a.Name] = a.Value
	}
	switch n.Name {
	case "button":
		w.ID, w.Label = n.AttrValue("label"), n.AttrValue("label")
	case "input", "text":
		w.ID = n.AttrValue("id")
		w.Initial = strings.TrimSpace(n.Text)
		if v, ok := n.Attr("value"); ok {
			switch {
			case w.Initial == "":
				w.Initial = v.Value
			case v.Value != "" && v.Value != w.Initial:
				c.warnf(v.Pos, "<%s> has both a text (%q) and value=%q; the text is its first value, as in eSEAT", n.Name, w.Initial, v.Value)
			}
			delete(w.Attrs, "value")
		}
	}
	if w.ID != "" {
		if prev, dup := ids[w.ID]; dup {
			c.errorf(n.Pos, "widget id or label %q is used twice in state %q (first at %d:%d)", w.ID, s.Name, prev.Pos.Line, prev.Pos.Col)
		} else {
			ids[w.ID] = n
			w.Ref = s.Name + ":" + w.ID
			c.prog.WidgetByRef[w.Ref] = w
		}
	}
	if n.Name == "button" || n.Name == "input" || n.Name == "text" {
		w.Actions = c.actions(n, s, false)
	}
	s.Widgets = append(s.Widgets, w)
}

func (c *compiler) timeout(n *schema.Node) *Timeout {
	f, ok := schema.ParseNumber(n.AttrValue("timeout"))
	if !ok || !schema.TimeoutRange.Contains(f) {
		return nil // reported by schema.Check
	}
	return &Timeout{After: time.Duration(f * float64(time.Second)), Actions: c.actions(n, nil, false)}
}

// connection compiles an onconnect or ondisconnect list: its source must
// be a socket or web adaptor, and each scope has one per source.
func (c *compiler) connection(sc *Scope, n *schema.Node, s *State) {
	a, ok := n.Attr("source")
	if !ok {
		return // reported by schema.Check
	}
	name := strings.TrimSpace(a.Value)
	// A topic session's sender has no connection, but its session ends
	// when it falls idle: that is its ondisconnect.
	var connectable []string
	for _, d := range c.prog.Adaptors {
		k := c.kindOf(d.Name)
		if k.Has(adaptors.Connections) || n.Name == "ondisconnect" && k.Has(adaptors.SessionsEndIdle) && d.Attrs["session"] == "topic" {
			connectable = append(connectable, d.Name)
		}
	}
	if !slices.Contains(connectable, name) {
		why := "is not a declared adaptor"
		if t := c.adaptorType(name); t != "" {
			why = fmt.Sprintf("is %s %s adaptor, which has no connections (%s adaptors do)", article(t), t, strings.Join(adaptors.KindsWith(adaptors.Connections), " and "))
			if c.kindOf(name).Has(adaptors.SessionsEndIdle) {
				why += "; in a topic session (session=\"topic\") <ondisconnect> runs when a sender's session ends idle"
			}
		}
		c.errorf(a.ValuePos, "<%s> source %q %s%s", n.Name, name, why, schema.DidYouMean(name, connectable, "%q"))
		return
	}
	lists := &sc.OnConnect
	if n.Name == "ondisconnect" {
		lists = &sc.OnDisconnect
	}
	if *lists == nil {
		*lists = map[string][]Action{}
	}
	if _, dup := (*lists)[name]; dup {
		c.errorf(n.Pos, "<%s source=%q> appears twice in this scope", n.Name, name)
		return
	}
	(*lists)[name] = c.actions(n, s, false)
}

// sourceOK reports whether name may be used as an event source.
func (c *compiler) sourceOK(pos schema.Pos, what, name string) bool {
	if _, ok := c.adaptors[name]; ok {
		return true
	}
	for _, b := range builtinSources {
		if name == b {
			c.prog.UsesDevices = c.prog.UsesDevices || name == "memory" || name == "motion"
			c.prog.HearsInternal = c.prog.HearsInternal || name == InternalSource
			return true
		}
	}
	c.errorf(pos, "%s %q is not a declared adaptor%s", what, name, schema.DidYouMean(name, c.sourceNames(), "%q"))
	return false
}

func (c *compiler) sourceNames() []string {
	names := append([]string{}, builtinSources...)
	for n := range c.adaptors {
		names = append(names, n)
	}
	return names
}

func (c *compiler) rules(scope *Scope, n *schema.Node, s *State) {
	if f, ok := n.Attr("file"); ok {
		c.include(scope, s, n, f)
		return
	}
	r := &Rule{ID: len(c.prog.Rules), Pos: n.Pos}

	if a, ok := n.Attr("source"); ok {
		r.Source = a.Value
		c.sourceOK(a.ValuePos, "rule source", a.Value)
	}
	for _, ch := range n.Children {
		switch ch.Name {
		case "key":
			c.key(r, ch)
		case "cond":
			r.Cond = c.luaChunk(ch, true)
			if f, ok := ch.Attr("execfile"); ok {
				r.CondPre = c.execfile(f) // eSEAT's pre_script: run before the cond
			}
		}
	}
	r.Actions = c.actions(n, s, false)
	c.prog.Rules = append(c.prog.Rules, r)
	if len(r.Words) == 0 && !hasChild(n, "key") {
		scope.DataRules = append(scope.DataRules, r)
		return
	}
	scope.Rules = append(scope.Rules, r)
}

func hasChild(n *schema.Node, name string) bool {
	for _, c := range n.Children {
		if c.Name == name {
			return true
		}
	}
	return false
}

func (c *compiler) key(r *Rule, n *schema.Node) {
	source := r.Source
	if a, ok := n.Attr("source"); ok {
		source = a.Value
		c.sourceOK(a.ValuePos, "key source", a.Value)
	}
	text := strings.TrimSpace(n.Text)
	r.Keys = append(r.Keys, text)
	if textSource(source) {
		c.wideSyntax(n.TextPos, text)
	}
	words, err := c.ld.expand(text)
	if err != nil {
		ke := err.(*KeyError)
		pos := n.TextPos
		if text == "" {
			pos = n.Pos
		}
		c.errorf(pos.Advance(text[:ke.Offset]), "key %q: %s", schema.Excerpt(text, maxQuoted), ke.Msg)
		return
	}
	heard := c.hearing(source)
	comma, bad := false, false
	for _, w := range words {
		if heard != nil {
			if err := heard(w); err != nil {
				c.warnf(n.TextPos, "key %q cannot be listened for by adaptor %q: %v; the rule still fires on text that matches it", schema.Excerpt(w, maxQuoted), source, err)
			}
		}
		re, err := c.ld.pattern(w)
		if err != nil {
			if !bad { // once per key, not once per word it expands to
				c.errorf(n.TextPos, "key word %q: invalid pattern: %v%s", schema.Excerpt(w, maxQuoted), err, keyHint(text))
				bad = true
			}
			continue
		}
		if !comma && textSource(source) && hasLiteralComma(w) {
			comma = true
			c.warnf(n.TextPos, "key %q can never fire: events are matched up to their first comma (\"はい,0.93\" is matched as \"はい\"); for a button label, give the rule source=\"gui\"", schema.Excerpt(text, maxQuoted))
		}
		r.Words = append(r.Words, &Word{Text: w, Source: source, Pos: n.TextPos, RE: re, Rule: r})
	}
}

// wideSyntax warns of the full-width characters in a key that look like
// key syntax, as an input method types them, and of an ideographic space:
// each matches only itself, so a key meant as syntax never matches. Once
// per character, at its first place; a character escaped with \ is meant.
func (c *compiler) wideSyntax(pos schema.Pos, text string) {
	if !strings.ContainsAny(text, wideKeyChars) {
		return
	}
	seen := map[rune]bool{}
	for i, r := range text {
		say, ok := wideKeySyntax[r]
		if !ok || seen[r] || seen[wideOpening[r]] || i > 0 && text[i-1] == '\\' {
			continue // told once per character, and once for a pair
		}
		seen[r] = true
		c.warnf(pos.Advance(text[:i]), "key %q: %s", schema.Excerpt(text, maxQuoted), say)
	}
}

// wideKeySyntax says what each full-width look-alike of key syntax
// probably meant.
var wideKeySyntax = map[rune]string{
	'（':      "full-width \"（…）\" is matched as characters, never as a group: write ASCII ( ), as in (はい|ええ) for one of several words or (どうぞ|) for an optional one",
	'）':      "full-width \"）\" is matched as a character, never as the end of a group: write ASCII )",
	'｜':      "full-width \"｜\" is matched as a character, never between alternatives: write ASCII |",
	'［':      "full-width \"［…］\" is matched as characters, never as optional text: write ASCII [ ], as in お願い[します]",
	'］':      "full-width \"］\" is matched as a character, never as the end of optional text: write ASCII ]",
	'＄':      "full-width \"＄\" is matched as a character, never as the end of the text: write ASCII $",
	'\u3000': "an ideographic space (U+3000, full-width) is matched only by itself: write a plain space if the text has one (\\s matches either)",
}

// wideOpening maps a closing full-width bracket to its opening one.
var wideOpening = map[rune]rune{'）': '（', '］': '［'}

const wideKeyChars = "（）｜［］＄\u3000"

// keyHint says what a key whose pattern does not compile probably meant:
// a script RE2 does not know (\p{Kanji}), or [...] written as a regular
// expression's character class, which a SEATML key reads as optional
// text ([0-9]+個 expands to "0-9+個" and "+個").
func keyHint(text string) string {
	switch {
	case strings.Contains(text, `\p{Kanji}`) || strings.Contains(text, `\P{Kanji}`):
		return `; RE2 has no \p{Kanji}: write \p{Han} for kanji`
	case strings.Contains(text, "["):
		return `; in a SEATML key [...] is optional text, not a character class: write \d for a digit, (a|b) for one of several`
	}
	return ""
}

// adaptorType returns the type of a declared adaptor, or "".
func (c *compiler) adaptorType(name string) string {
	if d := c.adaptors[name]; d != nil {
		return d.Type
	}
	return ""
}

// article is "an" before a vowel's sound, else "a": a word without
// vowels is read letter by letter ("an mqtt", "a stdio").
func article(word string) string {
	if word == "" {
		return "a"
	}
	vowels := "aeiou"
	if !strings.ContainsAny(word, vowels) {
		vowels = "aefhilmnorsx" // letters whose names begin with a vowel
	}
	if strings.ContainsRune(vowels, rune(word[0])) {
		return "an"
	}
	return "a"
}

// hearing is what checks a key of a rule whose source is a recognizer
// (a kind with adaptors.Grammar and Check.Keys), or nil; made once per
// adaptor and file.
func (c *compiler) hearing(source string) func(key string) error {
	if h, ok := c.hearers[source]; ok {
		return h
	}
	var h func(string) error
	k, d := c.kindOf(source), c.adaptors[source]
	if k.Has(adaptors.Grammar) && k.Check.Keys != nil && d != nil {
		h = k.Check.Keys(adaptors.Decl{Name: d.Name, Attrs: d.Attrs, Dir: filepath.Dir(c.file)})
	}
	if c.hearers == nil {
		c.hearers = map[string]func(string) error{}
	}
	c.hearers[source] = h
	return h
}

// kindOf is the kind of the adaptor declared as name (the zero Kind when
// there is none).
func (c *compiler) kindOf(name string) adaptors.Kind {
	if d := c.adaptors[name]; d != nil && !d.Ignored {
		k, _ := adaptors.LookupKind(d.Type)
		return k
	}
	return adaptors.Kind{}
}

// hasPage reports whether an adaptor shows the widgets on pages.
func (c *compiler) hasPage() bool {
	for _, d := range c.prog.Adaptors {
		if c.kindOf(d.Name).Has(adaptors.Page) {
			return true
		}
	}
	return false
}

// problem reports what a kind's check found in declaration n.
func (c *compiler) problem(n *schema.Node, name string, p adaptors.Problem) {
	pos := n.Pos
	a, ok := n.Attr(p.Attr)
	if !ok { // the problem may be in its eSEAT spelling
		if k, _ := adaptors.LookupKind(n.AttrValue("type")); k.Attrs != nil {
			for alias, spec := range k.Attrs {
				if spec.Alias == p.Attr && !ok {
					a, ok = n.Attr(alias)
				}
			}
		}
	}
	if ok {
		pos = a.ValuePos
		if p.AtName {
			pos = a.Pos
		}
	}
	msg := p.Msg
	if !p.Whole {
		msg = fmt.Sprintf("adaptor %q: %s", name, p.Msg)
	}
	if p.Warning || p.Machine && !c.ld.opts.HereAndNow {
		c.warnf(pos, "%s", msg)
	} else {
		c.errorf(pos, "%s", msg)
	}
}

// internalSource is the source of internal events.
const InternalSource = "event"

// maxQuoted is how many characters of a key a diagnostic quotes.
const maxQuoted = 60

// textSource reports whether events of source are matched on their text up
// to its first comma (§5 step 1): not widget or device-layer events.
func textSource(source string) bool {
	return !slices.Contains(builtinSources, source)
}

// include compiles the rules named by <rule file="path[:state]"> into scope.
func (c *compiler) include(scope *Scope, s *State, n *schema.Node, f schema.Attr) {
	spec := strings.TrimSpace(f.Value)
	path, stateName := spec, ""
	if i := strings.LastIndex(spec, ":"); i >= 0 {
		path, stateName = spec[:i], spec[i+1:]
	}
	if path == "" {
		c.errorf(f.ValuePos, "rule file %q: no file named", spec)
		return
	}
	full := filepath.Clean(filepath.Join(filepath.Dir(c.file), path))
	chain := append(append([]include{}, c.chain...), include{file: c.file, pos: n.Pos, attr: path})
	for i, inc := range chain {
		if inc.file == full {
			names := make([]string, 0, len(chain)-i+1)
			for _, x := range chain[i:] {
				names = append(names, x.file)
			}
			names = append(names, full)
			c.errorf(inc.pos, "rule file %q: include cycle: %s", inc.attr, strings.Join(names, " -> "))
			return
		}
	}
	pf := c.ld.parse(full)
	if pf.err != nil {
		c.errorf(f.ValuePos, "rule file %q: %v", path, schema.FileCause(pf.err))
		return
	}
	if pf.root == nil {
		c.errorf(f.ValuePos, "rule file %q has errors", path)
		return
	}
	if !c.ld.validated[full] {
		c.ld.load(full, chain)
	}
	var target *schema.Node
	for _, s := range pf.root.Children {
		if s.Name == "state" && (stateName == "" || s.AttrValue("name") == stateName) {
			target = s
			break
		}
	}
	if target == nil {
		var names []string
		for _, s := range pf.root.Children {
			if s.Name == "state" {
				names = append(names, s.AttrValue("name"))
			}
		}
		hint := schema.DidYouMean(stateName, names, "%q")
		if hint == "" {
			hint = " (its states: " + strings.Join(names, ", ") + ")"
		}
		c.errorf(f.ValuePos, "rule file %q: %s has no state %q%s", spec, full, stateName, hint)
		return
	}
	// Rules of the included state compile here, in this behavior, with the
	// included file's positions; nested includes resolve from that file.
	sub := &compiler{ld: c.ld, file: full, chain: chain, prog: c.prog, adaptors: c.adaptors, pending: c.pending,
		via: fmt.Sprintf(" (in rules included by %s)", n.Pos)}
	for _, ch := range target.Children {
		if ch.Name == "rule" {
			sub.rules(scope, ch, s)
		}
	}
}

// actions compiles the action children of n. s is the enclosing state (nil
// in general); inExit marks onexit lists.
func (c *compiler) actions(n *schema.Node, s *State, inExit bool) []Action {
	var out []Action
	for _, ch := range n.Children {
		a := Action{Pos: ch.Pos, InExit: inExit}
		switch ch.Name {
		case "message":
			a.Kind = ActMessage
			a.Text = ch.Text
			a.SendTo = c.sendto(ch)
			a.Slot = c.adaptorSlot(a.SendTo)
			if in, ok := ch.Attr("input"); ok {
				a.Input = in.Value
				if w := c.prog.WidgetByRef[in.Value]; w == nil || (w.Kind != "input" && w.Kind != "text") {
					c.widgetRefLater(in)
				}
			}
			if d := c.adaptors[a.SendTo]; d != nil && a.Input == "" {
				if chk := c.kindOf(d.Name).Check; chk.Message != nil {
					if err := chk.Message(adaptors.Decl{Name: d.Name, Attrs: d.Attrs, Dir: filepath.Dir(c.file)}, a.Text); err != nil {
						c.errorf(ch.Pos, "message to %q would not be sent: %v", a.SendTo, err)
					}
				}
			}
			a.Topic = ch.AttrValue("topic")
			a.Retain = ch.AttrValue("retain") == "true"
			if t, ok := ch.Attr("topic"); ok && !c.kindOf(a.SendTo).Has(adaptors.Topics) {
				c.errorf(t.Pos, "topic= is for messages to an MQTT adaptor; %q is not one", a.SendTo)
			} else if ok && schema.TopicProblem(t.Value, false) == "" && (t.Value == "" ||
				strings.Contains(t.Value, "+") && (a.SendTo != c.prog.Session || c.adaptors[a.SendTo].Attrs["session"] != "topic")) {
				c.errorf(t.ValuePos, "topic %q: want a topic to publish to, without wildcards (a + is filled only in a topic session, with its value)", t.Value)
			}
			if r, ok := ch.Attr("retain"); ok && !c.kindOf(a.SendTo).Has(adaptors.Topics) {
				c.errorf(r.Pos, "retain= is for messages to an MQTT adaptor; %q is not one", a.SendTo)
			}
			a.Encode = identity
			if e, ok := ch.Attr("encode"); ok {
				enc, err := encoder(e.Value)
				if err != nil {
					c.errorf(e.ValuePos, "%v", err)
				}
				a.Encode = enc
				if c.kindOf(a.SendTo).Has(adaptors.UTF8) && err == nil && !isUTF8(e.Value) {
					// A page decodes frames as UTF-8: encoded bytes would be mojibake.
					c.warnf(e.Pos, "encode=%q has no effect on web adaptor %q: WebSocket frames are UTF-8, so the message is sent as UTF-8", e.Value, a.SendTo)
					a.Encode = identity
				}
			}
		case "raise":
			a.Kind = ActRaise
			a.Text = strings.TrimSpace(ch.AttrValue("event"))
			if ev, _ := ch.Attr("event"); a.Text == "" || strings.ContainsAny(a.Text, " \t\r\n") {
				c.errorf(ev.ValuePos, "event name %q: an event name is one word, without spaces (dots separate its parts: 挨拶.朝)", a.Text)
			}
		case "statetransition":
			a.Kind = ActTransition
			target := strings.TrimSpace(ch.Text)
			switch ch.AttrValue("func") {
			case "pop":
				a.Fn = TransPop
				if target != "" {
					c.warnf(ch.TextPos, "statetransition func=\"pop\" takes no target; %q is ignored", target)
				}
			case "push":
				a.Fn = TransPush
			}
			if a.Fn != TransPop {
				if target == "" {
					c.errorf(ch.Pos, "statetransition needs a target state")
				} else if a.Target = c.prog.stateByName[target]; a.Target == nil {
					c.errorf(ch.TextPos, "statetransition target %q is not a declared state%s", target, c.stateHint(target))
				}
			}
			if inExit {
				c.warnf(ch.Pos, "statetransition in <onexit> is refused: a transition is already under way")
			}
		case "log":
			a.Kind = ActLog
			a.Text = strings.TrimSpace(ch.Text)
			a.Level = zapcore.InfoLevel
			if l, ok := ch.Attr("level"); ok {
				_ = a.Level.Set(l.Value)
			}
		case "shell":
			a.Kind = ActShell
			a.Text = strings.TrimSpace(ch.Text)
			a.SendTo = c.sendto(ch)
			if !c.ld.opts.AllowShell {
				c.errorf(ch.Pos, "<shell> is disabled; start seat with --allow-shell to allow it")
			}
		case "script":
			a.Kind = ActScript
			a.SendTo = c.sendto(ch)
			if strings.TrimSpace(ch.Text) == "" && strings.TrimSpace(ch.Comments) != "" {
				c.warnf(ch.Pos, "the script's code is inside an XML comment (<!-- -->), which eSEAT ran and seat does not: seat port makes it the script's text, or take the comment marks away (a CDATA section keeps < and & as they are)")
			}
			if f, ok := ch.Attr("execfile"); ok {
				if chk := c.execfile(f); chk != nil {
					a.Chunks = append(a.Chunks, chk)
				}
			}
			if chk := c.luaChunk(ch, false); chk != nil {
				a.Chunks = append(a.Chunks, chk)
			}
		case "motion":
			a.Kind = ActMotion
			a.Motion = c.motion(ch)
			c.prog.UsesDevices = true
		default:
			continue
		}
		out = append(out, a)
	}
	return out
}

// widgetRefLater checks a message input= reference once every state's
// widgets are known.
func (c *compiler) widgetRefLater(in schema.Attr) {
	*c.pending = append(*c.pending, func() {
		w := c.prog.WidgetByRef[in.Value]
		switch {
		case !strings.Contains(in.Value, ":"):
			c.errorf(in.ValuePos, "message input %q must name a widget as \"state:id\"", in.Value)
		case w == nil:
			c.errorf(in.ValuePos, "message input %q is not a declared input or text widget%s", in.Value, schema.DidYouMean(in.Value, c.widgetRefs(), "%q"))
		case w.Kind != "input" && w.Kind != "text":
			c.errorf(in.ValuePos, "message input %q is a %s, not an input or text widget", in.Value, w.Kind)
		}
	})
}

func (c *compiler) widgetRefs() []string {
	var out []string
	for ref, w := range c.prog.WidgetByRef {
		if w.Kind == "input" || w.Kind == "text" {
			out = append(out, ref)
		}
	}
	return out
}

// stateHint is what an error about an undeclared state name adds: the
// declared state it is close to, else the declared states.
func (c *compiler) stateHint(name string) string {
	names := c.stateNames()
	if hint := schema.DidYouMean(name, names, "%q"); hint != "" || len(names) == 0 {
		return hint
	}
	return " (the states: " + schema.Names(names, maxNamesListed) + ")"
}

// maxNamesListed is how many names an error lists when none is close.
const maxNamesListed = 12

func (c *compiler) stateNames() []string {
	out := make([]string, 0, len(c.prog.States))
	for _, s := range c.prog.States {
		out = append(out, s.Name)
	}
	return out
}

// sendto checks an action's sendto (or its alias host); a missing one that
// is required was reported by schema.Check.
func (c *compiler) sendto(n *schema.Node) string {
	a, ok := n.Attr("sendto")
	if !ok {
		a, ok = n.Attr("host")
	}
	if !ok {
		return ""
	}
	if _, declared := c.adaptors[a.Value]; !declared {
		c.errorf(a.Pos, "%s sendto %q is not a declared adaptor%s", n.Name, a.Value, schema.DidYouMean(a.Value, c.adaptorNames(), "%q"))
	}
	return a.Value
}

// adaptorSlot returns the index of a declared adaptor, or -1.
func (c *compiler) adaptorSlot(name string) int {
	for i, d := range c.prog.Adaptors {
		if d.Name == name {
			return i
		}
	}
	return -1
}

func (c *compiler) adaptorNames() []string {
	out := make([]string, 0, len(c.adaptors))
	for n := range c.adaptors {
		out = append(out, n)
	}
	return out
}

// execfile reads and compiles a Lua file named relative to the behavior.
func (c *compiler) execfile(a schema.Attr) *luadm.Code {
	if strings.EqualFold(filepath.Ext(a.Value), ".py") {
		c.errorf(a.ValuePos, "execfile %q is a Python file (eSEAT's); seat runs Lua: port the helper to Lua and name the .lua file here (docs/porting.md)", a.Value)
		return nil
	}
	// Held to the behavior's directory, a regular file and a size, as
	// an SCXML document's src files are.
	dir := filepath.Dir(c.file)
	data, err := srcfile.Read(dir, a.Value)
	if err != nil {
		c.errorf(a.ValuePos, "execfile %q: %v", a.Value, err)
		return nil
	}
	path := filepath.Join(dir, a.Value)
	return c.ld.queueLua(path, string(data), 1, 1, false)
}

// luaChunk compiles an element's text as Lua; nil if the text is blank.
func (c *compiler) luaChunk(n *schema.Node, expr bool) *luadm.Code {
	if strings.TrimSpace(n.Text) == "" {
		if expr {
			c.errorf(n.Pos, "<cond> is empty")
		}
		return nil
	}
	return c.ld.queueLua(n.Pos.File, n.Text, n.ContentPos.Line, n.ContentPos.Col, expr)
}

// luaJob is a chunk waiting to be checked.
type luaJob struct {
	ch   *luadm.Code
	diag *schema.Diagnostic
}

// queueLua returns a chunk that compileAll checks once every file is read.
func (ld *loader) queueLua(file, src string, line, col int, expr bool) *luadm.Code {
	ch := luadm.NewChunk(src, schema.Pos{File: file, Line: line, Col: col}, expr, len(ld.luaJobs)+1)
	ld.luaJobs = append(ld.luaJobs, &luaJob{ch: ch})
	return ch
}

// compileAll checks every queued chunk on every core: chunks that
// mayFailToCompile compile one by one; the others are parsed together, a
// group at a time, and one by one only when their group has an error.
func (ld *loader) compileAll() {
	var risky, plain []*luaJob
	for _, j := range ld.luaJobs {
		if luadm.MayFailToCompile(j.ch.Src) {
			risky = append(risky, j)
		} else {
			plain = append(plain, j)
		}
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(risky); i += workers {
				risky[i].diag = risky[i].ch.Check()
			}
			lo, hi := w*len(plain)/workers, (w+1)*len(plain)/workers
			if group := plain[lo:hi]; !parseTogether(group) {
				for _, j := range group {
					j.diag = j.ch.Check()
				}
			}
		}()
	}
	wg.Wait()
	defined := definedGlobals(ld.luaJobs)
	for _, j := range ld.luaJobs {
		switch {
		case j.diag != nil:
			pythonDiagnostic(j.ch, j.diag) // a body that fails as Lua and looks like Python says so
			ld.diags = append(ld.diags, *j.diag)
		default:
			ld.diags.Add(pythonisms(j.ch, defined))
		}
	}
	ld.luaJobs = nil
}

// parseTogether parses chunks as one Lua source, each in a block of its
// own, and reports whether every chunk is valid. It is sound: a chunk that
// is not a valid block on its own would move a block's first or last line.
func parseTogether(jobs []*luaJob) bool {
	if len(jobs) == 0 {
		return true
	}
	var b strings.Builder
	type span struct{ first, last int }
	spans := make([]span, len(jobs))
	line := 1
	for i, j := range jobs {
		open, close := "do\n", "\nend\n"
		if j.ch.IsCond() {
			open, close = "do local _ = (\n", "\n) end\n"
		}
		b.WriteString(open)
		b.WriteString(j.ch.Src)
		b.WriteString(close)
		// The opening line, the chunk's lines, the closing line.
		last := line + 1 + strings.Count(j.ch.Src, "\n") + 1
		spans[i] = span{line, last}
		line = last + 1
	}
	stmts, err := parse.Parse(strings.NewReader(b.String()), "check")
	if err != nil || len(stmts) != len(jobs) {
		return false
	}
	for i, st := range stmts {
		do, ok := st.(*ast.DoBlockStmt)
		if !ok || do.Line() != spans[i].first || do.LastLine() != spans[i].last {
			return false
		}
		if jobs[i].ch.IsCond() { // exactly "local _ = (expr)": the text stayed inside its parentheses
			la, ok := firstLocal(do.Stmts)
			if !ok || len(la.Names) != 1 || len(la.Exprs) != 1 {
				return false
			}
		}
	}
	return true
}

func firstLocal(stmts []ast.Stmt) (*ast.LocalAssignStmt, bool) {
	if len(stmts) != 1 {
		return nil, false
	}
	la, ok := stmts[0].(*ast.LocalAssignStmt)
	return la, ok
}

// indexAll builds the matching index of every scope and runs the checks
// that need every name.
func (c *compiler) indexAll() {
	for _, f := range *c.pending {
		f()
	}
	for _, s := range c.prog.States { // a state comes after the states around it
		switch {
		case s.Timeout != nil:
			s.InnerTimeout = s.Timeout
		case s.Parent != nil:
			s.InnerTimeout = s.Parent.InnerTimeout
		default:
			s.InnerTimeout = c.prog.General.Timeout
		}
	}
	c.index(c.prog.General)
	for _, s := range c.prog.States {
		c.index(&s.Scope)
	}
	// Sources become small numbers, so that matching indexes a slice.
	ids := map[string]int{"": 0}
	scopes := []*Scope{c.prog.General}
	for _, s := range c.prog.States {
		scopes = append(scopes, &s.Scope)
	}
	for _, sc := range scopes {
		for src := range sc.groups {
			if _, ok := ids[src]; !ok {
				ids[src] = len(ids)
			}
		}
	}
	for _, sc := range scopes {
		sc.BySource = make([]*Group, len(ids))
		for src, g := range sc.groups {
			sc.BySource[ids[src]] = g
		}
	}
	c.prog.SourceIDs = ids
}

func (c *compiler) index(sc *Scope) {
	sc.groups = map[string]*Group{}
	held := map[[2]string]*Rule{}
	for _, r := range sc.Rules {
		for _, w := range r.Words {
			g := sc.groups[w.Source]
			if g == nil {
				g = &Group{Exact: map[string][]*Rule{}}
				sc.groups[w.Source] = g
			}
			if prev := held[[2]string{w.Source, w.Text}]; prev != nil && prev != r {
				c.warnf(w.Pos, "key word %q can never fire: the rule at %d:%d already takes it", schema.Excerpt(w.Text, maxQuoted), prev.Pos.Line, prev.Pos.Col)
			} else if r.Cond == nil {
				held[[2]string{w.Source, w.Text}] = r
			}
			if isPlain(w.Text) {
				if l := g.Exact[w.Text]; len(l) == 0 || l[len(l)-1] != r {
					g.Exact[w.Text] = append(g.Exact[w.Text], r)
				}
			}
			g.Patterns = append(g.Patterns, w)
		}
	}
}
