package schema

// Node is one element of a behavior file with the positions the loader
// found for it.
type Node struct {
	Name string
	// Space is the element's namespace: the URL its prefix or the nearest
	// xmlns declares, the prefix itself if nothing declares it, or "".
	Space    string
	Pos      Pos // the element's '<'
	Attrs    []Attr
	Children []*Node
	// Text is the element's own character data (CDATA included, child
	// elements' text excluded). Comments are removed but their line breaks
	// kept, so that line numbers inside Text match the file.
	Text string
	// Comments is the text of the element's own comments, joined: eSEAT
	// read a script's comments as part of its code.
	Comments string
	// ContentPos is the position just after the start tag's '>'.
	ContentPos Pos
	// TextPos is the position of the first character of Text that is not
	// white space (ContentPos if there is none).
	TextPos Pos
}

// Attr is an attribute with the positions of its name and of its value.
type Attr struct {
	Name     string
	Space    string // the attribute's namespace, as Node.Space; "" unprefixed
	Value    string
	Pos      Pos
	ValuePos Pos
}

// Attr returns the named attribute.
func (n *Node) Attr(name string) (Attr, bool) {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a, true
		}
	}
	return Attr{}, false
}

// AttrValue returns the named attribute's value, or "".
func (n *Node) AttrValue(name string) string {
	a, _ := n.Attr(name)
	return a.Value
}

// Has reports whether the named attribute is present.
func (n *Node) Has(name string) bool {
	_, ok := n.Attr(name)
	return ok
}
