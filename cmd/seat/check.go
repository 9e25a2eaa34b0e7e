package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seatml/seat/interpreter/seatml"
)

// behaviorExt is the extension of the behavior files seat check finds
// under a directory.
const behaviorExt = ".seatml"

// behaviorFiles returns the paths seat check was given, each directory
// replaced by the behavior files under it, sorted. As seat test finds
// transcripts (and go test packages), hidden directories and those named
// testdata are skipped unless named. A directory holding no behavior file,
// or one that cannot be walked, is reported on stderr, naming it, and
// makes ok false; the other paths are still returned, to be checked.
func behaviorFiles(paths []string, stderr io.Writer) (files []string, ok bool) {
	ok = true
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			files = append(files, p) // checking it reports what is wrong
			continue
		}
		var found []string
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if !d.IsDir() && (filepath.Ext(path) == behaviorExt || seatml.IsSCXML(path)) {
				found = append(found, path)
			}
			return nil
		})
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "%s: cannot read directory: %v\n", p, err) // a PathError: it names the path
			ok = false
		case len(found) == 0:
			fmt.Fprintf(stderr, "%s: no behavior file (*%s or *%s) in this directory or under it\n", p, behaviorExt, ".scxml")
			ok = false
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, ok
}
