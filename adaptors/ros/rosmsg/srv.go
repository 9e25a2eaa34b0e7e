package rosmsg

import (
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/bluenviron/goroslib/v2/pkg/msg"
	"github.com/bluenviron/goroslib/v2/pkg/serviceproc"
)

// Service is a service type: its request and response messages, and a Go
// type goroslib's service servers and clients take.
type Service struct {
	Name              string // "pkg/Type"
	File              string
	Request, Response *Type
	Go                reflect.Type
	MD5               string
}

// Action is an action type: its goal, result and feedback messages, and
// a Go type goroslib's action servers and clients take (goroslib builds
// the ActionGoal, ActionResult and ActionFeedback wrappers itself).
type Action struct {
	Name                   string // "pkg/Type"
	File                   string
	Goal, Result, Feedback *Type
	Go                     reflect.Type
}

// parts splits a .srv or .action text at its "---" lines. Each part keeps
// the file's line numbers (the lines of the other parts are left empty).
func parts(text string) []string {
	lines := strings.Split(text, "\n")
	var out []string
	start := 0
	cut := func(end int) {
		p := make([]string, len(lines))
		copy(p[start:end], lines[start:end])
		out = append(out, strings.Join(p, "\n"))
	}
	for i, l := range lines {
		if strings.TrimSpace(strings.TrimRight(l, "\r")) == "---" {
			cut(i)
			start = i + 1
		}
	}
	cut(len(lines))
	return out
}

// Service returns the service type named "pkg/Type" (or "pkg.Type").
func (r *Registry) Service(name string) (*Service, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.services[name]; ok {
		return s, nil
	}
	pkg, typ, path, ps, err := r.definition(name, "service", "srv", 2)
	if err != nil {
		return nil, err
	}
	req, err := r.parsed(pkg, typ+"Request", path, ps[0])
	if err != nil {
		return nil, err
	}
	res, err := r.parsed(pkg, typ+"Response", path, ps[1])
	if err != nil {
		return nil, err
	}
	// goroslib reads a service struct as its package, then the request and
	// the response; the name comes after them, where its reading of the
	// request and response stops before it.
	gt := reflect.StructOf([]reflect.StructField{
		{Name: "Package", Type: reflect.TypeOf(msg.Package(0)), Anonymous: true, Tag: reflect.StructTag(`ros:"` + pkg + `"`)},
		{Name: "Req", Type: req.Go},
		{Name: "Res", Type: res.Go},
		{Name: "Name", Type: reflect.TypeOf(msg.Name(0)), Anonymous: true, Tag: reflect.StructTag(`ros:"` + typ + `"`)},
	})
	sum, err := serviceproc.MD5(reflect.Zero(gt).Interface())
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", pkg, typ, err)
	}
	s := &Service{Name: pkg + "/" + typ, File: path, Request: req, Response: res, Go: gt, MD5: sum}
	if got, err := serviceproc.Type(reflect.Zero(gt).Interface()); err != nil || got != s.Name {
		return nil, fmt.Errorf("%s: goroslib names the built service %q (%v)", s.Name, got, err)
	}
	r.services[name] = s
	return s, nil
}

// Action returns the action type named "pkg/Type" (or "pkg.Type").
func (r *Registry) Action(name string) (*Action, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.actions[name]; ok {
		return a, nil
	}
	pkg, typ, path, ps, err := r.definition(name, "action", "action", 3)
	if err != nil {
		return nil, err
	}
	var ts [3]*Type
	for i, suffix := range []string{"Goal", "Result", "Feedback"} {
		if ts[i], err = r.parsed(pkg, typ+suffix, path, ps[i]); err != nil {
			return nil, err
		}
	}
	gt := reflect.StructOf([]reflect.StructField{
		{Name: "Package", Type: reflect.TypeOf(msg.Package(0)), Anonymous: true, Tag: reflect.StructTag(`ros:"` + pkg + `"`)},
		{Name: "Goal", Type: ts[0].Go},
		{Name: "Result", Type: ts[1].Go},
		{Name: "Feedback", Type: ts[2].Go},
		{Name: "Name", Type: reflect.TypeOf(msg.Name(0)), Anonymous: true, Tag: reflect.StructTag(`ros:"` + typ + `"`)},
	})
	a := &Action{Name: pkg + "/" + typ, File: path, Goal: ts[0], Result: ts[1], Feedback: ts[2], Go: gt}
	r.actions[name] = a
	return a, nil
}

// definition reads the definition of a service or action type (kind,
// in directory dir) and cuts it into its n parts.
func (r *Registry) definition(name, kind, dir string, n int) (pkg, typ, path string, ps []string, err error) {
	pkg, typ, ok := SplitName(name)
	if !ok {
		return "", "", "", nil, &NotFoundError{Type: name, Kind: kind, Problem: "a " + kind + " type is written pkg/Type"}
	}
	path, text, tried, err := r.find(pkg, typ, dir, "."+dir)
	if parts, ok := compiledServices[pkg+"/"+typ]; ok && kind == "service" && os.IsNotExist(err) {
		// No definition file: goroslib's compiled type gives the text.
		path = "goroslib's compiled " + pkg + "/" + typ
		var req, res []byte
		if req, err = compiledText(parts[0]); err == nil {
			res, err = compiledText(parts[1])
		}
		text = []byte(string(req) + "\n---\n" + string(res))
	}
	if err != nil {
		if os.IsNotExist(err) {
			return "", "", "", nil, r.notFound(kind, pkg, typ, dir, "."+dir, tried)
		}
		return "", "", "", nil, fmt.Errorf("%s: %w", path, err)
	}
	ps = parts(string(text))
	if len(ps) != n {
		what := "a request and a response separated by a --- line"
		if kind == "action" {
			what = "a goal, a result and a feedback separated by --- lines"
		}
		return "", "", "", nil, &SyntaxError{path, 1, fmt.Sprintf("a %s definition is %s, not %d parts", kind, what, len(ps))}
	}
	return pkg, typ, path, ps, nil
}

// parsed parses and builds one part of a service or action definition.
func (r *Registry) parsed(pkg, name, file, text string) (*Type, error) {
	full := pkg + "/" + name
	if t, ok := r.types[full]; ok {
		return t, nil
	}
	spec, err := Parse(pkg, name, file, text)
	if err != nil {
		return nil, err
	}
	return r.build(spec, []string{full})
}
