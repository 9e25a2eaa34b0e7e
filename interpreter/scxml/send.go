package scxml

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/srcfile"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// The event I/O processor types seat knows.
const (
	SCXMLProcessor = "http://www.w3.org/TR/scxml/#SCXMLEventProcessor"
	scxmlInvoke    = "http://www.w3.org/TR/scxml/"
	// SeatProcessor sends a line to one of seat's adaptors: <send
	// type="seat" target="chat">, its line the <content> (or the event
	// name without one). "seat" is its short name.
	SeatProcessor = "https://github.com/seatml/seat#adaptor"
	// seatTarget marks a delayed send's target as an adaptor's name.
	seatTarget = "seat:"
)

// isSeatType reports whether a <send> type names seat's adaptor
// processor.
func isSeatType(t string) bool { return t == "seat" || t == SeatProcessor }

// knownType reports whether a <send> type is one seat sends with.
func knownType(t string) bool {
	return t == "" || t == SCXMLProcessor || t == "scxml" || isSeatType(t)
}

// attrOrExpr compiles an attribute that may be given literally or as an
// expression (event/eventexpr, target/targetexpr...).
func (c *compiler) attrOrExpr(n *schema.Node, name string) func(*Session) (string, bool, error) {
	if a, ok := n.Attr(name + "expr"); ok {
		expr := c.expr(a)
		return func(s *Session) (string, bool, error) {
			v, err := s.dm.Eval(expr)
			if err != nil {
				return "", true, err
			}
			switch v.(type) {
			case lua.LString, lua.LNumber:
				return lua.LVAsString(v), true, nil
			}
			return "", true, fmt.Errorf("%s: %s %q is a %s, not a string", expr.Pos, name+"expr", expr.Src, v.Type())
		}
	}
	a, ok := n.Attr(name)
	return func(*Session) (string, bool, error) { return a.Value, ok, nil }
}

func (c *compiler) send(n *schema.Node) statechart.Action {
	event := c.attrOrExpr(n, "event")
	target := c.attrOrExpr(n, "target")
	typ := c.attrOrExpr(n, "type")
	delay := c.attrOrExpr(n, "delay")
	id := n.AttrValue("id")
	idloc := c.idLocation(n)
	data := c.payload(n)
	return func(in *statechart.Instance) error {
		s := sess(in)
		sendid := id
		if sendid == "" {
			s.sys.nextSend++
			sendid = fmt.Sprintf("send.%d", s.sys.nextSend)
		}
		if idloc != nil {
			if err := s.dm.Assign(idloc, lua.LString(sendid)); err != nil {
				return err
			}
		}
		// fail names the send in the error event (_event.sendid), and
		// places the error at the <send> unless it has a place.
		fail := func(err error) error {
			e := &statechart.Error{SendID: sendid, Err: at(n.Pos, err)}
			var se *statechart.Error
			if errors.As(err, &se) {
				e.Event = se.Event
			}
			return e
		}
		name, _, err := event(s)
		if err != nil {
			return fail(err)
		}
		kind, _, err := typ(s)
		if err != nil {
			return fail(err)
		}
		if (name == "" && !isSeatType(kind)) || strings.ContainsAny(name, " \t\r\n") { // a line to an adaptor needs no name
			return fail(fmt.Errorf("<send> event name %q: an event name is one word, without spaces", name))
		}
		to, _, err := target(s)
		if err != nil {
			return fail(err)
		}
		var wait time.Duration
		if d, ok, err := delay(s); err != nil {
			return fail(err)
		} else if ok && d != "" {
			if wait, err = parseDelay(d); err != nil {
				return fail(err)
			}
		}
		ev := &statechart.Event{Name: name, Type: statechart.External, SendID: sendid,
			Origin: "#_scxml_" + s.ID, OriginType: SCXMLProcessor}
		if to == "#_parent" {
			ev.InvokeID = s.invokeID // only events to the invoker carry the invoke id
		}
		if id == "" && idloc == nil {
			ev.SendID = "" // only a send given an id names it in its event
		}
		if data != nil {
			if ev.Data, err = data(in); err != nil {
				return fail(err)
			}
		}
		switch {
		case kind == "" || kind == SCXMLProcessor || kind == "scxml":
		case isSeatType(kind):
			if to == "" {
				return fail(fmt.Errorf("<send type=%q> needs a target: the name of a seat adaptor", kind))
			}
			if err := s.sys.send(s, sendid, seatTarget+to, ev, wait, n); err != nil {
				return fail(err)
			}
			return nil
		default:
			return fail(fmt.Errorf("<send> type %q is not supported: seat sends with the SCXML event I/O processor (%s) and to its adaptors (type=\"seat\")", kind, SCXMLProcessor))
		}
		if to == "#_internal" {
			ev.Type = statechart.Internal
			in.Raise(ev)
			return nil
		}
		if to != "" && !validTarget(to) {
			return fail(fmt.Errorf("<send> target %q is not an SCXML session or invocation (#_parent, #_scxml_ID, #_ID)", to))
		}
		if err := s.sys.send(s, sendid, to, ev, wait, n); err != nil {
			return fail(err)
		}
		return nil
	}
}

// idLocation compiles an idlocation attribute, or returns nil.
func (c *compiler) idLocation(n *schema.Node) *luadm.Code {
	if a, ok := n.Attr("idlocation"); ok {
		return c.location(a)
	}
	return nil
}

// at places err at pos, unless it names a place in the file already (a
// Lua error names its expression's).
func at(pos schema.Pos, err error) error {
	if err == nil || strings.HasPrefix(err.Error(), pos.File+":") {
		return err
	}
	return fmt.Errorf("%s: %w", pos, err)
}

func validTarget(to string) bool { return len(to) > 2 && to[:2] == "#_" }

func (c *compiler) invoke(n *schema.Node) *statechart.Invoke {
	inv := &statechart.Invoke{ID: n.AttrValue("id"), Autoforward: n.AttrValue("autoforward") == "true"}
	if a, ok := n.Attr("src"); ok && a.Value != "" && !filepath.IsLocal(srcName(a.Value)) {
		c.errorf(a.ValuePos, "<invoke> src %q: %v", a.Value, srcfile.ErrOutside)
	}
	typ := c.attrOrExpr(n, "type")
	src := c.attrOrExpr(n, "src")
	idloc := c.idLocation(n)
	data := c.payload(n)
	var inline *Document
	var contentExpr *luadm.Code
	for _, ch := range n.Children {
		switch ch.Name {
		case "content":
			if a, ok := ch.Attr("expr"); ok {
				contentExpr = c.expr(a)
			}
			if len(ch.Children) > 0 && ch.Children[0].Name == "scxml" {
				sub := newCompiler(c.file)
				inline = sub.document(ch.Children[0])
				c.diags.Add(sub.diags)
			}
		case "finalize":
			inv.Finalize = c.block(ch.Children)
		}
	}
	dir := c.dir
	start := func(in *statechart.Instance, id string) error {
		s := sess(in)
		if idloc != nil {
			if err := s.dm.Assign(idloc, lua.LString(id)); err != nil {
				return err
			}
		}
		kind, _, err := typ(s)
		if err != nil {
			return err
		}
		switch kind {
		case "", "scxml", scxmlInvoke, "http://www.w3.org/TR/scxml":
		default:
			return fmt.Errorf("<invoke> type %q is not supported: seat invokes SCXML documents", kind)
		}
		doc := inline
		if contentExpr != nil {
			v, err := s.dm.Eval(contentExpr)
			if err != nil {
				return err
			}
			if doc, err = s.sys.compileContent(s.Doc.File, v); err != nil {
				return err
			}
		}
		if path, ok, err := src(s); err != nil {
			return err
		} else if ok {
			d, err := s.sys.load(dir, path)
			if err != nil {
				return fmt.Errorf("<invoke> src %q: %v", path, err)
			}
			doc = d
		}
		if doc == nil {
			return fmt.Errorf("<invoke> has no document to run")
		}
		var params map[string]any
		if data != nil {
			d, err := data(in)
			if err != nil {
				return err
			}
			params, _ = d.(map[string]any)
		}
		return s.sys.invoke(s, id, doc, params)
	}
	inv.Start = func(in *statechart.Instance, id string) error { return at(n.Pos, start(in, id)) }
	inv.Cancel = func(in *statechart.Instance, id string) { sess(in).sys.cancelInvoke(sess(in), id) }
	inv.Forward = func(in *statechart.Instance, id string, ev *statechart.Event) {
		s := sess(in)
		if child := s.children[id]; child != nil {
			cp := *ev
			s.sys.enqueue(child, s, &cp, nil)
		}
	}
	return inv
}

// toAdaptor sends ev as a line to a seat adaptor: its data as text (a
// string as it is, a number as Lua writes it, a table as JSON), or its
// name when it has none.
func (sys *System) toAdaptor(from *Session, adaptor string, ev *statechart.Event) error {
	if sys.Adaptor == nil || from.parent != nil {
		return &statechart.Error{Event: "error.communication", Err: fmt.Errorf("<send> to adaptor %q: only a document seat runs, not an invoked one, sends to seat's adaptors", adaptor)}
	}
	line, err := Line(ev)
	if err != nil {
		return err
	}
	if err := sys.Adaptor(from, adaptor, line); err != nil {
		return &statechart.Error{Event: "error.communication", Err: err}
	}
	return nil
}

// Line is the text a <send type="seat"> sends for ev.
func Line(ev *statechart.Event) (string, error) {
	switch v := ev.Data.(type) {
	case nil:
		return ev.Name, nil
	case string:
		return v, nil
	case float64:
		return lua.LNumber(v).String(), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	b, err := json.Marshal(ev.Data)
	if err != nil {
		return "", fmt.Errorf("<send> to an adaptor: its data cannot be written as JSON: %w", err)
	}
	return string(b), nil
}
