package main

import (
	"fmt"
	"io"

	"github.com/seatml/seat/interpreter/graph"
	"github.com/seatml/seat/interpreter/seatml"
)

// graphCmd is seat graph [--format dot|mermaid] FILE: the machine, drawn
// by package interpreter/graph.
func graphCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("graph", stderr)
	format := fs.String("format", "dot", "Output format: dot (Graphviz: seat graph FILE | dot -Tsvg > FILE.svg) or mermaid (stateDiagram-v2, for Markdown pages).")
	allowShell := fs.Bool("allow-shell", false, "Load files with <shell> actions.")
	files, err := parseFiles(fs, args, stdout, stderr)
	if files == nil {
		return err
	}
	if *format != "dot" && *format != "mermaid" {
		fmt.Fprintf(stderr, "seat graph: --format %q: want dot or mermaid\n", *format)
		return exitStatus(2)
	}
	if len(files) != 1 {
		fmt.Fprintf(stderr, "seat graph: one file at a time (got %d)\n", len(files))
		return exitStatus(2)
	}
	prog, diags := seatml.Load(files[0], seatml.LoadOptions{AllowShell: *allowShell})
	if prog == nil || diags.HasErrors() {
		printDiags(stderr, diags)
		return exitStatus(1)
	}
	g := graph.New(prog)
	if *format == "mermaid" {
		return g.Mermaid(stdout)
	}
	return g.DOT(stdout)
}
