package schema

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Check reports the structural problems of the document rooted at root:
// the root element, unknown or misplaced elements, unknown, missing or
// malformed attributes, repeated lifecycle lists, and the eSEAT constructs
// that load with a warning.
// kinds are the adaptor types (adaptors.Kinds).
func Check(root *Node, kinds AdaptorKinds) List {
	var l List
	ck := &checker{l: &l, kinds: kinds}
	if root.Name != "seatml" {
		l.Errorf(root.Pos, "root element is <%s>; a behavior file's root must be <seatml>", root.Name)
		return l
	}
	ck.checkAttrs(root, ElementSpec{})
	generals, states := 0, 0
	for _, c := range root.Children {
		switch c.Name {
		case "general":
			generals++
			if generals > 1 {
				l.Errorf(c.Pos, "more than one <general>; a behavior has exactly one")
			} else if states > 0 {
				l.Errorf(c.Pos, "<general> must come before every <state>")
			}
		case "state", "parallel", "final":
			states++
		}
		ck.checkElement(root, c)
	}
	if generals == 0 {
		l.Errorf(root.Pos, "<seatml> has no <general>; a behavior needs exactly one")
	}
	if states == 0 {
		l.Errorf(root.Pos, "<seatml> has no <state>; a behavior needs at least one")
	}
	return l
}

// CheckIn checks element n as a child of parent, and what it holds: an
// SCXML document's seat elements are checked as the <general> they stand
// for.
func CheckIn(parent, n *Node, kinds AdaptorKinds) List {
	var l List
	(&checker{l: &l, kinds: kinds}).checkElement(parent, n)
	return l
}

// checker is one Check: its findings, and the adaptor kinds.
type checker struct {
	l     *List
	kinds AdaptorKinds
}

func allowed(spec ElementSpec, name string) bool {
	for _, c := range spec.Children {
		if c == name {
			return true
		}
	}
	if spec.Actions {
		for _, a := range ActionNames {
			if a == name {
				return true
			}
		}
	}
	return false
}

func childNames(spec ElementSpec) []string {
	names := append([]string{}, spec.Children...)
	if spec.Actions {
		names = append(names, ActionNames...)
	}
	return names
}

func (ck *checker) checkElement(parent, n *Node) {
	pspec := Elements[parent.Name]
	if !allowed(pspec, n.Name) {
		if _, known := Elements[n.Name]; known {
			ck.l.Errorf(n.Pos, "<%s> is not allowed in <%s>", n.Name, parent.Name)
		} else {
			hint := DidYouMean(n.Name, childNames(pspec), "<%s>")
			if f, ok := n.Attr("file"); ok && (n.Name == "include" || n.Name == "import") && slices.Contains(childNames(pspec), "rule") {
				hint = fmt.Sprintf(`; to include rules from another file, write <rule file=%q/>`, f.Value)
			}
			ck.l.Errorf(n.Pos, "unknown element <%s> in <%s>%s", n.Name, parent.Name, hint)
		}
		return
	}
	spec, _ := Lookup(parent.Name, n.Name)
	if spec.Ignored != "" {
		ck.l.Warnf(n.Pos, "%s", spec.Ignored)
		return
	}
	if n.Name == "rule" && n.Has("file") {
		ck.checkRuleFile(n)
		return
	}
	ck.checkAttrs(n, spec)
	seen := map[string]bool{}
	for _, c := range n.Children {
		for _, once := range spec.Once {
			if c.Name == once {
				if seen[once] {
					ck.l.Errorf(c.Pos, "<%s> appears more than once in <%s>", once, n.Name)
				}
				seen[once] = true
			}
		}
		ck.checkElement(n, c)
	}
}

func (ck *checker) checkRuleFile(n *Node) {
	for _, a := range n.Attrs {
		if a.Name != "file" {
			ck.l.Errorf(a.Pos, "<rule file> takes no other attribute; %q is not allowed", a.Name)
		}
	}
	for _, c := range n.Children {
		ck.l.Errorf(c.Pos, "<rule file> takes no children; <%s> is not allowed", c.Name)
	}
	if strings.TrimSpace(n.Text) != "" {
		ck.l.Errorf(n.TextPos, "<rule file> takes no text")
	}
}

func (ck *checker) checkAttrs(n *Node, spec ElementSpec) {
	attrs := spec.Attrs
	if n.Name == "adaptor" {
		attrs = ck.adaptorAttrs(n, spec)
		if attrs == nil {
			return
		}
	}
	seen := map[string]bool{}
	meant := map[string]bool{} // names that misspelled attributes stand for
	for _, a := range n.Attrs {
		as, ok := attrs[a.Name]
		if !ok {
			s := Suggest(a.Name, keys(attrs))
			meant[s] = true
			ck.l.Errorf(a.Pos, "unknown attribute %q on <%s>%s", a.Name, n.Name, DidYouMean(a.Name, keys(attrs), "%q"))
			continue
		}
		if as.Ignored != "" {
			ck.l.Warnf(a.Pos, "%s", as.Ignored)
			continue
		}
		if as.Alias != "" {
			ck.l.Warnf(a.Pos, "attribute %q on <%s> is an eSEAT spelling; use %q", a.Name, n.Name, as.Alias)
			if n.Has(as.Alias) {
				ck.l.Errorf(a.Pos, "<%s> has both %q and its alias %q", n.Name, as.Alias, a.Name)
			}
			as = attrs[as.Alias]
		}
		seen[a.Name] = true
		if msg := checkValue(as, a.Value); msg != "" {
			ck.l.Errorf(a.ValuePos, "attribute %q of <%s>: %q %s", a.Name, n.Name, a.Value, msg)
		}
	}
	for _, name := range keys(attrs) {
		as := attrs[name]
		if !as.Required || seen[name] || meant[name] {
			continue // a misspelling of it was reported, with the name
		}
		aliased := false
		for alias, s := range attrs {
			if s.Alias == name && seen[alias] {
				aliased = true
			}
		}
		if !aliased {
			ck.l.Errorf(n.Pos, "<%s> requires attribute %q", n.Name, name)
		}
	}
}

// adaptorAttrs returns the attributes an adaptor of the declared type
// takes, or nil when the rest of the element is not to be checked.
func (ck *checker) adaptorAttrs(n *Node, spec ElementSpec) map[string]AttrSpec {
	typ, ok := n.Attr("type")
	if !ok {
		// Without a type the other attributes cannot be checked.
		for _, req := range []string{"name", "type"} {
			if !n.Has(req) {
				ck.l.Errorf(n.Pos, "<adaptor> requires attribute %q", req)
			}
		}
		return nil
	}
	t, known := ck.kinds.Lookup(typ.Value)
	if !known {
		ck.l.Errorf(typ.ValuePos, "unknown adaptor type %q%s", typ.Value, DidYouMean(typ.Value, ck.kinds.Names(), "%q"))
		return nil
	}
	if t.Ignored {
		ck.l.Warnf(n.Pos, "adaptor type %q is not run by seat; adaptor %q is ignored", typ.Value, n.AttrValue("name"))
		return nil
	}
	return with(spec.Attrs, t.Attrs)
}

var (
	identRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	hexColor  = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)
	nameColor = regexp.MustCompile(`^[A-Za-z]+$`)
)

// luaKeywords are the reserved words of Lua 5.1.
var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true,
	"false": true, "for": true, "function": true, "if": true, "in": true, "local": true,
	"nil": true, "not": true, "or": true, "repeat": true, "return": true, "then": true,
	"true": true, "until": true, "while": true, "goto": true,
}

// IsIdentifier reports whether s is a Lua identifier that is not a keyword.
func IsIdentifier(s string) bool { return identRE.MatchString(s) && !luaKeywords[s] }

// ParseNumber parses a decimal number, refusing NaN and infinities.
func ParseNumber(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func checkValue(as AttrSpec, v string) string {
	if msg := checkKind(as, v); msg != "" {
		return msg
	}
	if as.Range != nil {
		if f, ok := ParseNumber(v); ok && !as.Range.Contains(f) {
			return "is out of range: allowed " + as.Range.String()
		}
	}
	return ""
}

func checkKind(as AttrSpec, v string) string {
	switch as.Kind {
	case PosFloat:
		if f, ok := ParseNumber(v); !ok || f <= 0 {
			return "is not a number greater than 0"
		}
	case PosInt:
		if i, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || i <= 0 {
			return "is not a whole number greater than 0"
		}
	case NonNegInt:
		if i, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || i < 0 {
			return "is not a whole number of 0 or more"
		}
	case Int:
		if _, err := strconv.Atoi(strings.TrimSpace(v)); err != nil {
			return "is not a whole number"
		}
	case Port:
		if i, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || i < 0 || i > 65535 {
			return "is not a port number (0 to 65535)"
		}
	case Enum:
		for _, e := range as.Enum {
			if v == e {
				return ""
			}
		}
		return "is not one of " + strings.Join(as.Enum, ", ") + DidYouMean(v, as.Enum, "%q")
	case Color:
		if !hexColor.MatchString(v) && !nameColor.MatchString(v) {
			return "is not a colour (a CSS name or #rrggbb)"
		}
	case Identifier:
		if !IsIdentifier(v) {
			return "is not a Lua identifier"
		}
	case TopicFilters:
		var msgs []string
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				if msg := TopicProblem(f, true); msg != "" {
					msgs = append(msgs, fmt.Sprintf("the filter %q %s", f, msg))
				}
			}
		}
		if len(msgs) > 0 {
			return "is not valid: " + strings.Join(msgs, "; ")
		}
	case TopicName:
		if msg := TopicProblem(v, false); msg != "" {
			return msg
		}
	}
	return ""
}

// TopicProblem says what is wrong with an MQTT topic filter (filter) or
// a topic to publish to, quoting the rule of MQTT 3.1.1; "" if nothing. A
// topic to publish to may have whole "+" levels: a topic session fills
// them with its sender's value.
func TopicProblem(topic string, filter bool) string {
	if strings.ContainsRune(topic, 0) {
		return `has U+0000: topics "MUST NOT include the null character" (MQTT 3.1.1 §4.7.3)`
	}
	levels := strings.Split(topic, "/")
	for i, l := range levels {
		switch {
		case strings.Contains(l, "#") && !filter:
			return `has "#": a topic published to "MUST NOT contain wildcard characters" (MQTT 3.1.1 §3.3.2.1); only a whole "+" level, which a topic session fills, is allowed`
		case strings.Contains(l, "#") && (l != "#" || i != len(levels)-1):
			return `has "#" where it may not be: the multi-level wildcard "MUST be specified either on its own or following a topic level separator. In either case it MUST be the last character" (MQTT 3.1.1 §4.7.1.2), as in robot/#`
		case strings.Contains(l, "+") && l != "+":
			return `has "+" inside a level: the single-level wildcard "MUST occupy an entire level of the filter" (MQTT 3.1.1 §4.7.1.3), as in robot/+/asr`
		}
	}
	return ""
}
