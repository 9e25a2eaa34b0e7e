package idl

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// TestOmniidl compares what omniORB's IDL compiler sees in each file
// (through testdata/omniidl/seatdump.py) with the TypeCodes made here:
// every struct, enum and typedef, its repository id, its members and
// their types.
func TestOmniidl(t *testing.T) {
	dir := needRTM(t)
	omniidl, err := exec.LookPath("omniidl")
	if err != nil {
		if why := required(); why != "" {
			t.Fatalf("omniidl is required (%s): %v", why, err)
		}
		t.Skipf("omniidl not found: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.idl"))
	files = append(files, "testdata/user/MyTypes.idl")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cmd := exec.Command(omniidl, "-p", "testdata/omniidl", "-bseatdump", "-Itestdata/user", "-I"+dir, f)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("omniidl: %v\n%s", err, stderr.Bytes())
			}
			want := lines(string(out))
			l := NewLoader([]string{"testdata/user", dir})
			if err := l.Load(f); err != nil {
				t.Fatal(err)
			}
			got := lines(l.dump())
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("-omniidl +idl:\n%s", diff)
			}
			t.Logf("%d declarations agree", len(got))
		})
	}
}

func lines(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// dump prints the declarations as seatdump.py does.
func (l *Loader) dump() string {
	var sb strings.Builder
	for _, d := range l.decls {
		if d.kind != dType || d.tc == nil {
			continue
		}
		tc := d.tc
		switch tc.Kind {
		case corba.TkStruct, corba.TkExcept:
			if tc.Kind == corba.TkExcept {
				continue
			}
			var ms []string
			for _, m := range tc.Members {
				ms = append(ms, m.Name+": "+omniName(m.Type))
			}
			fmt.Fprintf(&sb, "struct %s {%s}\n", tc.ID, strings.Join(ms, "; "))
		case corba.TkEnum:
			fmt.Fprintf(&sb, "enum %s {%s}\n", tc.ID, strings.Join(tc.Enumerators, ", "))
		case corba.TkAlias:
			fmt.Fprintf(&sb, "typedef %s = %s\n", tc.ID, omniName(tc.Content))
		}
	}
	return sb.String()
}

func omniName(tc *corba.TypeCode) string {
	switch tc.Kind {
	case corba.TkArray:
		dims := ""
		for ; tc.Kind == corba.TkArray; tc = tc.Content {
			dims += fmt.Sprintf("[%d]", tc.Length)
		}
		return omniName(tc) + dims
	case corba.TkSequence:
		if tc.Bound > 0 {
			return fmt.Sprintf("sequence<%s, %d>", omniName(tc.Content), tc.Bound)
		}
		return fmt.Sprintf("sequence<%s>", omniName(tc.Content))
	case corba.TkString, corba.TkWString:
		return tc.String()
	}
	if tc.ID != "" && tc.ID != "IDL:omg.org/CORBA/Object:1.0" {
		return tc.ID
	}
	if tc.Kind == corba.TkObjref {
		return "Object"
	}
	return tc.Kind.String()
}
