package corba

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// CosNaming's repository ids (omniORB's COS/CosNaming.idl, prefix
// omg.org).
const (
	NamingContextID    = "IDL:omg.org/CosNaming/NamingContext:1.0"
	NamingContextExtID = "IDL:omg.org/CosNaming/NamingContextExt:1.0"
	notFoundID         = "IDL:omg.org/CosNaming/NamingContext/NotFound:1.0"
	cannotProceedID    = "IDL:omg.org/CosNaming/NamingContext/CannotProceed:1.0"
	invalidNameID      = "IDL:omg.org/CosNaming/NamingContext/InvalidName:1.0"
	alreadyBoundID     = "IDL:omg.org/CosNaming/NamingContext/AlreadyBound:1.0"
	notEmptyID         = "IDL:omg.org/CosNaming/NamingContext/NotEmpty:1.0"
)

// NameComponent is one component of a CosNaming name.
type NameComponent struct {
	ID, Kind string
}

// Name is a CosNaming name: a path of components.
type Name []NameComponent

// ParseName parses a stringified name as the Interoperable Naming
// Service writes them and OpenRTM registers components:
// "host.host_cxt/Foo0.rtc". Components are separated by '/', a
// component's id and kind by '.', and '\' escapes '/', '.' and '\'. A
// component without '.' has an empty kind; "." alone is the component
// with empty id and kind.
func ParseName(s string) (Name, error) {
	if s == "" {
		return nil, &InvalidNameError{Name: s, Why: "the name is empty"}
	}
	var n Name
	var cur [2]strings.Builder
	part, dots := 0, 0
	end := func(at int) error {
		id, kind := cur[0].String(), cur[1].String()
		switch {
		case part == 0 && id == "":
			return &InvalidNameError{Name: s, Why: fmt.Sprintf("component %d is empty", len(n)+1)}
		case part == 1 && kind == "" && id != "":
			return &InvalidNameError{Name: s, Why: fmt.Sprintf("component %d ends in '.' (at byte %d)", len(n)+1, at)}
		}
		n = append(n, NameComponent{ID: id, Kind: kind})
		cur[0].Reset()
		cur[1].Reset()
		part, dots = 0, 0
		return nil
	}
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '\\':
			if i+1 == len(s) || strings.IndexByte(`/.\`, s[i+1]) < 0 {
				return nil, &InvalidNameError{Name: s, Why: fmt.Sprintf(`'\' at byte %d escapes neither '/', '.' nor '\'`, i)}
			}
			i++
			cur[part].WriteByte(s[i])
		case '/':
			if err := end(i); err != nil {
				return nil, err
			}
		case '.':
			dots++
			if dots > 1 {
				return nil, &InvalidNameError{Name: s, Why: fmt.Sprintf("component %d has a second '.' (at byte %d); escape it as '\\.'", len(n)+1, i)}
			}
			part = 1
		default:
			cur[part].WriteByte(ch)
		}
	}
	if err := end(len(s)); err != nil {
		return nil, err
	}
	return n, nil
}

// String writes the name as ParseName reads it.
func (n Name) String() string {
	var b strings.Builder
	esc := func(s string) {
		for i := 0; i < len(s); i++ {
			if strings.IndexByte(`/.\`, s[i]) >= 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(s[i])
		}
	}
	for i, c := range n {
		if i > 0 {
			b.WriteByte('/')
		}
		esc(c.ID)
		if c.Kind != "" || c.ID == "" {
			b.WriteByte('.')
			esc(c.Kind)
		}
	}
	return b.String()
}

func (e *Encoder) writeName(n Name) {
	e.WriteULong(uint32(len(n)))
	for _, c := range n {
		e.WriteString(c.ID)
		e.WriteString(c.Kind)
	}
}

func (d *Decoder) readName() Name {
	k := d.ReadLength("name", 8)
	n := make(Name, 0, k)
	for i := 0; i < k && d.Err() == nil; i++ {
		n = append(n, NameComponent{ID: d.ReadString("name component id"), Kind: d.ReadString("name component kind")})
	}
	return n
}

// BindingType says whether a binding names an object or a context.
type BindingType uint32

// The binding types.
const (
	BindingObject BindingType = iota
	BindingContext
)

func (t BindingType) String() string {
	if t == BindingContext {
		return "context"
	}
	return "object"
}

// Binding is one entry of a context's list.
type Binding struct {
	Name Name // one component
	Type BindingType
}

// NotFoundReason says why a name was not found.
type NotFoundReason uint32

// The reasons of NotFound.
const (
	MissingNode NotFoundReason = iota
	NotContext
	NotObject
)

func (r NotFoundReason) String() string {
	switch r {
	case MissingNode:
		return "missing node"
	case NotContext:
		return "not a context"
	case NotObject:
		return "not an object"
	}
	return fmt.Sprintf("reason %d", uint32(r))
}

// NotFoundError is CosNaming's NotFound: the part of Name from Rest on
// could not be followed.
type NotFoundError struct {
	Name Name
	Why  NotFoundReason
	Rest Name // rest_of_name
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("naming: %q not found: %v at %q", e.Name.String(), e.Why, e.Rest.String())
}

// CannotProceedError is CosNaming's CannotProceed.
type CannotProceedError struct {
	Name    Name
	Context *IOR
	Rest    Name
}

func (e *CannotProceedError) Error() string {
	return fmt.Sprintf("naming: %q: the naming service cannot proceed at %q", e.Name.String(), e.Rest.String())
}

// InvalidNameError is CosNaming's InvalidName, or a name ParseName
// refuses.
type InvalidNameError struct {
	Name string
	Why  string // empty when the naming service said it
}

func (e *InvalidNameError) Error() string {
	if e.Why == "" {
		return fmt.Sprintf("naming: %q is an invalid name", e.Name)
	}
	return fmt.Sprintf("naming: %q is an invalid name: %s", e.Name, e.Why)
}

// AlreadyBoundError is CosNaming's AlreadyBound.
type AlreadyBoundError struct{ Name Name }

func (e *AlreadyBoundError) Error() string {
	return fmt.Sprintf("naming: %q is already bound", e.Name.String())
}

// ErrNotEmpty is CosNaming's NotEmpty: a context to destroy still has
// bindings.
var ErrNotEmpty = errors.New("naming: the context is not empty")

// NamingContext is a client of a CosNaming NamingContext.
type NamingContext struct {
	obj *Object
}

// NewNamingContext returns a NamingContext client calling o.
func NewNamingContext(o *Object) *NamingContext { return &NamingContext{obj: o} }

// NameService returns the root context of the naming service at addr: a
// corbaloc URL ("corbaloc::host:port/NameService", as OpenRTM's
// corba.nameservers and omniORB's InitRef take), an IOR, or "host",
// "host:port" (port 2809 by default), as corba.nameservers also takes.
// Nothing is sent yet.
func (c *Client) NameService(addr string) (*NamingContext, error) {
	s := addr
	if !strings.HasPrefix(strings.ToLower(s), "corbaloc:") && !strings.HasPrefix(strings.ToUpper(s), "IOR:") {
		s = "corbaloc::" + s + "/NameService"
	}
	o, err := c.StringToObject(s)
	if err != nil {
		return nil, fmt.Errorf("naming service %q: %w", addr, err)
	}
	return NewNamingContext(o), nil
}

// IOR returns the context's object reference.
func (nc *NamingContext) IOR() *IOR { return nc.obj.IOR() }

// invoke calls op and turns CosNaming's user exceptions into errors.
func (nc *NamingContext) invoke(ctx context.Context, op string, n Name, args Args, results Results) error {
	err := nc.obj.Invoke(ctx, op, args, results)
	var ux *UserExceptionError
	if !errors.As(err, &ux) {
		if err != nil {
			return fmt.Errorf("naming: %s %q: %w", op, n.String(), err)
		}
		return nil
	}
	d := ux.Members
	var nerr error
	switch ux.ID {
	case notFoundID:
		x := &NotFoundError{Name: n, Why: NotFoundReason(d.ReadULong())}
		x.Rest = d.readName()
		nerr = x
	case cannotProceedID:
		x := &CannotProceedError{Name: n, Context: d.ReadIOR()}
		x.Rest = d.readName()
		nerr = x
	case invalidNameID:
		nerr = &InvalidNameError{Name: n.String()}
	case alreadyBoundID:
		nerr = &AlreadyBoundError{Name: n}
	case notEmptyID:
		nerr = ErrNotEmpty
	default:
		return fmt.Errorf("naming: %s %q: %w", op, n.String(), err)
	}
	if d.Err() != nil {
		return fmt.Errorf("naming: %s %q: %s: %w", op, n.String(), ux.ID, d.Err())
	}
	return nerr
}

func nameArg(n Name, ior *IOR) Args {
	return func(e *Encoder) error {
		e.writeName(n)
		if ior != nil {
			e.WriteIOR(ior)
		}
		return nil
	}
}

// Bind binds n to the object ior.
func (nc *NamingContext) Bind(ctx context.Context, n Name, ior *IOR) error {
	return nc.invoke(ctx, "bind", n, nameArg(n, nonNil(ior)), nil)
}

// Rebind binds n to the object ior, replacing a binding there.
func (nc *NamingContext) Rebind(ctx context.Context, n Name, ior *IOR) error {
	return nc.invoke(ctx, "rebind", n, nameArg(n, nonNil(ior)), nil)
}

// RebindContext binds n to the context ior, replacing a binding there.
func (nc *NamingContext) RebindContext(ctx context.Context, n Name, ior *IOR) error {
	return nc.invoke(ctx, "rebind_context", n, nameArg(n, nonNil(ior)), nil)
}

func nonNil(ior *IOR) *IOR {
	if ior == nil {
		return &IOR{}
	}
	return ior
}

// Resolve returns the object bound to n.
func (nc *NamingContext) Resolve(ctx context.Context, n Name) (*IOR, error) {
	var ior *IOR
	err := nc.invoke(ctx, "resolve", n, nameArg(n, nil), func(d *Decoder) error { ior = d.ReadIOR(); return nil })
	return ior, err
}

// ResolveContext resolves n and returns a client of the context bound
// there.
func (nc *NamingContext) ResolveContext(ctx context.Context, n Name) (*NamingContext, error) {
	ior, err := nc.Resolve(ctx, n)
	if err != nil {
		return nil, err
	}
	return NewNamingContext(nc.obj.c.Object(ior)), nil
}

// Unbind removes the binding of n.
func (nc *NamingContext) Unbind(ctx context.Context, n Name) error {
	return nc.invoke(ctx, "unbind", n, nameArg(n, nil), nil)
}

// BindNewContext makes a new context, binds it to n and returns it.
func (nc *NamingContext) BindNewContext(ctx context.Context, n Name) (*NamingContext, error) {
	var ior *IOR
	err := nc.invoke(ctx, "bind_new_context", n, nameArg(n, nil), func(d *Decoder) error { ior = d.ReadIOR(); return nil })
	if err != nil {
		return nil, err
	}
	return NewNamingContext(nc.obj.c.Object(ior)), nil
}

// RebindPath binds n to ior as OpenRTM registers a component: the
// contexts on the way are made when they are missing, and a binding at n
// is replaced.
func (nc *NamingContext) RebindPath(ctx context.Context, n Name, ior *IOR) error {
	if len(n) == 0 {
		return &InvalidNameError{Name: "", Why: "the name is empty"}
	}
	cur := nc
	for i := range n[:len(n)-1] {
		next, err := cur.BindNewContext(ctx, n[i:i+1])
		var ab *AlreadyBoundError
		if errors.As(err, &ab) {
			next, err = cur.ResolveContext(ctx, n[i:i+1])
		}
		if err != nil {
			return err
		}
		cur = next
	}
	return cur.Rebind(ctx, n[len(n)-1:], ior)
}

// List returns every binding of the context: it asks for up to 1000 at
// once, then reads the rest from the iterator, which it destroys.
func (nc *NamingContext) List(ctx context.Context) ([]Binding, error) {
	var bs []Binding
	var it *IOR
	err := nc.invoke(ctx, "list", nil, func(e *Encoder) error { e.WriteULong(1000); return nil }, func(d *Decoder) error {
		bs = d.readBindings()
		it = d.ReadIOR()
		return nil
	})
	if err != nil || it.IsNil() {
		return bs, err
	}
	o := nc.obj.c.Object(it)
	defer func() { _ = o.Invoke(ctx, "destroy", nil, nil) }()
	for {
		var more []Binding
		var ok bool
		err := o.Invoke(ctx, "next_n", func(e *Encoder) error { e.WriteULong(1000); return nil }, func(d *Decoder) error {
			ok = d.ReadBoolean()
			more = d.readBindings()
			return nil
		})
		if err != nil {
			return bs, fmt.Errorf("naming: list: %w", err)
		}
		bs = append(bs, more...)
		if !ok || len(more) == 0 {
			return bs, nil
		}
	}
}

func (d *Decoder) readBindings() []Binding {
	k := d.ReadLength("binding list", 8)
	bs := make([]Binding, 0, k)
	for i := 0; i < k && d.Err() == nil; i++ {
		b := Binding{Name: d.readName()}
		at := d.Offset()
		b.Type = BindingType(d.ReadULong())
		if d.Err() == nil && b.Type > BindingContext {
			d.Failf("binding type %d at %#x is neither nobject nor ncontext", uint32(b.Type), at)
		}
		bs = append(bs, b)
	}
	return bs
}
