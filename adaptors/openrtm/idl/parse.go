package idl

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/seatml/seat/adaptors/openrtm/corba"
	"github.com/seatml/seat/schema"
)

// Error is a syntax or semantic error in an IDL file, at a position.
type Error struct {
	Pos schema.Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// declKind says what a name declares.
type declKind int

const (
	dModule declKind = iota
	dType            // struct, enum, typedef, union, exception, native
	dInterface
	dConst
	dEnumerator
)

// decl is a declared name.
type decl struct {
	kind    declKind
	name    string // scoped, "RTC::Time"
	tc      *corba.TypeCode
	val     constVal
	pos     schema.Pos
	data    bool // a data type: struct, enum, typedef, union
	defined bool // not only forward-declared
}

// maxDepth bounds the nesting of scopes, types and expressions.
const maxDepth = 64

// maxNodes bounds the size of a type written out in full (each struct,
// sequence, array, alias and basic type a node, a recursive reference
// one): a TypeCode's encoding, and the work to write or check it, grow
// with it.
const maxNodes = 1 << 16

// nodes returns the size of tc written out, at most limit+1.
func nodes(tc *corba.TypeCode, open map[*corba.TypeCode]bool, limit int) int {
	if tc == nil || open[tc] {
		return 1
	}
	open[tc] = true
	defer delete(open, tc)
	n := 1
	for _, m := range tc.Members {
		if n += nodes(m.Type, open, limit-n); n > limit {
			return n
		}
	}
	return n + nodes(tc.Content, open, limit-n)
}

// checkSize refuses a type too large to write out.
func (p *parser) checkSize(at token, tc *corba.TypeCode) {
	if nodes(tc, map[*corba.TypeCode]bool{}, maxNodes) > maxNodes {
		p.fail(at.pos, "type %s is too large: more than %d nested types when written out", at.text, maxNodes)
	}
}

// parser parses one file into the Loader's declarations.
type parser struct {
	l      *Loader
	lx     *lexer
	file   string // the file's path
	tok    token
	scope  []string
	prefix string
	depth  int
	err    error
}

type bailout struct{}

func (p *parser) fail(pos schema.Pos, format string, args ...any) {
	if p.err == nil {
		p.err = &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
	}
	panic(bailout{})
}

func (p *parser) next() {
	p.tok = p.lx.next()
	if p.lx.err != nil {
		if p.err == nil {
			p.err = p.lx.err
		}
		panic(bailout{})
	}
}

// run parses the whole file.
func (p *parser) run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			err = p.err
		}
	}()
	p.next()
	for p.tok.kind != tEOF {
		p.definition()
	}
	return p.err
}

func (p *parser) is(text string) bool {
	return (p.tok.kind == tPunct || p.tok.kind == tIdent) && p.tok.text == text
}

func (p *parser) expect(text string) token {
	t := p.tok
	if !p.is(text) {
		p.fail(t.pos, "expected %q, found %v", text, t)
	}
	p.next()
	return t
}

func (p *parser) ident() token {
	t := p.tok
	if t.kind != tIdent {
		p.fail(t.pos, "expected an identifier, found %v", t)
	}
	p.next()
	return t
}

func (p *parser) enter(pos schema.Pos) {
	p.depth++
	if p.depth > maxDepth {
		p.fail(pos, "nested deeper than %d levels", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) scoped(name string) string {
	if len(p.scope) == 0 {
		return name
	}
	return strings.Join(p.scope, "::") + "::" + name
}

func (p *parser) repoID(name string) string {
	path := strings.ReplaceAll(p.scoped(name), "::", "/")
	if p.prefix != "" {
		path = p.prefix + "/" + path
	}
	return "IDL:" + path + ":1.0"
}

// declare adds a name in the current scope. A forward declaration
// followed by its definition, and a reopened module, are allowed.
func (p *parser) declare(at token, kind declKind, tc *corba.TypeCode, data, defined bool) *decl {
	full := p.scoped(at.text)
	if old, ok := p.l.decls[full]; ok {
		switch {
		case kind == dModule && old.kind == dModule:
			return old
		case old.kind == kind && !old.defined && old.tc != nil && tc != nil && old.tc.Kind == tc.Kind:
			if defined {
				*old.tc = *tc
				old.defined, old.pos = true, at.pos
			}
			return old
		case old.kind == kind && old.tc != nil && tc != nil && old.tc.Kind == tc.Kind && !defined:
			return old // a forward declaration after the definition
		}
		p.fail(at.pos, "%s redefined (first defined at %v)", full, old.pos)
	}
	d := &decl{kind: kind, name: full, tc: tc, pos: at.pos, data: data, defined: defined}
	p.l.decls[full] = d
	return d
}

func (p *parser) definition() {
	t := p.tok
	if t.kind == tInclude {
		p.next()
		if err := p.l.include(p.file, t); err != nil {
			p.err = err
			panic(bailout{})
		}
		return
	}
	if t.kind == tPragma {
		p.pragma(t)
		p.next()
		return
	}
	if t.kind != tIdent {
		p.fail(t.pos, "expected a definition, found %v", t)
	}
	switch t.text {
	case "module":
		p.next()
		name := p.ident()
		p.declare(name, dModule, nil, false, true)
		p.expect("{")
		p.enter(name.pos)
		saved := p.prefix
		p.scope = append(p.scope, name.text)
		for !p.is("}") {
			if p.tok.kind == tEOF {
				p.fail(p.tok.pos, "module %s not closed by \"}\"", name.text)
			}
			p.definition()
		}
		p.scope = p.scope[:len(p.scope)-1]
		p.prefix = saved
		p.leave()
		p.next()
		p.expect(";")
		return
	case "struct", "union", "enum", "exception":
		p.constructed(false)
		p.expect(";")
		return
	case "typedef":
		p.next()
		base := p.typeSpec()
		p.declarators(base, func(name token, tc *corba.TypeCode) {
			p.checkSize(name, tc)
			p.declare(name, dType, &corba.TypeCode{Kind: corba.TkAlias, ID: p.repoID(name.text), Name: name.text, Content: tc}, true, true)
		})
		p.expect(";")
		return
	case "const":
		p.constDecl()
		return
	case "native":
		p.next()
		name := p.ident()
		p.declare(name, dType, &corba.TypeCode{Kind: corba.TkNative, ID: p.repoID(name.text), Name: name.text}, false, true)
		p.expect(";")
		return
	case "abstract", "local", "custom":
		p.next()
		if !p.is("interface") && !p.is("valuetype") {
			p.fail(p.tok.pos, "expected \"interface\" or \"valuetype\" after %q, found %v", t.text, p.tok)
		}
		p.definition()
		return
	case "interface":
		p.interfaceDecl()
		return
	case "valuetype", "eventtype":
		p.next()
		name := p.ident()
		p.declare(name, dType, &corba.TypeCode{Kind: corba.TkValue, ID: p.repoID(name.text), Name: name.text}, false, false)
		p.skipDecl()
		return
	case "typeprefix", "typeid", "import":
		p.skipDecl()
		return
	}
	p.fail(t.pos, "expected a definition, found %v", t)
}

// skipDecl skips to the ";" that ends a declaration, over balanced
// brackets.
func (p *parser) skipDecl() {
	depth := 0
	for {
		switch {
		case p.tok.kind == tEOF:
			p.fail(p.tok.pos, "unexpected end of file")
		case p.tok.kind == tInclude:
			p.fail(p.tok.pos, "#include inside a declaration")
		case p.is("{") || p.is("("):
			depth++
			if depth > maxDepth*4 {
				p.fail(p.tok.pos, "nested deeper than %d levels", maxDepth*4)
			}
		case p.is("}") || p.is(")"):
			depth--
			if depth < 0 {
				p.fail(p.tok.pos, "unexpected %v", p.tok)
			}
		case p.is(";") && depth == 0:
			p.next()
			return
		}
		p.next()
	}
}

func (p *parser) interfaceDecl() {
	p.next()
	name := p.ident()
	tc := &corba.TypeCode{Kind: corba.TkObjref, ID: p.repoID(name.text), Name: name.text}
	if p.is(";") {
		p.declare(name, dInterface, tc, false, false)
		p.next()
		return
	}
	p.declare(name, dInterface, tc, false, true)
	if p.is(":") {
		p.next()
		p.scopedName()
		for p.is(",") {
			p.next()
			p.scopedName()
		}
	}
	p.expect("{")
	p.enter(name.pos)
	saved := p.prefix
	p.scope = append(p.scope, name.text)
	for !p.is("}") {
		switch {
		case p.tok.kind == tEOF:
			p.fail(p.tok.pos, "interface %s not closed by \"}\"", name.text)
		case p.tok.kind == tPragma, p.tok.kind == tInclude:
			p.definition()
		case p.tok.kind == tIdent && strings.Contains(" typedef struct union enum const exception native ", " "+p.tok.text+" "):
			p.definition()
		default: // an attribute or an operation
			p.skipDecl()
		}
	}
	p.scope = p.scope[:len(p.scope)-1]
	p.prefix = saved
	p.leave()
	p.next()
	p.expect(";")
}

// constructed parses a struct, union, enum or exception (definition or
// forward declaration) and returns its TypeCode.
func (p *parser) constructed(inline bool) *corba.TypeCode {
	kw := p.tok
	p.next()
	name := p.ident()
	id := p.repoID(name.text)
	switch kw.text {
	case "struct", "exception":
		kind := corba.TkStruct
		if kw.text == "exception" {
			kind = corba.TkExcept
		}
		if p.is(";") && !inline {
			return p.declare(name, dType, &corba.TypeCode{Kind: kind, ID: id, Name: name.text}, kind == corba.TkStruct, false).tc
		}
		d := p.declare(name, dType, &corba.TypeCode{Kind: kind, ID: id, Name: name.text}, kind == corba.TkStruct, false)
		if d.defined {
			p.fail(name.pos, "%s redefined (first defined at %v)", d.name, d.pos)
		}
		d.pos = name.pos
		p.expect("{")
		p.enter(name.pos)
		p.scope = append(p.scope, name.text)
		var members []corba.Member
		seen := map[string]bool{}
		for !p.is("}") {
			if p.tok.kind == tPragma {
				p.pragma(p.tok)
				p.next()
				continue
			}
			mt := p.typeSpec()
			p.declarators(mt, func(n token, tc *corba.TypeCode) {
				if seen[n.text] {
					p.fail(n.pos, "member %s of %s declared twice", n.text, name.text)
				}
				seen[n.text] = true
				members = append(members, corba.Member{Name: n.text, Type: tc})
			})
			p.expect(";")
		}
		p.scope = p.scope[:len(p.scope)-1]
		p.leave()
		p.next()
		if kind == corba.TkStruct && len(members) == 0 {
			p.fail(name.pos, "struct %s has no members", name.text)
		}
		d.tc.Members = members
		d.defined = true
		p.checkSize(name, d.tc)
		return d.tc
	case "union":
		tc := &corba.TypeCode{Kind: corba.TkUnion, ID: id, Name: name.text}
		if p.is(";") && !inline {
			return p.declare(name, dType, tc, true, false).tc
		}
		d := p.declare(name, dType, tc, true, true)
		p.expect("switch")
		p.expect("(")
		p.typeSpec()
		p.expect(")")
		if !p.is("{") {
			p.fail(p.tok.pos, "expected %q, found %v", "{", p.tok)
		}
		depth := 0
		for {
			switch {
			case p.tok.kind == tEOF:
				p.fail(p.tok.pos, "union %s not closed by \"}\"", name.text)
			case p.is("{"):
				depth++
			case p.is("}"):
				depth--
			}
			p.next()
			if depth == 0 {
				break
			}
		}
		return d.tc
	}
	// enum
	tc := &corba.TypeCode{Kind: corba.TkEnum, ID: id, Name: name.text}
	d := p.declare(name, dType, tc, true, true)
	p.expect("{")
	for {
		e := p.ident()
		for _, s := range tc.Enumerators {
			if s == e.text {
				p.fail(e.pos, "enumerator %s of %s declared twice", e.text, name.text)
			}
		}
		ed := p.declare(e, dEnumerator, tc, false, true)
		ed.val = constVal{kind: cEnum, i: int64(len(tc.Enumerators)), s: e.text, tc: tc}
		tc.Enumerators = append(tc.Enumerators, e.text)
		if p.is(",") {
			p.next()
			continue
		}
		p.expect("}")
		break
	}
	return d.tc
}

// declarators parses "a, b[2][3]" after a type, calling f for each.
func (p *parser) declarators(base *corba.TypeCode, f func(token, *corba.TypeCode)) {
	for {
		name := p.ident()
		var dims []uint32
		for p.is("[") {
			at := p.tok.pos
			p.next()
			n := p.positiveInt(at, "array bound")
			p.expect("]")
			dims = append(dims, n)
			if len(dims) > maxDepth {
				p.fail(at, "more than %d array dimensions", maxDepth)
			}
		}
		tc := base
		for i := len(dims) - 1; i >= 0; i-- {
			tc = &corba.TypeCode{Kind: corba.TkArray, Length: dims[i], Content: tc}
		}
		f(name, tc)
		if !p.is(",") {
			return
		}
		p.next()
	}
}

func (p *parser) positiveInt(at schema.Pos, what string) uint32 {
	v := p.constExpr()
	if v.kind != cInt || v.i <= 0 || v.i > math.MaxUint32 {
		p.fail(at, "%s must be a positive integer, not %s", what, v)
	}
	return uint32(v.i)
}

var basicKinds = map[string]corba.Kind{
	"boolean": corba.TkBoolean, "char": corba.TkChar, "octet": corba.TkOctet, "short": corba.TkShort,
	"float": corba.TkFloat, "double": corba.TkDouble, "wchar": corba.TkWChar, "any": corba.TkAny,
	"void": corba.TkVoid, "TypeCode": corba.TkTypeCode,
}

// typeSpec parses a type: a basic type, a template type, a constructed
// type or a scoped name.
func (p *parser) typeSpec() *corba.TypeCode {
	t := p.tok
	p.enter(t.pos)
	defer p.leave()
	if t.kind != tIdent && !p.is("::") {
		p.fail(t.pos, "expected a type, found %v", t)
	}
	if k, ok := basicKinds[t.text]; ok {
		p.next()
		return corba.NewTypeCode(k)
	}
	switch t.text {
	case "long":
		p.next()
		switch {
		case p.is("long"):
			p.next()
			return corba.NewTypeCode(corba.TkLongLong)
		case p.is("double"):
			p.next()
			return corba.NewTypeCode(corba.TkLongDouble)
		}
		return corba.NewTypeCode(corba.TkLong)
	case "unsigned":
		p.next()
		switch {
		case p.is("short"):
			p.next()
			return corba.NewTypeCode(corba.TkUShort)
		case p.is("long"):
			p.next()
			if p.is("long") {
				p.next()
				return corba.NewTypeCode(corba.TkULongLong)
			}
			return corba.NewTypeCode(corba.TkULong)
		}
		p.fail(p.tok.pos, "expected \"short\" or \"long\" after \"unsigned\", found %v", p.tok)
	case "string", "wstring":
		p.next()
		tc := corba.NewTypeCode(corba.TkString)
		if t.text == "wstring" {
			tc.Kind = corba.TkWString
		}
		if p.is("<") {
			at := p.tok.pos
			p.next()
			tc.Bound = p.positiveInt(at, "string bound")
			p.expect(">")
		}
		return tc
	case "sequence":
		p.next()
		p.expect("<")
		tc := &corba.TypeCode{Kind: corba.TkSequence, Content: p.typeSpec()}
		if p.is(",") {
			at := p.tok.pos
			p.next()
			tc.Bound = p.positiveInt(at, "sequence bound")
		}
		p.expect(">")
		return tc
	case "fixed":
		p.next()
		p.expect("<")
		p.constExpr()
		p.expect(",")
		p.constExpr()
		p.expect(">")
		return corba.NewTypeCode(corba.TkFixed)
	case "Object", "ValueBase":
		p.next()
		return objectTC(t.text)
	case "struct", "union", "enum":
		return p.constructed(true)
	}
	at := t.pos
	name := p.scopedName()
	switch name {
	case "CORBA::TypeCode", "::CORBA::TypeCode":
		return corba.NewTypeCode(corba.TkTypeCode)
	case "CORBA::Object", "::CORBA::Object", "CORBA::ValueBase", "::CORBA::ValueBase":
		return objectTC(name[strings.LastIndex(name, ":")+1:])
	}
	d := p.resolve(at, name)
	if d.kind != dType && d.kind != dInterface {
		p.fail(at, "%s is not a type", name)
	}
	return d.tc
}

func objectTC(name string) *corba.TypeCode {
	if name == "ValueBase" {
		return &corba.TypeCode{Kind: corba.TkValue, ID: "IDL:omg.org/CORBA/ValueBase:1.0", Name: name}
	}
	return &corba.TypeCode{Kind: corba.TkObjref, ID: "IDL:omg.org/CORBA/Object:1.0", Name: name}
}

// scopedName parses "A::B", "::A::B".
func (p *parser) scopedName() string {
	var sb strings.Builder
	if p.is("::") {
		sb.WriteString("::")
		p.next()
	}
	sb.WriteString(p.ident().text)
	for p.is("::") {
		p.next()
		sb.WriteString("::")
		sb.WriteString(p.ident().text)
	}
	return sb.String()
}

// resolve finds a scoped name as IDL's scoping rules say: an absolute
// name from the global scope; otherwise its first identifier in the
// current scope and then each enclosing one, the rest within it.
func (p *parser) resolve(at schema.Pos, name string) *decl {
	if d := p.l.resolveIn(p.scope, name); d != nil {
		return d
	}
	p.fail(at, "undefined name %s%s", name, schema.DidYouMean(strings.TrimPrefix(name, "::"), p.l.visible(p.scope), "%s"))
	return nil
}

// pragma handles #pragma prefix, version and ID; others are ignored.
func (p *parser) pragma(t token) {
	f := strings.Fields(t.text)
	if len(f) == 0 {
		return
	}
	unq := func(s string) (string, bool) {
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			return s[1 : len(s)-1], true
		}
		return "", false
	}
	switch f[0] {
	case "prefix":
		if len(f) != 2 {
			p.fail(t.pos, "#pragma prefix expects one string")
		}
		s, ok := unq(f[1])
		if !ok {
			p.fail(t.pos, "#pragma prefix expects one string")
		}
		p.prefix = s
	case "version":
		if len(f) != 3 {
			p.fail(t.pos, "#pragma version expects a name and major.minor")
		}
		d := p.l.resolveIn(p.scope, f[1])
		if d == nil || d.tc == nil || d.tc.ID == "" {
			p.fail(t.pos, "#pragma version: undefined name %s", f[1])
		}
		if i := strings.LastIndexByte(d.tc.ID, ':'); i > 0 {
			d.tc.ID = d.tc.ID[:i+1] + f[2]
		}
	case "ID":
		if len(f) != 3 {
			p.fail(t.pos, "#pragma ID expects a name and a string")
		}
		d := p.l.resolveIn(p.scope, f[1])
		s, ok := unq(f[2])
		if d == nil || d.tc == nil || !ok {
			p.fail(t.pos, "#pragma ID: undefined name %s or bad id", f[1])
		}
		d.tc.ID = s
	}
}

// Constants.

type constKind int

const (
	cInt constKind = iota
	cFloat
	cString
	cBool
	cChar
	cEnum
)

type constVal struct {
	kind constKind
	i    int64
	f    float64
	s    string
	b    bool
	tc   *corba.TypeCode
}

func (v constVal) String() string {
	switch v.kind {
	case cInt:
		return strconv.FormatInt(v.i, 10)
	case cFloat:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case cString:
		return strconv.Quote(v.s)
	case cBool:
		return strconv.FormatBool(v.b)
	case cChar:
		return strconv.QuoteRune([]rune(v.s + "\x00")[0])
	}
	return v.s
}

func (p *parser) constDecl() {
	p.next()
	tc := p.typeSpec()
	name := p.ident()
	p.expect("=")
	at := p.tok.pos
	v := p.constExpr()
	switch k := resolveAlias(tc).Kind; k {
	case corba.TkShort, corba.TkLong, corba.TkLongLong, corba.TkUShort, corba.TkULong, corba.TkULongLong, corba.TkOctet:
		if v.kind != cInt {
			p.fail(at, "constant %s of type %v needs an integer, not %s", name.text, tc, v)
		}
	case corba.TkFloat, corba.TkDouble, corba.TkLongDouble:
		if v.kind == cInt {
			v = constVal{kind: cFloat, f: float64(v.i)}
		}
		if v.kind != cFloat {
			p.fail(at, "constant %s of type %v needs a number, not %s", name.text, tc, v)
		}
	case corba.TkString, corba.TkWString:
		if v.kind != cString {
			p.fail(at, "constant %s of type %v needs a string, not %s", name.text, tc, v)
		}
	case corba.TkBoolean:
		if v.kind != cBool {
			p.fail(at, "constant %s of type boolean needs TRUE or FALSE, not %s", name.text, v)
		}
	case corba.TkChar, corba.TkWChar:
		if v.kind != cChar {
			p.fail(at, "constant %s of type %v needs a character, not %s", name.text, tc, v)
		}
	case corba.TkEnum:
		if v.kind != cEnum || v.tc != resolveAlias(tc) {
			p.fail(at, "constant %s of type %v needs one of its enumerators, not %s", name.text, tc, v)
		}
	default:
		p.fail(at, "constant %s cannot have type %v", name.text, tc)
	}
	d := p.declare(name, dConst, tc, false, true)
	d.val = v
	p.expect(";")
}

func resolveAlias(tc *corba.TypeCode) *corba.TypeCode {
	for i := 0; tc != nil && tc.Kind == corba.TkAlias && i < 1000; i++ {
		tc = tc.Content
	}
	return tc
}

// constExpr parses and evaluates a constant expression (C's operators
// on integers and floats).
func (p *parser) constExpr() constVal { return p.binary(0) }

var precedence = map[string]int{"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}

func (p *parser) binary(min int) constVal {
	p.enter(p.tok.pos)
	defer p.leave()
	x := p.unary()
	for {
		op := p.tok
		prec, ok := precedence[op.text]
		if op.kind != tPunct || !ok || prec <= min {
			return x
		}
		p.next()
		y := p.binary(prec)
		x = p.apply(op, x, y)
	}
}

func (p *parser) apply(op token, x, y constVal) constVal {
	if x.kind == cInt && y.kind == cInt {
		a, b := x.i, y.i
		var r int64
		switch op.text {
		case "|":
			r = a | b
		case "^":
			r = a ^ b
		case "&":
			r = a & b
		case "<<", ">>":
			if b < 0 || b >= 64 {
				p.fail(op.pos, "shift by %d", b)
			}
			if op.text == "<<" {
				r = a << b
			} else {
				r = a >> b
			}
		case "+":
			r = a + b
		case "-":
			r = a - b
		case "*":
			r = a * b
		case "/", "%":
			if b == 0 {
				p.fail(op.pos, "division by zero")
			}
			if a == math.MinInt64 && b == -1 {
				p.fail(op.pos, "integer overflow")
			}
			if op.text == "/" {
				r = a / b
			} else {
				r = a % b
			}
		}
		return constVal{kind: cInt, i: r}
	}
	num := func(v constVal) (float64, bool) {
		switch v.kind {
		case cInt:
			return float64(v.i), true
		case cFloat:
			return v.f, true
		}
		return 0, false
	}
	a, ok1 := num(x)
	b, ok2 := num(y)
	if !ok1 || !ok2 {
		p.fail(op.pos, "operator %s needs numbers, not %s and %s", op.text, x, y)
	}
	switch op.text {
	case "+":
		return constVal{kind: cFloat, f: a + b}
	case "-":
		return constVal{kind: cFloat, f: a - b}
	case "*":
		return constVal{kind: cFloat, f: a * b}
	case "/":
		return constVal{kind: cFloat, f: a / b}
	}
	p.fail(op.pos, "operator %s needs integers", op.text)
	return constVal{}
}

func (p *parser) unary() constVal {
	t := p.tok
	switch {
	case p.is("-"), p.is("+"), p.is("~"):
		p.next()
		p.enter(t.pos)
		v := p.unary()
		p.leave()
		switch {
		case t.text == "-" && v.kind == cInt:
			v.i = -v.i
		case t.text == "-" && v.kind == cFloat:
			v.f = -v.f
		case t.text == "~" && v.kind == cInt:
			v.i = ^v.i
		case t.text == "+" && (v.kind == cInt || v.kind == cFloat):
		default:
			p.fail(t.pos, "operator %s cannot apply to %s", t.text, v)
		}
		return v
	case p.is("("):
		p.next()
		v := p.constExpr()
		p.expect(")")
		return v
	case t.kind == tInt:
		p.next()
		s := strings.TrimRight(strings.ToLower(t.text), "ul")
		var u uint64
		var err error
		switch {
		case strings.HasPrefix(s, "0x"):
			u, err = strconv.ParseUint(s[2:], 16, 64)
		case len(s) > 1 && s[0] == '0':
			u, err = strconv.ParseUint(s[1:], 8, 64)
		default:
			u, err = strconv.ParseUint(s, 10, 64)
		}
		if err != nil || u > math.MaxInt64 {
			p.fail(t.pos, "bad integer literal %s", t.text)
		}
		return constVal{kind: cInt, i: int64(u)}
	case t.kind == tFloat:
		p.next()
		f, err := strconv.ParseFloat(strings.TrimRight(strings.ToLower(t.text), "fd"), 64)
		if err != nil {
			p.fail(t.pos, "bad floating-point literal %s", t.text)
		}
		return constVal{kind: cFloat, f: f}
	case t.kind == tString:
		p.next()
		s := t.text
		for p.tok.kind == tString {
			s += p.tok.text
			p.next()
		}
		return constVal{kind: cString, s: s}
	case t.kind == tChar:
		p.next()
		return constVal{kind: cChar, s: t.text}
	case p.is("TRUE"), p.is("FALSE"):
		p.next()
		return constVal{kind: cBool, b: t.text == "TRUE"}
	case t.kind == tIdent || p.is("::"):
		name := p.scopedName()
		d := p.resolve(t.pos, name)
		if d.kind != dConst && d.kind != dEnumerator {
			p.fail(t.pos, "%s is not a constant", name)
		}
		return d.val
	}
	p.fail(t.pos, "expected a constant expression, found %v", t)
	return constVal{}
}
