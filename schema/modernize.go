package schema

// Modernize rewrites eSEAT's older spellings in a parsed file into the
// modern ones, with one warning each that names the modern spelling, so
// that the checker and the compiler only know the modern forms:
//
//   - <command host="X">text</command> is <message sendto="X">text</message>
//     (eSEAT's older spelling; 120 uses in 15 public files);
//   - <agent ...> in <general> is <adaptor ...>.
//
// seat port writes the modern spelling into the file.
func Modernize(root *Node) List {
	var l List
	var walk func(parent, n *Node)
	walk = func(parent, n *Node) {
		switch {
		case n.Name == "command" && parent != nil && parent.Name != "general":
			l.Warnf(n.Pos, `<command host="…"> is eSEAT's older spelling of <message sendto="…">; read as <message> (seat port rewrites it)`)
			n.Name = "message"
			for i := range n.Attrs {
				if n.Attrs[i].Name == "host" {
					n.Attrs[i].Name = "sendto"
				}
			}
		case n.Name == "agent" && parent != nil && parent.Name == "general":
			l.Warnf(n.Pos, "<agent> is eSEAT's older spelling of <adaptor>; read as <adaptor> (seat port rewrites it)")
			n.Name = "adaptor"
		}
		for _, c := range n.Children {
			walk(n, c)
		}
	}
	walk(nil, root)
	return l
}
