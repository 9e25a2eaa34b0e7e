package rosmsg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bluenviron/goroslib/v2/pkg/msg"
	"github.com/bluenviron/goroslib/v2/pkg/msgproc"

	"github.com/seatml/seat/schema"
)

// Registry finds, parses and builds message types, each once.
type Registry struct {
	// Roots are the directories searched, in order, for PKG/msg/Type.msg
	// (and srv/, action/): each ROS_PACKAGE_PATH entry, then /usr/share.
	Roots []string

	mu       sync.Mutex
	types    map[string]*Type
	services map[string]*Service
	actions  map[string]*Action
}

// Type is a message type: its definition and its Go type.
type Type struct {
	Spec *Spec
	Go   reflect.Type // a struct goroslib serializes
	MD5  string
}

// New returns a zero message of the type: a pointer to its Go struct.
func (t *Type) New() any { return reflect.New(t.Go).Interface() }

// DefaultRoots returns the directories searched for definitions: each
// entry of ROS_PACKAGE_PATH (a package's own directory, or a directory
// of packages), then /usr/share, where Debian's ROS packages put theirs.
func DefaultRoots() []string {
	var roots []string
	for _, d := range filepath.SplitList(os.Getenv("ROS_PACKAGE_PATH")) {
		if d != "" {
			roots = append(roots, d)
		}
	}
	return append(roots, "/usr/share")
}

// NewRegistry returns a registry searching roots (DefaultRoots when nil).
func NewRegistry(roots []string) *Registry {
	if roots == nil {
		roots = DefaultRoots()
	}
	return &Registry{Roots: roots, types: map[string]*Type{}, services: map[string]*Service{}, actions: map[string]*Action{}}
}

// NotFoundError says a type's definition is nowhere on the search path.
type NotFoundError struct {
	Type    string
	Kind    string // "message" (when empty), "service" or "action"
	Tried   []string
	UsedBy  string // the type whose field needs it, if any
	Problem string // set when the name itself is wrong
	Suggest string // a type of the same package with a close name
	// NoPackage is set when no root holds the type's package at all: the
	// name may well be right, and what is missing is the package.
	NoPackage bool
	Roots     []string // the directories searched, for NoPackage
}

func (e *NotFoundError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "message"
	}
	if e.Problem != "" {
		return fmt.Sprintf("%s type %q: %s", kind, e.Type, e.Problem)
	}
	if e.NoPackage {
		pkg, typ, _ := strings.Cut(e.Type, "/")
		dir := map[string]string{"service": "srv", "action": "action"}[e.Kind]
		if dir == "" {
			dir = "msg"
		}
		s := fmt.Sprintf("%s type %q: package %s is not on this machine (searched %s)", kind, e.Type, pkg, strings.Join(e.Roots, ", "))
		if e.UsedBy != "" {
			s += "; a field of " + e.UsedBy + " needs it"
		}
		return s + fmt.Sprintf("; seat run needs %s/%s/%s.%s: install the ROS package %s, or add the directory that holds %s/ to ROS_PACKAGE_PATH", pkg, dir, typ, dir, pkg, pkg)
	}
	s := fmt.Sprintf("%s type %q not found; searched %s", kind, e.Type, strings.Join(e.Tried, ", "))
	if e.UsedBy != "" {
		s += " (a field of " + e.UsedBy + " needs it)"
	}
	if e.Suggest != "" {
		s += "; did you mean " + e.Suggest + "?"
	}
	return s
}

// MissingPackage reports whether err says that a type's whole package is
// not on this machine, and which package: seat check warns of it (the name
// may be right; seat run needs the package), where a type missing from a
// package that is there is an error.
func MissingPackage(err error) (string, bool) {
	var nf *NotFoundError
	if !errors.As(err, &nf) || !nf.NoPackage {
		return "", false
	}
	pkg, _, _ := strings.Cut(nf.Type, "/")
	return pkg, true
}

// hasPackage reports whether a root holds package pkg (a directory
// pkg/ under it, or the root itself when it is named pkg), or goroslib
// ships types of it compiled.
func (r *Registry) hasPackage(pkg string) bool {
	for _, root := range r.Roots {
		for _, d := range []string{filepath.Join(root, pkg), root} {
			if filepath.Base(d) != pkg {
				continue
			}
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				return true
			}
		}
	}
	for name := range compiled {
		if strings.HasPrefix(name, pkg+"/") {
			return true
		}
	}
	for name := range compiledServices {
		if strings.HasPrefix(name, pkg+"/") {
			return true
		}
	}
	return false
}

// notFound is the error for type pkg/typ (a kind found in dir, with
// extension ext) that no root has: the paths tried and a close name of
// the package, or that the package itself is missing.
func (r *Registry) notFound(kind, pkg, typ, dir, ext string, tried []string) *NotFoundError {
	nf := &NotFoundError{Type: pkg + "/" + typ, Kind: kind, Tried: tried}
	if r.hasPackage(pkg) {
		nf.Suggest = r.near(pkg, typ, dir, ext)
	} else {
		nf.NoPackage, nf.Roots = true, r.Roots
	}
	return nf
}

// SplitName splits "pkg/Type" (or eSEAT's "pkg.Type", as in
// service_type="std_srvs.Empty") into its package and name.
func SplitName(name string) (pkg, typ string, ok bool) {
	sep := "/"
	if !strings.Contains(name, "/") {
		sep = "."
	}
	pkg, typ, ok = strings.Cut(name, sep)
	if !ok || !validName(pkg) || !validName(typ) {
		return "", "", false
	}
	return pkg, typ, true
}

// Message returns the message type named "pkg/Type".
func (r *Registry) Message(name string) (*Type, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.message(name, nil)
}

// find reads the definition file of pkg/typ in dir (msg, srv or action)
// from the first root that has it.
func (r *Registry) find(pkg, typ, dir, ext string) (path string, text []byte, tried []string, err error) {
	for _, root := range r.Roots {
		// A root is a directory of packages, or a package itself.
		candidates := []string{filepath.Join(root, pkg, dir, typ+ext)}
		if filepath.Base(root) == pkg {
			candidates = append(candidates, filepath.Join(root, dir, typ+ext))
		}
		for _, p := range candidates {
			tried = append(tried, p)
			b, err := os.ReadFile(p)
			if err == nil {
				return p, b, tried, nil
			}
			if !os.IsNotExist(err) {
				return p, nil, tried, err
			}
		}
	}
	return "", nil, tried, os.ErrNotExist
}

// near is the type of package pkg (in dir, msg, srv or action) whose
// name is closest to typ, as "pkg/Name"; "" if none is close.
func (r *Registry) near(pkg, typ, dir, ext string) string {
	var names []string
	for _, root := range r.Roots {
		for _, d := range []string{filepath.Join(root, pkg, dir), filepath.Join(root, dir)} {
			if d == filepath.Join(root, dir) && filepath.Base(root) != pkg {
				continue
			}
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if n, ok := strings.CutSuffix(e.Name(), ext); ok {
					names = append(names, n)
				}
			}
		}
	}
	for name := range compiled {
		if p, n, _ := strings.Cut(name, "/"); p == pkg && dir == "msg" {
			names = append(names, n)
		}
	}
	for name := range compiledServices {
		if p, n, _ := strings.Cut(name, "/"); p == pkg && dir == "srv" {
			names = append(names, n)
		}
	}
	slices.Sort(names) // the same suggestion every time
	if s := schema.Suggest(typ, names); s != "" {
		return pkg + "/" + s
	}
	return ""
}

func (r *Registry) message(name string, stack []string) (*Type, error) {
	if t, ok := r.types[name]; ok {
		return t, nil
	}
	pkg, typ, ok := SplitName(name)
	if !ok {
		return nil, &NotFoundError{Type: name, Problem: "a message type is written pkg/Type"}
	}
	for _, s := range stack {
		if s == name {
			return nil, fmt.Errorf("message type %s contains itself (%s)", name, strings.Join(append(stack, name), " > "))
		}
	}
	path, text, tried, err := r.find(pkg, typ, "msg", ".msg")
	if zero, ok := compiled[pkg+"/"+typ]; ok && os.IsNotExist(err) {
		// No definition file: goroslib's compiled type gives the text.
		path = "goroslib's compiled " + pkg + "/" + typ
		text, err = compiledText(zero)
	}
	if err != nil {
		nf := r.notFound("", pkg, typ, "msg", ".msg", tried)
		if len(stack) > 0 {
			nf.UsedBy = stack[len(stack)-1]
		}
		if os.IsNotExist(err) {
			return nil, nf
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	spec, err := Parse(pkg, typ, path, string(text))
	if err != nil {
		return nil, err
	}
	return r.build(spec, append(stack, pkg+"/"+typ))
}

// build makes the Go type of a parsed definition, building the types its
// fields use first.
func (r *Registry) build(spec *Spec, stack []string) (*Type, error) {
	fields := []reflect.StructField{
		{Name: "Package", Type: reflect.TypeOf(msg.Package(0)), Anonymous: true, Tag: reflect.StructTag(`ros:"` + spec.Package + `"`)},
		{Name: "Name", Type: reflect.TypeOf(msg.Name(0)), Anonymous: true, Tag: reflect.StructTag(`ros:"` + spec.Name + `"`)},
	}
	if len(spec.Constants) > 0 {
		var defs []string
		for _, c := range spec.Constants {
			if strings.ContainsAny(c.Value, ",\"`") {
				return nil, &SyntaxError{spec.File, c.Line, fmt.Sprintf("constant %s: a value with a comma or a quote is not supported", c.Name)}
			}
			defs = append(defs, c.Type+" "+c.Name+"="+c.Value)
		}
		fields = append(fields, reflect.StructField{Name: "Definitions", Type: reflect.TypeOf(msg.Definitions(0)), Anonymous: true,
			Tag: reflect.StructTag(`ros:"` + strings.Join(defs, ",") + `"`)})
	}
	used := map[string]bool{"Package": true, "Name": true, "Definitions": true}
	for _, f := range spec.Fields {
		elem, tag := primitiveTypes[f.Type], ""
		switch {
		case f.Type == "byte" || f.Type == "char":
			tag = ` rostype:"` + f.Type + `"` // int8 and uint8 that keep their ROS name
		case elem == nil:
			t, err := r.message(f.Type, stack)
			if err != nil {
				return nil, err
			}
			elem = t.Go
		}
		switch {
		case f.Array && f.Len > 0:
			elem = reflect.ArrayOf(f.Len, elem)
		case f.Array:
			elem = reflect.SliceOf(elem)
		}
		goName := exportedName(f.Name, used)
		fields = append(fields, reflect.StructField{Name: goName, Type: elem, Tag: reflect.StructTag(`rosname:"` + f.Name + `"` + tag)})
	}
	gt := reflect.StructOf(fields)
	zero := reflect.Zero(gt).Interface()
	sum, err := msgproc.MD5(zero)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.FullName(), err)
	}
	t := &Type{Spec: spec, Go: gt, MD5: sum}
	r.types[spec.FullName()] = t
	return t, nil
}

// primitiveTypes are the Go types of ROS's built-in field types.
var primitiveTypes = map[string]reflect.Type{
	"bool": reflect.TypeOf(false), "int8": reflect.TypeOf(int8(0)), "byte": reflect.TypeOf(int8(0)),
	"uint8": reflect.TypeOf(uint8(0)), "char": reflect.TypeOf(uint8(0)),
	"int16": reflect.TypeOf(int16(0)), "uint16": reflect.TypeOf(uint16(0)),
	"int32": reflect.TypeOf(int32(0)), "uint32": reflect.TypeOf(uint32(0)),
	"int64": reflect.TypeOf(int64(0)), "uint64": reflect.TypeOf(uint64(0)),
	"float32": reflect.TypeOf(float32(0)), "float64": reflect.TypeOf(float64(0)),
	"string": reflect.TypeOf(""), "time": reflect.TypeOf(time.Time{}), "duration": reflect.TypeOf(time.Duration(0)),
}

// exportedName is a Go field name for a ROS field name: CamelCase, made
// unique among the struct's fields (the rosname tag keeps the ROS name).
func exportedName(ros string, used map[string]bool) string {
	var b strings.Builder
	up := true
	for _, r := range ros {
		if r == '_' {
			up = true
			continue
		}
		if up {
			b.WriteString(strings.ToUpper(string(r)))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	name := "F" + b.String() // F: a name may start with a digit after the cut
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("F%s%d", b.String(), i)
	}
	used[name] = true
	return name
}

//go:generate go run gen_compiled.go

// compiledText is the definition of one of goroslib's compiled message
// types, without the definitions of the types its fields use (the
// registry finds those by name).
func compiledText(zero any) ([]byte, error) {
	def, err := msgproc.Definition(zero)
	if err != nil {
		return nil, err
	}
	main, _, _ := strings.Cut(def, "\n"+strings.Repeat("=", 80)+"\n")
	return []byte(main), nil
}
