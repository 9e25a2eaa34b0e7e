package schema

// Older spellings eSEAT accepted, with the modern ones: the checker reads
// them (Modernize) and seat port writes the modern ones into the file,
// both from ModernElement and AttrAlias.

// ModernElement returns the modern name of an element written inside
// parent, when name is one of eSEAT's older spellings:
// <command host="X"> (not in general) is <message sendto="X">, and
// <agent> in general is <adaptor>.
func ModernElement(parent, name string) (string, bool) {
	switch {
	case name == "command" && parent != "general":
		return "message", true
	case name == "agent" && parent == "general":
		return "adaptor", true
	}
	return "", false
}

// AttrAlias returns the canonical name of attribute attr on element name
// inside parent (for an adaptor, of type typ), when attr is an eSEAT
// spelling such as host= for sendto= or document_root= for dir=.
func AttrAlias(kinds AdaptorKinds, parent, name, typ, attr string) (string, bool) {
	spec, ok := Lookup(parent, name)
	if !ok {
		return "", false
	}
	attrs := spec.Attrs
	if name == "adaptor" {
		if t, ok := kinds.Lookup(typ); ok {
			attrs = with(attrs, t.Attrs)
		}
	}
	if as, ok := attrs[attr]; ok && as.Alias != "" {
		return as.Alias, true
	}
	return "", false
}

// Modernize reads eSEAT's older element spellings in a parsed file as the
// modern ones (ModernElement), with one warning each that names the modern
// spelling, so that the checker and the compiler only know the modern
// forms. A <command>'s host= becomes sendto= without a second warning.
func Modernize(root *Node, kinds AdaptorKinds) List {
	var l List
	var walk func(parent, n *Node)
	walk = func(parent, n *Node) {
		if parent != nil {
			if modern, ok := ModernElement(parent.Name, n.Name); ok {
				old, spelled := n.Name, "<"+n.Name+"> is eSEAT's older spelling of <"+modern+">"
				if old == "command" {
					spelled = `<command host="…"> is eSEAT's older spelling of <message sendto="…">`
				}
				l.Warnf(n.Pos, "%s; read as <%s> (seat port rewrites it)", spelled, modern)
				n.Name = modern
				for i := range n.Attrs {
					if canon, ok := AttrAlias(kinds, parent.Name, modern, n.AttrValue("type"), n.Attrs[i].Name); ok && old == "command" {
						n.Attrs[i].Name = canon
					}
				}
			}
		}
		for _, c := range n.Children {
			walk(n, c)
		}
	}
	walk(nil, root)
	return l
}
