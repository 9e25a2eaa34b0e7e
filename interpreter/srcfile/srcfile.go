// Package srcfile reads the files that a behavior or a document names
// for seat to read: SEATML's execfile, SCXML's <script src>, <data src>
// and <invoke src>/srcexpr, whether the name was written in the file or
// made at run time (a srcexpr, a document built by a script). Read holds
// every such read to the same three rules:
//
//   - the file is under the directory of the file that names it: a name
//     that is absolute or leads up out of it with "..", and a symbolic
//     link that leads out of it, are refused, before anything outside is
//     looked at, so the refusal does not tell whether a file outside
//     exists;
//   - it is a regular file: a device (/dev/zero would never end), a FIFO
//     (it would block the reader until a writer came) or a directory is
//     refused, and a FIFO is opened without waiting for a writer;
//   - it is at most MaxSize bytes.
package srcfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MaxSize is the most bytes Read reads of one file: a Lua file, a data
// file or an SCXML document is far smaller.
const MaxSize = 4 << 20

// ErrOutside is returned for a name that leads outside the directory.
var ErrOutside = errors.New("the path leads outside the document's directory: seat reads only files under it")

// Read reads the file that name (relative, with / or the system's
// separator) names under dir, as the package's rules say. Its errors say
// what is wrong without naming the file (the caller names it): one
// wrapping ErrOutside, fs.ErrNotExist or another cause, "it is not a
// regular file (a FIFO)", or "it is larger than 4 MiB".
func Read(dir, name string) ([]byte, error) {
	if name == "" {
		return nil, errors.New("the path is empty")
	}
	if !filepath.IsLocal(name) {
		return nil, ErrOutside
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, cause(err)
	}
	defer root.Close()
	name = filepath.Clean(name)
	data, err := readChecked(func() (fs.FileInfo, error) { return root.Stat(name) },
		func() (*os.File, error) { return root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0) }, MaxSize, "a file a document names")
	if err != nil {
		return nil, cause(err)
	}
	return data, nil
}

// readChecked reads a file as the package's rules say: stat it first, so
// that a device is never opened (opening one can do something); then
// open it without waiting for a FIFO's writer and look again at what was
// opened, in case the file changed in between; read at most limit bytes.
// what names such files in the size error.
func readChecked(stat func() (fs.FileInfo, error), open func() (*os.File, error), limit int64, what string) ([]byte, error) {
	st, err := stat()
	if err != nil {
		return nil, err
	}
	if err := regular(st, limit, what); err != nil {
		return nil, err
	}
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(opened, limit, what); err != nil {
		return nil, err
	}
	if !os.SameFile(st, opened) {
		return nil, errors.New("the file changed while it was opened")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, sizeError(limit, what)
	}
	return data, nil
}

// MaxAuthored is the most bytes ReadRegular reads: a behavior file, an
// included one or a device file, which its author names (a generated
// behavior of 10,000 rules is some 2 MiB).
const MaxAuthored = 64 << 20

// ReadRegular reads a file its author named (the behavior file, what it
// includes, a device or motion file) wherever it is, held to the other
// two rules: a regular file (a FIFO or a device given by mistake is
// refused, not waited on or read forever), of at most MaxAuthored bytes.
// Its errors name the path, as os.ReadFile's do.
func ReadRegular(path string) ([]byte, error) {
	data, err := readChecked(func() (fs.FileInfo, error) { return os.Stat(path) },
		func() (*os.File, error) { return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) }, MaxAuthored, "such a file")
	if err != nil {
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			err = &fs.PathError{Op: "read", Path: path, Err: err}
		}
	}
	return data, err
}

func sizeError(limit int64, what string) error {
	return fmt.Errorf("it is larger than %d MiB, the most seat reads of %s", limit>>20, what)
}

// regular refuses what is not a regular file, or is over limit bytes.
func regular(st fs.FileInfo, limit int64, what string) error {
	m := st.Mode()
	if m.IsRegular() {
		if st.Size() > limit {
			return sizeError(limit, what)
		}
		return nil
	}
	kind := "a special file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a FIFO"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	}
	return fmt.Errorf("it is not a regular file (%s): seat reads only regular files", kind)
}

// cause is an error's cause without its path (the caller names the
// file), and ErrOutside for a symbolic link that leads out of the root.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	// os.Root's error for a path that escapes it is not exported.
	if err.Error() == "path escapes from parent" {
		return ErrOutside
	}
	return err
}
