package seatml

import (
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/seatml/seat/examples/scripts"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/schema"
)

// BuiltinScripts stands, in paths and messages, for the copy of
// examples/scripts built into seat: "<built-in>/Nod.yaml".
const BuiltinScripts = "<built-in>"

// ScriptDirs is where a motion script given by name is looked for, in
// order, by <motion script>, seat.motion, seat check and run, and seat
// motion check and play: explicit alone when it is given (--scripts, or
// general@scripts resolved against the behavior); else scripts/ beside the
// behavior (when behaviorDir is not ""), ./scripts and ./examples/scripts
// (the working directory's, as absolute paths for messages), then the
// copy of examples/scripts built into seat, so that a behavior copied out
// of the repository, or seat motion play Nod, finds the shipped scripts in
// any directory.
func ScriptDirs(explicit, behaviorDir string) []string {
	if explicit != "" {
		return []string{explicit}
	}
	var dirs []string
	if behaviorDir != "" {
		dirs = append(dirs, filepath.Join(behaviorDir, "scripts"))
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			seen[abs] = true
		}
	}
	for _, d := range []string{"scripts", DefaultScriptsDir} {
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		if !seen[abs] {
			seen[abs] = true
			dirs = append(dirs, abs)
		}
	}
	return append(dirs, BuiltinScripts)
}

// FindScript looks for the script name (.yaml optional) in dirs, in order,
// and returns the path of the first one that is there. A name with ".." or
// an absolute path is refused; a name found nowhere is an error listing
// every path tried, with the closest name there is.
func FindScript(dirs []string, name string) (string, error) {
	var tried, names []string
	for _, dir := range dirs {
		path, err := motion.Resolve(dir, name)
		if err != nil {
			return "", fmt.Errorf("motion script %w", err)
		}
		if isScript(path) {
			return path, nil
		}
		tried = append(tried, path)
		names = append(names, ScriptNames(dir)...)
	}
	return "", fmt.Errorf("no motion script %q; tried %s%s", strings.TrimSpace(name), strings.Join(tried, ", "), schema.DidYouMean(strings.TrimSpace(name), names, "%q"))
}

// ReadScript reads a motion script or servos.yaml found by FindScript or
// in a scripts directory: one of the built-in scripts, or a file read with
// read.
func ReadScript(path string, read func(string) ([]byte, error)) ([]byte, error) {
	if name, ok := builtinName(path); ok {
		return iofs.ReadFile(scripts.FS, name)
	}
	return read(path)
}

// builtinName returns the name in scripts.FS of a path under
// BuiltinScripts.
func builtinName(path string) (string, bool) {
	return strings.CutPrefix(filepath.ToSlash(path), BuiltinScripts+"/")
}

// isScript reports whether path is there and not a directory: a file (a
// FIFO too, which reading then refuses with its own message) or a
// built-in script.
func isScript(path string) bool {
	var fi iofs.FileInfo
	var err error
	if name, ok := builtinName(path); ok {
		fi, err = iofs.Stat(scripts.FS, name)
	} else {
		fi, err = os.Stat(path)
	}
	return err == nil && !fi.IsDir()
}

// isDir reports whether dir is a directory, or the built-in scripts.
func isDir(dir string) bool {
	if dir == BuiltinScripts {
		return true
	}
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// ScriptNames lists the scripts in dir by name (not servos.yaml), for
// suggestions.
func ScriptNames(dir string) []string {
	var entries []iofs.DirEntry
	if dir == BuiltinScripts {
		entries, _ = iofs.ReadDir(scripts.FS, ".")
	} else {
		entries, _ = os.ReadDir(dir)
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() && name != "servos" {
			names = append(names, name)
		}
	}
	return names
}
