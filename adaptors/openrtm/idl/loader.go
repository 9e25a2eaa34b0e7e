package idl

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/seatml/seat/adaptors/openrtm/corba"
	"github.com/seatml/seat/schema"
)

// PathEnv names the environment variable with directories to search for
// IDL files, separated as the system separates PATH (":" on Unix), before
// the OpenRTM install locations.
const PathEnv = "SEAT_IDL_PATH"

// StandardFiles are the OpenRTM IDL files that define the data types of
// data ports, loaded on the first lookup of a name not yet known.
var StandardFiles = []string{"BasicDataType.idl", "ExtendedDataTypes.idl", "InterfaceDataTypes.idl"}

// maxFileSize bounds the size of one IDL file.
const maxFileSize = 8 << 20

// installGlobs are OpenRTM-aist's install locations for its IDL (see the
// package documentation).
var installGlobs = []string{
	"/usr/include/openrtm-*/rtm/idl",
	"/usr/local/include/openrtm-*/rtm/idl",
	"/opt/openrtm-aist/include/openrtm-*/rtm/idl",
	"/usr/share/openrtm-*/idl",
	"/usr/lib/python3/dist-packages/OpenRTM_aist/RTM_IDL",
	"/usr/local/lib/python3*/dist-packages/OpenRTM_aist/RTM_IDL",
}

// DefaultPath returns the search path: each directory of $SEAT_IDL_PATH,
// then $RTM_ROOT/rtm/idl when RTM_ROOT is set, then those of OpenRTM's
// install locations that exist, newest version first.
func DefaultPath() []string {
	var path []string
	for _, d := range filepath.SplitList(os.Getenv(PathEnv)) {
		if d != "" {
			path = append(path, d)
		}
	}
	if r := os.Getenv("RTM_ROOT"); r != "" {
		path = append(path, filepath.Join(r, "rtm", "idl"))
	}
	for _, g := range installGlobs {
		m, _ := filepath.Glob(g)
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		for _, d := range m {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				path = append(path, d)
			}
		}
	}
	return path
}

// Loader reads IDL files and keeps what they declare. It is safe for
// concurrent use.
type Loader struct {
	mu       sync.Mutex
	path     []string
	decls    map[string]*decl
	done     map[string]bool   // files parsed (absolute paths)
	contents map[[32]byte]bool // the SHA-256 of each file's contents parsed
	stack    []string          // files being parsed, outermost first
	macros   map[string][]token
	standard bool // StandardFiles loaded
	scanned  bool // every file on the path loaded
	scanErrs []error
}

// NewLoader returns a Loader that searches path for IDL files (see
// DefaultPath).
func NewLoader(path []string) *Loader {
	return &Loader{path: append([]string(nil), path...), decls: map[string]*decl{}, done: map[string]bool{}, contents: map[[32]byte]bool{}, macros: map[string][]token{}}
}

// Load parses an IDL file and what it includes: name is a path (absolute,
// or relative to the working directory, if it exists) or a file name on
// the search path. A file already loaded is not read again.
func (l *Loader) Load(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.load(name)
}

func (l *Loader) load(name string) error {
	file := name
	if _, err := os.Stat(file); err != nil {
		found, tried := l.find(name, "")
		if found == "" {
			return fmt.Errorf("cannot find IDL file %q (searched %s)", name, searched(tried))
		}
		file = found
	}
	return l.parseFile(file, schema.Pos{})
}

// Parse parses IDL source as if read from file name; its includes are
// searched for beside name and on the search path.
func (l *Loader) Parse(name string, src []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	abs, _ := filepath.Abs(name)
	if l.done[abs] {
		return nil
	}
	return l.parseSource(abs, name, src)
}

func searched(dirs []string) string {
	if len(dirs) == 0 {
		return "no directories: the search path is empty; set " + PathEnv
	}
	return strings.Join(dirs, ", ")
}

// find looks for a file on the search path, after dir when dir != "".
func (l *Loader) find(name, dir string) (string, []string) {
	var tried []string
	dirs := l.path
	if dir != "" {
		dirs = append([]string{dir}, dirs...)
	}
	for _, d := range dirs {
		if contains(tried, d) {
			continue
		}
		tried = append(tried, d)
		f := filepath.Join(d, name)
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() {
			return f, tried
		}
	}
	return "", tried
}

// parseFile parses a file once; at is the #include that asked for it.
func (l *Loader) parseFile(file string, at schema.Pos) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	for i, f := range l.stack {
		if f == abs {
			chain := make([]string, 0, len(l.stack)-i+1)
			for _, g := range l.stack[i:] {
				chain = append(chain, filepath.Base(g))
			}
			chain = append(chain, filepath.Base(abs))
			return &Error{Pos: at, Msg: "include cycle: " + strings.Join(chain, " → ")}
		}
	}
	if l.done[abs] {
		return nil
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", file)
	}
	f, err := os.Open(abs)
	if err != nil {
		return err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return err
	}
	// The same file in another place (each behavior ships a copy of its
	// robot's IDL) declares nothing new: it is read once.
	sum := sha256.Sum256(src)
	if l.contents[sum] {
		l.done[abs] = true
		return nil
	}
	l.contents[sum] = true
	return l.parseSource(abs, file, src)
}

func (l *Loader) parseSource(abs, shown string, src []byte) error {
	if len(src) > maxFileSize {
		return fmt.Errorf("%s: file of %d bytes is larger than %d", shown, len(src), maxFileSize)
	}
	if len(l.stack) > maxDepth {
		return fmt.Errorf("%s: includes nested deeper than %d", shown, maxDepth)
	}
	l.stack = append(l.stack, abs)
	defer func() { l.stack = l.stack[:len(l.stack)-1] }()
	p := &parser{l: l, lx: newLexer(shown, src, l.macros), file: abs}
	err := p.run()
	l.done[abs] = true
	return err
}

// include handles an #include in file.
func (l *Loader) include(file string, t token) error {
	dir := ""
	if !t.angle {
		dir = filepath.Dir(file)
	}
	found, tried := l.find(t.text, dir)
	if found == "" {
		if t.angle && !contains(tried, filepath.Dir(file)) {
			tried = append(tried, filepath.Dir(file))
			if f := filepath.Join(filepath.Dir(file), t.text); fileExists(f) {
				found = f
			}
		}
		if found == "" {
			return &Error{Pos: t.pos, Msg: fmt.Sprintf("cannot find include file %q (searched %s)", t.text, searched(tried))}
		}
	}
	return l.parseFile(found, t.pos)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func fileExists(f string) bool {
	fi, err := os.Stat(f)
	return err == nil && !fi.IsDir()
}

// resolveIn finds a name from scope (see parser.resolve).
func (l *Loader) resolveIn(scope []string, name string) *decl {
	if strings.HasPrefix(name, "::") {
		return l.decls[name[2:]]
	}
	first, rest, _ := strings.Cut(name, "::")
	for i := len(scope); i >= 0; i-- {
		prefix := strings.Join(scope[:i], "::")
		head := first
		if prefix != "" {
			head = prefix + "::" + first
		}
		if _, ok := l.decls[head]; ok {
			if rest == "" {
				return l.decls[head]
			}
			return l.decls[head+"::"+rest]
		}
	}
	return nil
}

// visible returns names for suggestions: every declared name, relative
// to scope where it is inside it.
func (l *Loader) visible(scope []string) []string {
	names := make([]string, 0, len(l.decls))
	for n := range l.decls {
		short := n
		for i := len(scope); i > 0; i-- {
			if s, ok := strings.CutPrefix(n, strings.Join(scope[:i], "::")+"::"); ok {
				short = s
				break
			}
		}
		names = append(names, short)
	}
	sort.Strings(names)
	return names
}

// ErrNotFound is wrapped by the error of a Lookup that found no type.
var ErrNotFound = errors.New("unknown IDL type")

// Lookup returns the TypeCode of a data type by the name eSEAT users
// write in datatype=: "TimedString", "RTC.TimedString", "RTC::TimedString",
// "::RTC::TimedString", "MyModule::MyType". A name without a module is
// looked for in module RTC first, then anywhere if only one module
// declares it. Names not yet known load StandardFiles from the search
// path, then every *.idl file in its directories; an unknown name is an
// error that wraps ErrNotFound, with a suggestion and the directories
// searched. The TypeCode is shared by every caller: do not modify it.
func (l *Loader) Lookup(name string) (*corba.TypeCode, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(name), ".", "::"), "::")
	if tc, err := l.lookup(key); tc != nil || err != nil {
		return tc, err
	}
	if !l.standard {
		l.standard = true
		for _, f := range StandardFiles {
			if found, _ := l.find(f, ""); found != "" {
				if err := l.parseFile(found, schema.Pos{}); err != nil {
					return nil, err
				}
			}
		}
		if tc, err := l.lookup(key); tc != nil || err != nil {
			return tc, err
		}
	}
	if !l.scanned {
		l.scanned = true
		for _, d := range l.path {
			files, _ := filepath.Glob(filepath.Join(d, "*.idl"))
			sort.Strings(files)
			for _, f := range files {
				if err := l.parseFile(f, schema.Pos{}); err != nil {
					l.scanErrs = append(l.scanErrs, err)
				}
			}
		}
		if tc, err := l.lookup(key); tc != nil || err != nil {
			return tc, err
		}
	}
	return nil, l.notFound(name, key)
}

func (l *Loader) lookup(key string) (*corba.TypeCode, error) {
	d := l.decls[key]
	if d == nil && !strings.Contains(key, "::") {
		if d = l.decls["RTC::"+key]; d == nil {
			var found []*decl
			for n, x := range l.decls {
				if x.data && strings.HasSuffix(n, "::"+key) {
					found = append(found, x)
				}
			}
			switch len(found) {
			case 0:
			case 1:
				d = found[0]
			default:
				names := make([]string, len(found))
				for i, f := range found {
					names[i] = f.name
				}
				sort.Strings(names)
				return nil, fmt.Errorf("IDL type name %s is ambiguous: write one of %s", key, strings.Join(names, ", "))
			}
		}
	}
	if d == nil {
		return nil, nil
	}
	if !d.data {
		what := map[declKind]string{dModule: "a module", dInterface: "an interface", dConst: "a constant", dEnumerator: "an enumerator", dType: "not a data type"}[d.kind]
		return nil, fmt.Errorf("%s (%v) is %s, not a data type", d.name, d.pos, what)
	}
	if !d.defined {
		return nil, fmt.Errorf("%s (%v) is declared but never defined", d.name, d.pos)
	}
	return d.tc, nil
}

func (l *Loader) notFound(name, key string) error {
	var cands []string
	for _, d := range l.decls {
		if d.data {
			cands = append(cands, d.name)
			if strings.HasPrefix(d.name, "RTC::") {
				cands = append(cands, strings.TrimPrefix(d.name, "RTC::"))
			}
		}
	}
	sort.Strings(cands)
	msg := fmt.Sprintf("%v %q%s", ErrNotFound, name, schema.DidYouMean(key, cands, "%s"))
	if len(l.path) == 0 {
		msg += "; the IDL search path is empty: set " + PathEnv
	} else {
		msg += " (searched " + strings.Join(l.path, ", ") + ")"
	}
	if len(l.scanErrs) > 0 {
		msg += fmt.Sprintf("; %d IDL files did not load, the first: %v", len(l.scanErrs), l.scanErrs[0])
	}
	return fmt.Errorf("%w", &lookupError{msg})
}

type lookupError struct{ msg string }

func (e *lookupError) Error() string { return e.msg }
func (e *lookupError) Unwrap() error { return ErrNotFound }

// Types returns the scoped names ("RTC::TimedString") of the data types
// loaded so far, sorted.
func (l *Loader) Types() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var names []string
	for n, d := range l.decls {
		if d.data && d.defined {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
