package main

import (
	"fmt"
	"io"
	"os"

	"github.com/seatml/seat/interpreter/port"
)

// portCmd is seat port [-w] [-d] FILE...: eSEAT files carried to seat
// (package interpreter/port does the work). Exit status 0 when everything
// was translated and the result passes seat check, 1 when something needs
// hand work, 2 on bad input.
func portCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("port", stderr)
	write := fs.Bool("w", false, "Write the result back to each file instead of printing it.")
	diff := fs.Bool("d", false, "Print a diff of the changes instead of the result.")
	verbose := fs.Bool("v", false, "Print, for each file, how many script and cond bodies were Lua already, translated, or left for hand work.")
	files, err := parseFiles(fs, args, stdout, stderr)
	if files == nil {
		return err
	}
	status := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "seat port: %v\n", err)
			status = 2
			continue
		}
		res, err := port.File(file, data)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 2
			continue
		}
		for _, n := range res.Notes {
			if n.Line == 0 {
				fmt.Fprintf(stderr, "%s: %s\n", file, n.Reason)
				continue
			}
			fmt.Fprintf(stderr, "%s:%d: %s\n", file, n.Line, n.Reason)
		}
		if *verbose {
			fmt.Fprintf(stderr, "%s: %d bodies: %d Lua already, %d translated, %d left (in part) for hand work\n", file, res.Bodies(), res.Lua, res.Translated, res.Partial)
		}
		if len(res.Notes) > 0 && status == 0 {
			status = 1
		}
		switch {
		case *diff:
			fmt.Fprint(stdout, port.Diff(file, data, res.Output))
		case *write:
			if string(res.Output) != string(data) {
				fi, err := os.Stat(file)
				if err != nil {
					return err
				}
				if err := os.WriteFile(file, res.Output, fi.Mode().Perm()); err != nil {
					fmt.Fprintf(stderr, "seat port: %v\n", err)
					status = 2
				}
			}
		default:
			stdout.Write(res.Output)
		}
	}
	if status != 0 {
		return exitStatus(status)
	}
	return nil
}
