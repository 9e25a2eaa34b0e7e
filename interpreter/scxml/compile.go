// Package scxml is seat's SCXML front end: it reads W3C SCXML documents
// with datamodel="lua" and compiles them onto the statechart engine, and
// runs them in sessions with the SCXML event I/O processor (send, invoke,
// delayed events).
package scxml

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/srcfile"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// Document is a compiled SCXML document.
type Document struct {
	File  string
	Name  string // the name attribute
	Chart *statechart.Chart
	// data are the ids of the top-level datamodel, which an invoking
	// parent may set.
	data map[string]bool
}

// DataIDs are the ids of the top-level datamodel, sorted: the variables
// a debugger shows.
func (d *Document) DataIDs() []string {
	ids := make([]string, 0, len(d.data))
	for id := range d.data {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Load reads and compiles an SCXML file: a regular file of at most
// srcfile.MaxSize bytes.
func Load(file string) (*Document, schema.List) {
	data, err := srcfile.Read(filepath.Dir(file), filepath.Base(file))
	if err != nil {
		var l schema.List
		l.Errorf(schema.Pos{File: file}, "cannot read the document: %v", err)
		return nil, l
	}
	return Parse(file, data)
}

// Parse compiles an SCXML document read from file.
func Parse(file string, data []byte) (*Document, schema.List) {
	root, diags := schema.ParseXML(file, data)
	if diags.HasErrors() {
		return nil, diags
	}
	doc, more := Compile(file, root)
	diags.Add(more)
	return doc, diags
}

// Compile compiles an <scxml> element; file names the document, and
// relative src paths are read from its directory.
func Compile(file string, root *schema.Node) (*Document, schema.List) {
	c := newCompiler(file)
	doc := c.document(root)
	c.diags.Sort()
	if c.diags.HasErrors() {
		return nil, c.diags
	}
	return doc, c.diags
}

func newCompiler(file string) *compiler {
	return &compiler{file: file, dir: filepath.Dir(file), ids: map[string]*statechart.State{}, data: map[string]bool{}}
}

type compiler struct {
	file  string
	dir   string
	diags schema.List
	ids   map[string]*statechart.State
	// targets to resolve once every state is known
	pending []pendingTarget
	late    bool
	setup   []statechart.Block
	auto    int
	data    map[string]bool // the top-level data ids
}

type pendingTarget struct {
	t    *statechart.Transition
	ids  []string
	attr schema.Attr
}

func (c *compiler) errorf(pos schema.Pos, format string, args ...any) {
	c.diags.Errorf(pos, format, args...)
}

func (c *compiler) warnf(pos schema.Pos, format string, args ...any) {
	c.diags.Warnf(pos, format, args...)
}

func (c *compiler) document(n *schema.Node) *Document {
	if n.Name != "scxml" {
		c.errorf(n.Pos, "the root element is <%s>; an SCXML document's is <scxml>", n.Name)
		return nil
	}
	if n.Space != "" && n.Space != Namespace {
		c.errorf(n.Pos, "<scxml> is in the namespace %q; an SCXML document's is %q (xmlns=%q)", n.Space, Namespace, Namespace)
		return nil
	}
	if dm := n.AttrValue("datamodel"); dm != "" && dm != "lua" {
		a, _ := n.Attr("datamodel")
		c.errorf(a.ValuePos, "datamodel %q is not supported: seat runs datamodel=\"lua\"", dm)
	}
	c.validate(n, nil) // what is wrong is removed, and the rest compiled: every error at once
	c.late = n.AttrValue("binding") == "late"
	doc := &Document{File: c.file, Name: n.AttrValue("name"), data: c.data}
	root := &statechart.State{ID: "", Ext: n}
	c.children(root, n)
	for _, ch := range n.Children {
		if ch.Name == "script" {
			if b := c.script(ch); b != nil {
				c.setup = append(c.setup, statechart.Block{b})
			}
		}
	}
	c.resolve()
	if c.diags.HasErrors() {
		return nil // Build would only repeat them
	}
	chart, err := statechart.Build(root)
	if err != nil {
		pos := n.Pos
		var be *statechart.BuildError
		if errors.As(err, &be) {
			if at, ok := be.State.Ext.(*schema.Node); ok {
				pos = at.Pos
			}
		}
		c.errorf(pos, "%v", err)
		return nil
	}
	chart.Setup = c.setup
	doc.Chart = chart
	c.warnUnreachable(chart)
	return doc
}

// children compiles the state children, transitions, datamodel and
// executable content of n into s.
func (c *compiler) children(s *statechart.State, n *schema.Node) {
	for _, ch := range n.Children {
		switch ch.Name {
		case "state", "parallel", "final", "history":
			s.Children = append(s.Children, c.state(s, ch))
		case "transition":
			s.Transitions = append(s.Transitions, c.transition(ch))
		case "onentry":
			s.OnEntry = append(s.OnEntry, c.block(ch.Children))
		case "onexit":
			s.OnExit = append(s.OnExit, c.block(ch.Children))
		case "datamodel":
			c.datamodel(s, ch)
		case "invoke":
			s.Invokes = append(s.Invokes, c.invoke(ch))
		case "initial":
			for _, t := range ch.Children {
				if t.Name == "transition" {
					s.Initial = c.transition(t)
				}
			}
			if s.Initial == nil {
				c.errorf(ch.Pos, "<initial> needs a <transition>")
			}
		}
	}
	if a, ok := n.Attr("initial"); ok && (n.Name == "state" || n.Name == "scxml") {
		if s.Initial != nil {
			c.errorf(a.Pos, "state %q has both an initial attribute and an <initial> element", s.ID)
		}
		s.Initial = &statechart.Transition{}
		c.pending = append(c.pending, pendingTarget{t: s.Initial, ids: strings.Fields(a.Value), attr: a})
	}
}

func (c *compiler) state(parent *statechart.State, n *schema.Node) *statechart.State {
	s := &statechart.State{ID: n.AttrValue("id"), Parent: parent, Ext: n}
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
	if s.ID == "" {
		// '#' is not allowed in an XML id, so no document's id is this.
		c.auto++
		s.ID = fmt.Sprintf("#%d", c.auto)
	}
	if prev, dup := c.ids[s.ID]; dup {
		c.errorf(n.Pos, "state id %q is used twice (first at %s)", s.ID, prev.Ext.(*schema.Node).Pos)
	}
	c.ids[s.ID] = s
	if s.IsHistory() {
		for _, ch := range n.Children {
			if ch.Name == "transition" {
				s.Initial = c.transition(ch)
			}
		}
		return s // validate said if it has no transition
	}
	c.children(s, n)
	if s.Kind == statechart.Final {
		for _, ch := range n.Children {
			if ch.Name == "donedata" {
				s.DoneData = c.payload(ch)
			}
		}
	}
	return s
}

func (c *compiler) transition(n *schema.Node) *statechart.Transition {
	t := &statechart.Transition{Events: strings.Fields(n.AttrValue("event")), Internal: n.AttrValue("type") == "internal", Ext: n}
	if a, ok := n.Attr("cond"); ok {
		cond := c.expr(a)
		t.Cond = func(in *statechart.Instance) (bool, error) { return sess(in).dm.Cond(cond) }
	}
	if a, ok := n.Attr("target"); ok {
		c.pending = append(c.pending, pendingTarget{t: t, ids: strings.Fields(a.Value), attr: a})
	}
	t.Actions = c.block(n.Children)
	return t
}

func (c *compiler) resolve() {
	var names []string
	for id := range c.ids {
		if !strings.HasPrefix(id, "#") {
			names = append(names, id)
		}
	}
	for _, p := range c.pending {
		for _, id := range p.ids {
			s, ok := c.ids[id]
			if !ok {
				c.errorf(p.attr.ValuePos, "no state %q%s", id, schema.DidYouMean(id, names, "%q"))
				continue
			}
			p.t.Targets = append(p.t.Targets, s)
		}
	}
}

// datamodel compiles the <data> of a state (or of the document, s being
// the root).
func (c *compiler) datamodel(s *statechart.State, n *schema.Node) {
	top := s.Parent == nil
	for _, d := range n.Children {
		if d.Name != "data" {
			continue
		}
		id := d.AttrValue("id")
		if top {
			c.data[id] = true
		}
		if !luadm.IsName(id) {
			a, _ := d.Attr("id")
			c.errorf(a.ValuePos, "data id %q is not a Lua variable name: Lua names are ASCII letters, digits and _, not starting with a digit (keep Japanese in state ids, events and strings)", id)
		}
		value := c.value(d)
		act := func(in *statechart.Instance) error {
			ss := sess(in)
			if top {
				if v, ok := ss.params[id]; ok {
					ss.dm.Set(id, luadm.ToLua(ss.dm.L, v))
					return nil
				}
			}
			v, err := value(ss)
			if err != nil {
				ss.dm.Set(id, lua.LNil)
				return err
			}
			ss.dm.Set(id, v)
			return nil
		}
		if c.late && !top {
			s.Init = append(s.Init, act)
		} else {
			c.setup = append(c.setup, statechart.Block{act})
		}
	}
}

// value compiles the value of a <data>, <assign> or <content>: its expr,
// its src file, or its text.
func (c *compiler) value(n *schema.Node) func(*Session) (lua.LValue, error) {
	if a, ok := n.Attr("expr"); ok {
		expr := c.expr(a)
		return func(s *Session) (lua.LValue, error) { return s.dm.Eval(expr) }
	}
	if a, ok := n.Attr("src"); ok {
		text, err := c.readSrc(a.Value)
		if err != nil {
			c.errorf(a.ValuePos, "%v", err)
		}
		return c.textValue(text, schema.Pos{File: srcPath(c.dir, a.Value), Line: 1, Col: 1})
	}
	if len(n.Children) > 0 {
		// XML content: kept as the element, which <invoke> can run.
		xml := n.Children[0]
		return func(s *Session) (lua.LValue, error) { return &lua.LUserData{Value: xml}, nil }
	}
	if strings.TrimSpace(n.Text) == "" {
		return func(*Session) (lua.LValue, error) { return lua.LNil, nil }
	}
	return c.textValue(n.Text, n.TextPos)
}

// textValue compiles the value of literal text that starts at pos: JSON
// (an object becomes a table with keys, an array a sequence), a Lua
// literal (a number, a string, a table constructor of literals), else the
// text itself. Text is never run as code: <data id="copy">x</data> is the
// string "x", not the variable x.
func (c *compiler) textValue(text string, pos schema.Pos) func(*Session) (lua.LValue, error) {
	trimmed := strings.TrimSpace(text)
	var v any
	if json.Unmarshal([]byte(trimmed), &v) == nil {
		return func(s *Session) (lua.LValue, error) { return luadm.ToLua(s.dm.L, v), nil }
	}
	if luadm.IsLiteral(trimmed) {
		code := luadm.CompileExpr(text, pos, "data")
		return func(s *Session) (lua.LValue, error) { return s.dm.Eval(code) }
	}
	return func(*Session) (lua.LValue, error) { return lua.LString(trimmed), nil }
}

// expr compiles an attribute's Lua expression. One that does not compile
// is a warning: the document runs, and evaluating it raises
// error.execution, as SCXML asks.
func (c *compiler) expr(a schema.Attr) *luadm.Code {
	return c.warnLua(luadm.CompileExpr(a.Value, a.ValuePos, a.Name))
}

func (c *compiler) warnLua(code *luadm.Code) *luadm.Code {
	if d := code.Err(); d != nil {
		w := *d
		w.Severity = schema.Warning
		w.Msg += "; evaluating it raises error.execution"
		c.diags = append(c.diags, w)
	}
	return code
}

// location compiles an attribute naming a location to assign to.
func (c *compiler) location(a schema.Attr) *luadm.Code {
	return c.warnLua(luadm.CompileLocation(a.Value, a.ValuePos))
}

// names compiles a namelist: each name an expression at its place in the
// attribute.
func (c *compiler) names(a schema.Attr) []*luadm.Code {
	var codes []*luadm.Code
	rest, pos := a.Value, a.ValuePos
	for {
		i := strings.IndexFunc(rest, func(r rune) bool { return r != ' ' && r != '\t' && r != '\n' && r != '\r' })
		if i < 0 {
			return codes
		}
		pos, rest = pos.Advance(rest[:i]), rest[i:]
		j := strings.IndexAny(rest, " \t\n\r")
		if j < 0 {
			j = len(rest)
		}
		codes = append(codes, c.warnLua(luadm.CompileExpr(rest[:j], pos, "namelist")))
		pos, rest = pos.Advance(rest[:j]), rest[j:]
	}
}

// srcName is the path a src attribute names: a file: URL or a path,
// relative to the document's directory.
func srcName(src string) string { return strings.TrimPrefix(src, "file:") }

// srcPath is the file a src attribute names, for messages and positions.
func srcPath(dir, src string) string {
	path := srcName(src)
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return path
}

// readSrc reads the file of a <script src> or <data src>: held to the
// document's directory, a regular file, and srcfile.MaxSize bytes. When
// the document is one a script built at run time, so is the check.
func (c *compiler) readSrc(src string) (string, error) {
	b, err := srcfile.Read(c.dir, srcName(src))
	if err != nil {
		return "", fmt.Errorf("cannot read %q: %v", src, err)
	}
	return string(b), nil
}

func (c *compiler) script(n *schema.Node) statechart.Action {
	text, pos := n.Text, n.ContentPos
	if a, ok := n.Attr("src"); ok {
		t, err := c.readSrc(a.Value)
		if err != nil {
			c.errorf(a.ValuePos, "%v", err)
			return nil
		}
		text, pos = t, schema.Pos{File: srcPath(c.dir, a.Value), Line: 1, Col: 1}
	}
	code := c.warnLua(luadm.CompileScript(text, pos))
	return func(in *statechart.Instance) error { return sess(in).dm.Exec(code) }
}

// block compiles executable content.
func (c *compiler) block(nodes []*schema.Node) statechart.Block {
	var b statechart.Block
	for _, n := range nodes {
		if a := c.action(n); a != nil {
			b = append(b, a)
		}
	}
	return b
}

func run(in *statechart.Instance, b statechart.Block) error {
	for _, a := range b {
		if err := a(in); err != nil {
			return err
		}
	}
	return nil
}

func (c *compiler) action(n *schema.Node) statechart.Action {
	switch n.Name {
	case "raise":
		name := n.AttrValue("event")
		return func(in *statechart.Instance) error {
			in.Raise(&statechart.Event{Name: name, Type: statechart.Internal})
			return nil
		}
	case "log":
		label := n.AttrValue("label")
		var expr *luadm.Code
		if a, ok := n.Attr("expr"); ok {
			expr = c.expr(a)
		}
		return func(in *statechart.Instance) error {
			s := sess(in)
			text := ""
			if expr != nil {
				v, err := s.dm.Eval(expr)
				if err != nil {
					return err
				}
				text = v.String()
			}
			s.sys.log(s, label, text)
			return nil
		}
	case "assign":
		a, _ := n.Attr("location")
		loc := c.location(a)
		value := c.value(n)
		return func(in *statechart.Instance) error {
			s := sess(in)
			v, err := value(s)
			if err != nil {
				return err
			}
			return s.dm.Assign(loc, v)
		}
	case "script":
		return c.script(n)
	case "if":
		return c.ifAction(n)
	case "foreach":
		return c.foreach(n)
	case "send":
		return c.send(n)
	case "cancel":
		id := n.AttrValue("sendid")
		var expr *luadm.Code
		if a, ok := n.Attr("sendidexpr"); ok {
			expr = c.expr(a)
		}
		return func(in *statechart.Instance) error {
			s := sess(in)
			id := id
			if expr != nil {
				v, err := s.dm.Eval(expr)
				if err != nil {
					return err
				}
				id = lua.LVAsString(v)
			}
			s.sys.cancelSend(s, id)
			return nil
		}
	}
	return nil
}

func (c *compiler) ifAction(n *schema.Node) statechart.Action {
	type branch struct {
		cond *luadm.Code // nil: else
		body statechart.Block
	}
	cond := func(n *schema.Node) *luadm.Code {
		a, _ := n.Attr("cond")
		return c.expr(a)
	}
	branches := []branch{{cond: cond(n)}}
	var body []*schema.Node
	flush := func() {
		branches[len(branches)-1].body = c.block(body)
		body = nil
	}
	for _, ch := range n.Children {
		switch ch.Name {
		case "elseif":
			flush()
			branches = append(branches, branch{cond: cond(ch)})
		case "else":
			flush()
			branches = append(branches, branch{})
		default:
			body = append(body, ch)
		}
	}
	flush()
	return func(in *statechart.Instance) error {
		s := sess(in)
		for _, b := range branches {
			if b.cond == nil {
				return run(in, b.body)
			}
			ok, err := s.dm.Cond(b.cond)
			if err != nil {
				return err
			}
			if ok {
				return run(in, b.body)
			}
		}
		return nil
	}
}

func (c *compiler) foreach(n *schema.Node) statechart.Action {
	a, _ := n.Attr("array")
	array := c.expr(a)
	item, index := n.AttrValue("item"), n.AttrValue("index")
	body := c.block(n.Children)
	return func(in *statechart.Instance) error {
		s := sess(in)
		if !luadm.IsName(item) || index != "" && !luadm.IsName(index) {
			return fmt.Errorf("%s: <foreach>: item %q and index %q must be variable names", n.Pos, item, index)
		}
		if s.dm.Protected(item) || s.dm.Protected(index) {
			return fmt.Errorf("%s: <foreach>: %s is a system variable and cannot be assigned", n.Pos, map[bool]string{true: item, false: index}[s.dm.Protected(item)])
		}
		v, err := s.dm.Eval(array)
		if err != nil {
			return err
		}
		t, ok := v.(*lua.LTable)
		if !ok {
			return fmt.Errorf("%s: <foreach>: array %q is a %s, not a table", array.Pos, array.Src, v.Type())
		}
		var items []lua.LValue
		for i := 1; i <= t.Len(); i++ {
			items = append(items, t.RawGetInt(i))
		}
		for i, v := range items {
			s.dm.Set(item, v)
			if index != "" {
				s.dm.Set(index, lua.LNumber(i+1))
			}
			if err := run(in, body); err != nil {
				return err
			}
		}
		return nil
	}
}

// payload compiles the data of a <send>, <donedata> or <invoke>: its
// namelist, <param>s and <content>.
func (c *compiler) payload(n *schema.Node) func(*statechart.Instance) (any, error) {
	invoke := n.Name == "invoke" // whose <content> is the document to run
	type param struct {
		name string
		expr *luadm.Code // its expr, or its location read
	}
	var params []param
	var content func(*Session) (lua.LValue, error)
	var contentPos schema.Pos
	for _, ch := range n.Children {
		switch ch.Name {
		case "param":
			a, ok := ch.Attr("location")
			if !ok {
				a, _ = ch.Attr("expr")
			}
			params = append(params, param{ch.AttrValue("name"), c.expr(a)})
		case "content":
			if invoke {
				continue
			}
			contentPos = ch.Pos
			if a, ok := ch.Attr("expr"); ok {
				expr := c.expr(a)
				content = func(s *Session) (lua.LValue, error) { return s.dm.Eval(expr) }
			} else if len(ch.Children) > 0 {
				node := ch.Children[0]
				content = func(*Session) (lua.LValue, error) { return &lua.LUserData{Value: node}, nil }
			} else {
				text := strings.TrimSpace(ch.Text)
				content = func(*Session) (lua.LValue, error) {
					if v, ok := number(text); ok {
						return v, nil
					}
					return lua.LString(text), nil
				}
			}
		}
	}
	var names []*luadm.Code
	if a, ok := n.Attr("namelist"); ok {
		names = c.names(a)
	}
	if len(params) == 0 && len(names) == 0 && content == nil {
		return nil
	}
	return func(in *statechart.Instance) (any, error) {
		s := sess(in)
		if content != nil {
			v, err := content(s)
			if err != nil {
				return nil, err
			}
			if ud, ok := v.(*lua.LUserData); ok {
				if n, ok := ud.Value.(*schema.Node); ok {
					return n, nil // XML content
				}
			}
			data, err := luadm.FromLua(v) // _event and its data too: plain values
			if err != nil {
				return nil, fmt.Errorf("%s: <content>: %w", contentPos, err)
			}
			return data, nil
		}
		m := map[string]any{}
		for _, name := range names {
			v, err := s.dm.Eval(name)
			if err != nil {
				return nil, err
			}
			if m[name.Src], err = luadm.FromLua(v); err != nil {
				return nil, fmt.Errorf("%s: namelist %s: %w", name.Pos, name.Src, err)
			}
		}
		for _, p := range params {
			v, err := s.dm.Eval(p.expr)
			if err != nil {
				return nil, err
			}
			if m[p.name], err = luadm.FromLua(v); err != nil {
				return nil, fmt.Errorf("%s: <param name=%q>: %w", p.expr.Pos, p.name, err)
			}
		}
		return m, nil
	}
}

func number(text string) (lua.LValue, bool) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, false
	}
	return lua.LNumber(f), true
}

// maxDelay is the longest delay a <send> may ask for.
const maxDelay = 365 * 24 * time.Hour

// delayRE is a CSS2 time: a number without sign or exponent, then s or
// ms (any case); seat reads a bare number as milliseconds.
var delayRE = regexp.MustCompile(`^(\d+(?:\.\d*)?|\.\d+)((?i)ms|s)?$`)

// parseDelay reads a CSS2 time: "1s", "500ms", ".5s".
func parseDelay(text string) (time.Duration, error) {
	m := delayRE.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return 0, fmt.Errorf("delay %q is not a time such as \"1s\", \"500ms\" or \".5s\"", text)
	}
	f, _ := strconv.ParseFloat(m[1], 64)
	unit := time.Millisecond
	if strings.EqualFold(m[2], "s") {
		unit = time.Second
	}
	if f*float64(unit) > float64(maxDelay) {
		return 0, fmt.Errorf("delay %q is longer than a year", text)
	}
	return time.Duration(f * float64(unit)), nil
}

// warnUnreachable warns of each state no transition or initial state
// leads to (the outermost, when a state and what it holds are).
func (c *compiler) warnUnreachable(chart *statechart.Chart) {
	reach := chart.Reachable(func(s *statechart.State) []*statechart.State {
		if s == nil {
			return nil
		}
		var out []*statechart.State
		for _, t := range s.Transitions {
			out = append(out, t.Targets...)
		}
		return out
	})
	for _, s := range chart.States[1:] {
		if !reach[s.Index()] && !s.IsHistory() && (s.Parent == chart.Root || reach[s.Parent.Index()]) {
			c.warnf(s.Ext.(*schema.Node).Pos, "state %q is never entered: no transition or initial state leads to it", s.ID)
		}
	}
}
