package interpreter

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The most fields and methods a struct of the runtime root package may
// have (an embedded struct is one field: its own are counted as its
// type's): issue 34's goal, 25 fields and 60 methods. A struct that
// outgrows them wants splitting.
const (
	maxStructFields  = 25
	maxStructMethods = 60
)

// TestRuntimeStructsStaySmall counts each struct's fields and the methods
// declared on it (go/ast, the package's non-test files) and holds the
// largest at the bounds above.
func TestRuntimeStructsStaySmall(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	fields, methods := map[string]int{}, map[string]int{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.GenDecl:
					for _, sp := range d.Specs {
						if ts, ok := sp.(*ast.TypeSpec); ok {
							if st, ok := ts.Type.(*ast.StructType); ok {
								for _, fl := range st.Fields.List {
									fields[ts.Name.Name] += max(len(fl.Names), 1)
								}
							}
						}
					}
				case *ast.FuncDecl:
					if d.Recv == nil {
						continue
					}
					typ := d.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					if id, ok := typ.(*ast.Ident); ok {
						methods[id.Name]++
					}
				}
			}
		}
	}
	if fields["Machine"] == 0 {
		t.Fatal("no Machine struct found: the count is broken")
	}
	for name, n := range fields {
		if n > maxStructFields || methods[name] > maxStructMethods {
			t.Errorf("%s has %d fields and %d methods; at most %d and %d (split the struct)",
				name, n, methods[name], maxStructFields, maxStructMethods)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if fields[name] >= 10 || methods[name] >= 10 {
			t.Logf("%s: %d fields, %d methods", name, fields[name], methods[name])
		}
	}
}
