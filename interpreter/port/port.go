// Package port is seat port: it carries an eSEAT behavior file to seat.
// It reads, edits and writes the document with github.com/beevik/etree, so
// that comments, element order and attributes survive; older spellings
// become the modern ones, and Python script bodies become Lua where the
// translation is mechanical. What it cannot translate stays in the file as
// a Lua comment that begins "-- seat port:" with the reason and the
// original Python, and is reported with its line.
package port

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/beevik/etree"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// Note is something left for hand work, at a file line.
type Note struct {
	Line   int
	Reason string
}

// Result is a ported file and what happened to its bodies.
type Result struct {
	Output []byte
	// Notes are what is left for hand work, by input line; a note of line
	// 0 names no line of this file (an error in a file it includes).
	Notes []Note
	// The script and cond bodies: Lua those that were Lua already,
	// Translated those translated whole, Partial those with a part left
	// for hand work.
	Lua, Translated, Partial int

	lines map[*etree.Element]int // input lines of the elements read
	// structured names the rtcin adaptors whose data reaches rules as a
	// table (any type but a TimedString): their rules' rtc_in_data.data
	// is a member, not the event text.
	structured map[string]bool
}

// File ports one behavior file. An error means the file could not be read
// as XML (bad input).
func File(name string, data []byte) (*Result, error) {
	utf8, err := schema.DecodeUTF8(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	root, diags := schema.ParseXML(name, utf8)
	if root == nil {
		return nil, diags
	}
	nodes := inOrder(root) // for positions

	doc := etree.NewDocument()
	// DecodeUTF8 has decoded the bytes and made the declaration say UTF-8.
	doc.ReadSettings.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	doc.ReadSettings.PreserveCData = true
	if err := doc.ReadFromBytes(utf8); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	res := &Result{}
	elems := treeInOrder(doc.Root())
	if len(elems) != len(nodes) {
		return nil, fmt.Errorf("%s: the file reads differently as a tree (%d elements, %d positioned); not ported", name, len(elems), len(nodes))
	}
	res.lines = map[*etree.Element]int{}
	res.structured = structuredInputs(elems)
	for i, e := range elems {
		res.lines[e] = nodes[i].Pos.Line
		res.element(e, nodes[i])
	}
	doc.WriteSettings.CanonicalText = true    // " and ' stay as written in scripts
	doc.WriteSettings.CanonicalAttrVal = true // > and ' stay as written in attributes
	// Marks of an earlier run go; what is still broken is marked again.
	unmark(doc.Root())
	out, err := write(doc)
	if err != nil {
		return nil, err
	}
	if res.markBroken(name, doc, out) {
		if out, err = write(doc); err != nil {
			return nil, err
		}
	}
	res.Output = out
	return res, nil
}

// inOrder lists the elements under n, n first, in document order (none
// for nil).
func inOrder(n *schema.Node) []*schema.Node {
	if n == nil {
		return nil
	}
	out := []*schema.Node{n}
	for _, c := range n.Children {
		out = append(out, inOrder(c)...)
	}
	return out
}

// treeInOrder is inOrder of an etree element: the same elements, in the
// same order, as inOrder of the same text parsed by schema.
func treeInOrder(e *etree.Element) []*etree.Element {
	out := []*etree.Element{e}
	for _, c := range e.ChildElements() {
		out = append(out, treeInOrder(c)...)
	}
	return out
}

func write(doc *etree.Document) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := doc.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// markBroken checks the ported document out as seat check would check it
// in place of the file (--allow-shell given: a <shell> needs the flag, not
// hand work), and marks each error port left: a comment before the
// element it is in, and a note. An error in a file this one includes is
// marked at the <rule file> that includes it (that file is ported on its
// own). It reports whether it changed the document.
func (r *Result) markBroken(name string, doc *etree.Document, out []byte) bool {
	_, diags := seatml.LoadBytes(name, out, seatml.LoadOptions{AllowShell: true})
	if !diags.HasErrors() {
		return false
	}
	root, _ := schema.ParseXML(name, out)
	nodes, elems := inOrder(root), treeInOrder(doc.Root())
	if len(elems) != len(nodes) {
		nodes = nil // cannot place them: notes only
	}
	// Paths in messages as the file names them, not as seat port was
	// given it: the same comments from any directory.
	rel := func(msg string) string {
		if dir := filepath.Dir(name); dir != "." {
			msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
		}
		return msg
	}
	changed := false
	elsewhere := map[schema.Pos]bool{}
	for _, d := range diags {
		if d.Severity != schema.Error {
			continue
		}
		if filepath.Clean(d.Pos.File) != filepath.Clean(name) || d.Pos.Line == 0 {
			// In a file this one includes (reported once, also when
			// reached by more than one way), or of the whole file.
			if elsewhere[d.Pos] {
				continue
			}
			elsewhere[d.Pos] = true
			inc := includeOf(name, elems, d.Pos.File)
			if inc == nil {
				r.Notes = append(r.Notes, Note{Reason: "seat check fails in what this file uses: " + d.Error()})
				continue
			}
			f, _, _ := strings.Cut(inc.SelectAttrValue("file", ""), ":")
			at := fmt.Sprintf("%s:%d:%d: %s", f, d.Pos.Line, d.Pos.Col, rel(d.Msg)) // named as this file names it
			r.Notes = append(r.Notes, Note{Line: r.lines[inc], Reason: "seat check fails in the rules included here: " + at})
			r.commentBefore(inc, brokenMark+"in the rules included here: "+commentSafe(at)+" ")
			changed = true
			continue
		}
		i := len(nodes) - 1 // the last element that starts at or before the error
		for i >= 0 && (nodes[i].Pos.Line > d.Pos.Line || nodes[i].Pos.Line == d.Pos.Line && nodes[i].Pos.Col > d.Pos.Col) {
			i--
		}
		if i < 0 {
			r.Notes = append(r.Notes, Note{Reason: "seat check fails here: " + rel(d.Msg) + "; fix it by hand"})
			continue
		}
		line := 0
		for k := i; k >= 0 && line == 0; k-- { // an element port added has the line of the one before
			line = r.lines[elems[k]]
		}
		r.Notes = append(r.Notes, Note{Line: line, Reason: "seat check fails here: " + rel(d.Msg) + "; fix it by hand (a comment marks the place)"})
		r.commentBefore(elems[i], brokenMark+"here: "+commentSafe(rel(d.Msg))+" ")
		changed = true
	}
	return changed
}

// brokenMark begins the comments markBroken writes.
const brokenMark = " seat port: seat check fails "

// unmark removes the comments markBroken wrote under e, each with the line
// break after it.
func unmark(e *etree.Element) {
	for i := 0; i < len(e.Child); i++ {
		switch c := e.Child[i].(type) {
		case *etree.Comment:
			if !strings.HasPrefix(c.Data, brokenMark) {
				continue
			}
			e.RemoveChildAt(i)
			if i < len(e.Child) {
				if cd, ok := e.Child[i].(*etree.CharData); ok && strings.TrimSpace(cd.Data) == "" {
					e.RemoveChildAt(i)
				}
			}
			i--
		case *etree.Element:
			unmark(c)
		}
	}
}

// includeOf is the element of elems that includes the rules of file
// (<rule file="file:state">, relative to the file name), or nil.
func includeOf(name string, elems []*etree.Element, file string) *etree.Element {
	for _, e := range elems {
		f, _, _ := strings.Cut(e.SelectAttrValue("file", ""), ":")
		if e.Tag == "rule" && f != "" && filepath.Clean(filepath.Join(filepath.Dir(name), f)) == filepath.Clean(file) {
			return e
		}
	}
	return nil
}

// commentSafe is text an XML comment can hold: no "--".
func commentSafe(s string) string {
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "- -")
	}
	return s
}

// element ports one element in place.
func (r *Result) element(e *etree.Element, n *schema.Node) {
	parent := ""
	if p := e.Parent(); p != nil {
		parent = p.Tag
	}
	if modern, ok := schema.ModernElement(parent, e.Tag); ok {
		e.Tag = modern
	}
	typ := e.SelectAttrValue("type", "")
	for i := range e.Attr {
		if canon, ok := schema.AttrAlias(adaptors.Kinds, parent, e.Tag, typ, e.Attr[i].Key); ok && e.SelectAttr(canon) == nil {
			e.Attr[i].Key = canon
		}
	}
	if t, known := adaptors.LookupKind(typ); e.Tag == "adaptor" && known && t.Ignored {
		r.commentBefore(e, fmt.Sprintf(" seat port: a %s adaptor is eSEAT's (OpenRTM or ROS); seat loads it with a warning and does not run it ", typ))
	}
	switch {
	case e.Tag == "adaptor":
		r.rosHandler(e, n)
	case e.Tag == "script":
		r.script(e, n)
		r.pythonExecfile(e, n)
	case e.Tag == "cond":
		r.cond(e, n)
		r.pythonExecfile(e, n)
	}
}

// pythonExecfile moves a script's or cond's execfile of a Python helper,
// which seat cannot run, into a "-- seat port:" comment at the start of
// its body, as any Python without a translation is: the file loads (seat
// check warns at the comment), and what calls the helper's functions
// fails when it runs, until the helper is ported to Lua and named in
// execfile= again.
func (r *Result) pythonExecfile(e *etree.Element, n *schema.Node) {
	a := e.SelectAttr("execfile")
	if a == nil || !strings.HasSuffix(strings.ToLower(a.Value), ".py") {
		return
	}
	reason := fmt.Sprintf("execfile %q is Python: port the helper to Lua by hand and name the .lua file in execfile=", a.Value)
	r.Notes = append(r.Notes, Note{n.Pos.Line, reason})
	e.RemoveAttr("execfile")
	body := bodyOf(e)
	if e.Tag == "cond" {
		marker := "--[[ seat port: " + strings.ReplaceAll(reason, "]]", "] ]") + " ]] "
		if strings.TrimSpace(body) == "" {
			body = "true" // eSEAT ran the helper and had no condition
		}
		setBody(e, marker+body)
		return
	}
	marker := "-- seat port: " + reason
	switch {
	case strings.TrimSpace(body) == "":
		setBody(e, marker)
	case strings.HasPrefix(body, "\n"):
		first := strings.TrimLeft(body, "\n")
		indent := first[:len(first)-len(strings.TrimLeft(first, " \t"))]
		setBody(e, "\n"+indent+marker+body)
	default:
		setBody(e, marker+"\n"+body)
	}
}

// bodyOf is the text of a script or cond as seat reads it: its character
// data, or, when it has none, its comments (eSEAT ran code written in an
// XML comment).
func bodyOf(e *etree.Element) string {
	var text, comments strings.Builder
	for _, c := range e.Child {
		switch c := c.(type) {
		case *etree.CharData:
			text.WriteString(c.Data)
		case *etree.Comment:
			comments.WriteString(c.Data)
		}
	}
	if strings.TrimSpace(text.String()) == "" {
		return comments.String()
	}
	return text.String()
}

// rosHandler turns the Python handler eSEAT names on a ROS adaptor
// (impl= on a ros_server, callback= on a ros_sub) into the rule seat
// runs, next to the adaptor: it calls the function, which the general
// script that defines it is ported with. A goal handler of an action
// server loops until its goal ends, which a seat script cannot: it is
// left for hand work.
func (r *Result) rosHandler(e *etree.Element, n *schema.Node) {
	typ := e.SelectAttrValue("type", "")
	attr := map[string]string{"ros_server": "impl", "ros_sub": "callback", "ros_action_server": "callback"}[typ]
	a := e.SelectAttr(attr)
	if a == nil {
		return
	}
	fn, name := strings.TrimSpace(a.Value), e.SelectAttrValue("name", "")
	switch {
	case typ == "ros_action_server":
		r.Notes = append(r.Notes, Note{n.Pos.Line, fmt.Sprintf("the goal handler %q loops until its goal ends, which a seat script cannot: write a rule on the goal (key ros_action), seat.publish for feedback and seat.result to end it (docs/ros.md, Actions)", fn)})
		return
	case !schema.IsIdentifier(fn):
		r.Notes = append(r.Notes, Note{n.Pos.Line, fmt.Sprintf("%s=%q is a Python expression: write a <rule source=%q> that does what it did", attr, fn, name)})
		return
	}
	if f := e.SelectAttr("file"); f != nil {
		r.Notes = append(r.Notes, Note{n.Pos.Line, fmt.Sprintf("%s %q is in the Python file %q: port it to a Lua function in a <script> of general; the rule seat port wrote calls it", attr, fn, f.Value)})
	}
	rule := etree.NewElement("rule")
	rule.CreateAttr("source", name)
	body := fn + "(rtc_in_data)"
	if typ == "ros_server" {
		rule.CreateElement("key").SetText("ros_service")
		body = "return " + body // the response
	}
	rule.CreateElement("script").SetText(body)
	p := e.Parent()
	i := e.Index()
	indent := "\n"
	if i > 0 {
		if cd, ok := p.Child[i-1].(*etree.CharData); ok && strings.TrimSpace(cd.Data) == "" {
			indent = cd.Data
		}
	}
	p.InsertChildAt(i+1, rule)
	p.InsertChildAt(i+1, etree.NewText(indent))
	e.RemoveAttr(attr)
}

// commentBefore inserts an XML comment before e, once.
func (r *Result) commentBefore(e *etree.Element, text string) {
	p := e.Parent()
	for k := e.Index() - 1; k >= 0; k-- { // already there (a file ported before)?
		if c, ok := p.Child[k].(*etree.Comment); ok && c.Data == text {
			return
		}
		if cd, ok := p.Child[k].(*etree.CharData); !ok || strings.TrimSpace(cd.Data) != "" {
			break
		}
	}
	if i := e.Index(); i > 0 {
		// Keep the element's indentation: comment, then the same break.
		if cd, ok := p.Child[i-1].(*etree.CharData); ok && strings.TrimSpace(cd.Data) == "" {
			brk := cd.Data // one line break and the indentation, not the blank lines before
			if k := strings.LastIndexByte(brk, '\n'); k > 0 {
				brk = brk[k:]
			}
			p.InsertChildAt(i, etree.NewComment(text))
			p.InsertChildAt(i+1, etree.NewText(brk))
			return
		}
	}
	p.InsertChildAt(e.Index(), etree.NewComment(text))
}

// structuredInputs finds the rtcin adaptors whose type is not a
// TimedString: what they receive is a table in rtc_in_data, as in eSEAT,
// where rtc_in_data.data is its data member. A TimedString is the event
// text, which rtc_in_data is in seat.
func structuredInputs(elems []*etree.Element) map[string]bool {
	m := map[string]bool{}
	for _, e := range elems {
		if e.Tag != "adaptor" && e.Tag != "agent" || e.SelectAttrValue("type", "") != "rtcin" {
			continue
		}
		dt := strings.TrimSpace(e.SelectAttrValue("datatype", ""))
		if base := dt[strings.LastIndexAny(dt, ":.")+1:]; base != "" && base != "TimedString" && base != "TimedWString" {
			m[e.SelectAttrValue("name", "")] = true
		}
	}
	return m
}

// structuredPlaceholder stands for rtc_in_data while a body of a rule
// on a structured rtcin is translated, so that rtc_in_data.data stays a
// member (and rtc_in_data.data[0] becomes rtc_in_data.data[1]).
const structuredPlaceholder = "seat_port_rtc_in_value"

var rtcInDataRE = regexp.MustCompile(`\brtc_in_data\b`)

// onStructured reports whether e is in a rule whose source is a
// structured rtcin.
func (r *Result) onStructured(e *etree.Element) bool {
	for p := e.Parent(); p != nil; p = p.Parent() {
		if p.Tag == "rule" {
			return r.structured[p.SelectAttrValue("source", "")]
		}
	}
	return false
}

// translateWith runs port on body, with rtc_in_data a table when
// structured; the problems' reasons name rtc_in_data as written.
func translateWith[T any](structured bool, body string, port func(string) (string, T)) (string, T) {
	if !structured {
		return port(body)
	}
	out, extra := port(rtcInDataRE.ReplaceAllString(body, structuredPlaceholder))
	return strings.ReplaceAll(out, structuredPlaceholder, "rtc_in_data"), extra
}

func (r *Result) script(e *etree.Element, n *schema.Node) {
	body := n.Text
	if strings.TrimSpace(body) == "" {
		// eSEAT ran code written inside an XML comment (<!-- … -->, to
		// keep < and & as they are): it becomes the script's text.
		body = n.Comments
	}
	if strings.TrimSpace(body) == "" {
		return
	}
	type result struct {
		problems []Problem
		how      bodyKind
	}
	out, res := translateWith(r.onStructured(e), body, func(b string) (string, result) {
		out, problems, how := portScript(b)
		return out, result{problems, how}
	})
	problems, how := res.problems, res.how
	for i := range problems {
		problems[i].Reason = strings.ReplaceAll(problems[i].Reason, structuredPlaceholder, "rtc_in_data")
	}
	for _, p := range problems {
		r.Notes = append(r.Notes, Note{n.ContentPos.Line + p.Line - 1, p.Reason})
	}
	r.count(how)
	if out != body {
		setBody(e, out)
	}
}

// bodyKind is what seat port did with a body.
type bodyKind int

const (
	bodyLua        bodyKind = iota // Lua already (or reads the same as Python): kept, eSEAT names renamed
	bodyTranslated                 // Python, translated whole
	bodyPartial                    // Python, with parts left for hand work
)

func (r *Result) count(k bodyKind) {
	switch k {
	case bodyLua:
		r.Lua++
	case bodyTranslated:
		r.Translated++
	default:
		r.Partial++
	}
}

// portScript ports one script body of an eSEAT file. eSEAT's scripts are
// Python, so a body is read as Python even where it also parses as Lua
// (print(1, 2), x = 0.1 + 0.2, n = n + rtc_in_data all do, and mean
// something else there): translated, or what has no translation marked.
// It stays as written only when it is Lua: it parses as Lua and has what
// only Lua has (--, .., ~=, #, tables, then, end, local, nil, …), as a
// body seat port wrote itself has, or when its Python translation is the
// same code. The problems are at lines of the body.
func portScript(body string) (string, []Problem, bodyKind) {
	if seatml.IsLuaSyntax(body, false) && luaOnly(body) && !eseatGlobalRE.MatchString(body) {
		return renameESEAT(body), nil, bodyLua
	}
	lua, problems := TranslateScript(body)
	if len(problems) == 0 && sameCode(body, lua) {
		return body, nil, bodyLua
	}
	if !seatml.IsLuaSyntax(lua, false) {
		// The translation does not hold together (an unbalanced block):
		// the whole body is left for hand work.
		const why = "the translation of this body is not valid Lua"
		return commented(body, why), append(problems, Problem{Line: 1, Reason: why + ": left for hand work"}), bodyPartial
	}
	if len(problems) > 0 {
		return lua, problems, bodyPartial
	}
	return lua, nil, bodyTranslated
}

func (r *Result) cond(e *etree.Element, n *schema.Node) {
	body := n.Text
	if strings.TrimSpace(body) == "" {
		return
	}
	type result struct {
		reason string
		how    bodyKind
	}
	out, res := translateWith(r.onStructured(e), body, func(b string) (string, result) {
		out, reason, how := portCond(b)
		return out, result{strings.ReplaceAll(reason, structuredPlaceholder, "rtc_in_data"), how}
	})
	reason, how := res.reason, res.how
	r.count(how)
	if reason != "" {
		r.Notes = append(r.Notes, Note{n.ContentPos.Line, reason + ": the cond is false until ported by hand"})
	}
	if out != body {
		setBody(e, out)
	}
}

// portCond ports one cond as portScript does a script: a Python
// expression, unless it is Lua; reason says why it was left for hand
// work (it is then false until ported).
func portCond(body string) (out, reason string, how bodyKind) {
	if seatml.IsLuaSyntax(body, true) && luaOnly(body) {
		return body, "", bodyLua
	}
	lua, err := TranslateCond(body)
	if err == nil && seatml.IsLuaSyntax(lua, true) {
		if sameCode(strings.TrimSpace(body), lua) {
			return body, "", bodyLua
		}
		return lua, "", bodyTranslated
	}
	reason = "the condition is not valid Lua after translation"
	if err != nil {
		reason = err.Error()
	}
	return "false --[[ seat port: " + reason + "; was: " + strings.ReplaceAll(strings.TrimSpace(body), "]]", "] ]") + " ]]", reason, bodyPartial
}

// luaOnlyWords are Lua's reserved words that Python has not.
var luaOnlyWords = map[string]bool{"local": true, "function": true, "end": true, "then": true, "do": true,
	"repeat": true, "until": true, "elseif": true, "nil": true, "true": true, "false": true, "goto": true}

// luaOnly reports whether src, which parses as Lua, has what only Lua has
// outside its strings: a -- comment, .., ~=, #, a table's braces, ^, a
// method call's colon, or a word only Lua reserves. Python reads none of
// them so (# starts its comments, which Lua cannot parse; {} is a
// dictionary there, ^ a bitwise operator: rare in eSEAT's scripts, and
// seat port writes its lists as {…}).
func luaOnly(src string) bool {
	code := seatml.BlankStrings(src)
	for _, op := range []string{"--", "..", "~=", "#", "{", "^", ":"} {
		if strings.Contains(code, op) {
			return true
		}
	}
	for i := 0; i < len(code); {
		if !isWordByte(code[i]) {
			i++
			continue
		}
		j := i
		for j < len(code) && isWordByte(code[j]) {
			j++
		}
		if luaOnlyWords[code[i:j]] && (i == 0 || code[i-1] != '.') {
			return true
		}
		i = j
	}
	return false
}

// sameCode reports whether a body and its translation are the same code
// but for spacing and how strings are quoted ('a' and "a"): the body is
// then kept as written.
func sameCode(body, lua string) bool {
	a, errA := tokenize(body)
	b, errB := tokenize(lua)
	if errA != nil || errB != nil || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].kind != b[i].kind {
			return false
		}
		if a[i].kind != 's' {
			if a[i].text != b[i].text {
				return false
			}
			continue
		}
		x, errX := pyStringValue(a[i].text)
		y, errY := pyStringValue(b[i].text) // seat port writes only escapes Python reads alike
		if errX != nil || errY != nil || x != y {
			return false
		}
	}
	return true
}

// commented turns a whole body into "-- seat port:" comments.
func commented(body, reason string) string {
	lines := strings.Split(body, "\n")
	prefix := commonIndent(lines)
	out := []string{prefix + "-- seat port: " + reason + "; the Python was:"}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, prefix+"-- "+strings.TrimPrefix(l, prefix))
	}
	return "\n" + strings.Join(out, "\n") + "\n"
}

// setBody replaces an element's text (its character data and comments;
// child elements stay), in CDATA when the Lua holds < or &.
func setBody(e *etree.Element, lua string) {
	for i := len(e.Child) - 1; i >= 0; i-- {
		switch e.Child[i].(type) {
		case *etree.CharData, *etree.Comment:
			e.RemoveChildAt(i)
		}
	}
	if strings.ContainsAny(lua, "<>&") {
		e.InsertChildAt(0, etree.NewCData(lua))
	} else {
		e.InsertChildAt(0, etree.NewText(lua))
	}
}

// Bodies counts the script and cond bodies.
func (r *Result) Bodies() int { return r.Lua + r.Translated + r.Partial }

// eseatGlobalRE finds eSEAT's globals of ROS handlers: a body that names
// them is eSEAT's Python even where it also reads as Lua
// (req = seat_argv[0] counts from 0).
var eseatGlobalRE = regexp.MustCompile(`\b(seat_argv|__retval__)\b`)

// eseatNameRE finds seat.NAME and self.NAME.
var eseatNameRE = regexp.MustCompile(`\b(seat|self)\.(\w+)`)

// renameESEAT renames, in Lua source, eSEAT's methods of its seat object
// (seat.stateTransfer, self.setTimeout, …) to seat's, outside strings.
func renameESEAT(src string) string {
	blank := seatml.BlankStrings(src)
	var b strings.Builder
	last := 0
	for _, m := range eseatNameRE.FindAllStringSubmatchIndex(blank, -1) {
		if m[0] > 0 && (blank[m[0]-1] == '.' || blank[m[0]-1] == ':') {
			continue // t.seat.x: a field
		}
		to, ok := seatml.ESEATMethod(blank[m[4]:m[5]])
		if !ok || to == "" {
			continue
		}
		b.WriteString(src[last:m[0]])
		b.WriteString("seat." + to)
		last = m[1]
	}
	b.WriteString(src[last:])
	return b.String()
}
