package idl

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// ids returns the repository ids of the types and interfaces declared.
func (l *Loader) ids() map[string]string {
	m := map[string]string{}
	for n, d := range l.decls {
		if (d.kind == dType || d.kind == dInterface) && d.tc != nil && d.tc.ID != "" {
			m[d.tc.ID] = n
		}
	}
	return m
}

func TestParseEveryOpenRTMFile(t *testing.T) {
	dir := needRTM(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.idl"))
	if len(files) != 12 {
		t.Errorf("%d IDL files in %s, want 12", len(files), dir)
	}
	all := NewLoader([]string{dir})
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if err := NewLoader([]string{dir}).Load(f); err != nil {
				t.Fatal(err)
			}
			if err := all.Load(filepath.Base(f)); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Every repository id omniidl generates from these files, and no
	// other, comes out of the parser.
	want := map[string]bool{}
	text, err := os.ReadFile(filepath.Join(dir, "..", "REPOSITORY_IDS.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			want[s] = true
		}
	}
	got := all.ids()
	var missing, extra []string
	for id := range want {
		if _, ok := got[id]; !ok {
			missing = append(missing, id)
		}
	}
	for id := range got {
		if !want[id] {
			extra = append(extra, id)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("repository ids: %d of REPOSITORY_IDS.txt not produced: %v\n%d produced not in it: %v", len(missing), missing, len(extra), extra)
	}
	if len(want) != 246 {
		t.Errorf("%d ids in REPOSITORY_IDS.txt, want 246", len(want))
	}
}

// TestDataTypes looks up every data type of BasicDataType.idl and
// ExtendedDataTypes.idl by the names users write.
func TestDataTypes(t *testing.T) {
	dir := needRTM(t)
	want := map[string]bool{}
	text, err := os.ReadFile(filepath.Join(dir, "..", "REPOSITORY_IDS.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range strings.Fields(string(text)) {
		want[s] = true
	}
	for _, file := range []string{"BasicDataType.idl", "ExtendedDataTypes.idl"} {
		one := NewLoader([]string{dir})
		if err := one.Load(file); err != nil {
			t.Fatal(err)
		}
		var names []string
		for n, d := range one.decls {
			if d.data && d.pos.File == filepath.Join(dir, file) {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		if len(names) < 20 {
			t.Fatalf("%s: only %d data types: %v", file, len(names), names)
		}
		l := NewLoader([]string{dir}) // loads on demand
		for _, n := range names {
			for _, form := range []string{n, strings.ReplaceAll(n, "::", "."), "::" + n, strings.TrimPrefix(n, "RTC::")} {
				tc, err := l.Lookup(form)
				if err != nil {
					t.Errorf("Lookup(%q): %v", form, err)
					continue
				}
				if !want[tc.ID] {
					t.Errorf("Lookup(%q): repository id %s is not in REPOSITORY_IDS.txt", form, tc.ID)
				}
				if tc.ID != "IDL:"+strings.ReplaceAll(n, "::", "/")+":1.0" {
					t.Errorf("Lookup(%q): repository id %s", form, tc.ID)
				}
				// Every TypeCode can be written as omniORB would carry it in an any.
				if tc.Kind == corba.TkStruct && !hasWide(tc, nil) {
					e := corba.NewEncoder(corba.LittleEndian)
					if err := e.WriteTypeCode(tc); err != nil {
						t.Errorf("WriteTypeCode(%s): %v", n, err)
					}
				}
			}
		}
		t.Logf("%s: %d data types", file, len(names))
	}
	tc, err := NewLoader([]string{dir}).Lookup("TimedString")
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(tc); got != "struct TimedString IDL:RTC/TimedString:1.0 {tm: struct Time IDL:RTC/Time:1.0 {sec: unsigned long; nsec: unsigned long}; data: string}" {
		t.Errorf("TimedString: %s", got)
	}
}

func hasWide(tc *corba.TypeCode, seen map[*corba.TypeCode]bool) bool {
	if seen == nil {
		seen = map[*corba.TypeCode]bool{}
	}
	if tc == nil || seen[tc] {
		return false
	}
	seen[tc] = true
	switch tc.Kind {
	case corba.TkWChar, corba.TkWString, corba.TkUnion, corba.TkLongDouble:
		return true
	}
	for _, m := range tc.Members {
		if hasWide(m.Type, seen) {
			return true
		}
	}
	return hasWide(tc.Content, seen)
}

// describe prints a TypeCode with ids and members.
func describe(tc *corba.TypeCode) string {
	switch tc.Kind {
	case corba.TkStruct, corba.TkExcept:
		var ms []string
		for _, m := range tc.Members {
			ms = append(ms, m.Name+": "+describe(m.Type))
		}
		return fmt.Sprintf("%v %s {%s}", tc, tc.ID, strings.Join(ms, "; "))
	case corba.TkEnum:
		return fmt.Sprintf("%v %s {%s}", tc, tc.ID, strings.Join(tc.Enumerators, ", "))
	case corba.TkAlias:
		return fmt.Sprintf("%v %s = %s", tc, tc.ID, describe(tc.Content))
	case corba.TkSequence:
		if tc.Bound > 0 {
			return fmt.Sprintf("sequence<%s, %d>", describe(tc.Content), tc.Bound)
		}
		return fmt.Sprintf("sequence<%s>", describe(tc.Content))
	case corba.TkArray:
		dims := ""
		for ; tc.Kind == corba.TkArray; tc = tc.Content {
			dims += fmt.Sprintf("[%d]", tc.Length)
		}
		return describe(tc) + dims
	}
	return tc.String()
}

type jsonVector struct {
	Vector string
	Body   map[string]json.RawMessage
}

// TestVectors decodes the CdrData payloads captured between OpenRTM-aist
// C++ components with TypeCodes from the IDL, and writes them back.
func TestVectors(t *testing.T) {
	dir := needRTM(t)
	vdir := filepath.Join(openrtmDir(), "wire", "vectors")
	text, err := os.ReadFile(filepath.Join(vdir, "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []jsonVector
	if err := json.Unmarshal(text, &vs); err != nil {
		t.Fatal(err)
	}
	l := NewLoader([]string{dir})
	n := 0
	for _, v := range vs {
		for key, raw := range v.Body {
			name, ok := strings.CutPrefix(key, "decoded_as_")
			if !ok {
				continue
			}
			n++
			t.Run(v.Vector, func(t *testing.T) {
				var w map[string]any
				if err := json.Unmarshal(raw, &w); err != nil {
					t.Fatal(err)
				}
				payload, err := os.ReadFile(filepath.Join(vdir, v.Vector+".payload.bin"))
				if err != nil {
					t.Fatal(err)
				}
				var hx string
				_ = json.Unmarshal(v.Body["hex"], &hx)
				if hex.EncodeToString(payload) != hx {
					t.Fatalf("payload %x, vectors.json %s", payload, hx)
				}
				order := corba.LittleEndian
				if strings.HasPrefix(w["byte_order"].(string), "big") {
					order = corba.BigEndian
				}
				tc, err := l.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				d := corba.NewDecoder(payload, order)
				val := d.ReadValue(tc)
				if err := d.Err(); err != nil {
					t.Fatal(err)
				}
				if d.Len() != 0 {
					t.Errorf("%d bytes left", d.Len())
				}
				s := val.(corba.Struct)
				tm, _ := s.Get("tm")
				data, _ := s.Get("data")
				wantTm := corba.Struct{{Name: "sec", Value: uint32(w["tm.sec"].(float64))}, {Name: "nsec", Value: uint32(w["tm.nsec"].(float64))}}
				if diff := cmp.Diff(wantTm, tm); diff != "" {
					t.Errorf("tm (-want +got):\n%s", diff)
				}
				if got, want := fmt.Sprint(data), fmt.Sprint(jsonInts(w["data"])); got != want {
					t.Errorf("data %s, want %s", got, want)
				}
				e := corba.NewEncoder(order)
				if err := e.WriteValue(tc, val); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(e.Bytes(), payload) {
					t.Errorf("written back:\n%x\nwant\n%x", e.Bytes(), payload)
				}
			})
		}
	}
	if n != 11 {
		t.Errorf("%d decoded payloads in vectors.json, want 11", n)
	}
}

// TestUserIDL loads user IDL (nested modules, typedef'd sequences,
// arrays with constant bounds, enums, an include, #pragma prefix and
// version, a Japanese comment) and round-trips a value.
func TestUserIDL(t *testing.T) {
	dir := needRTM(t)
	l := NewLoader([]string{"testdata/user", dir})
	tc, err := l.Lookup("MyModule::MyType")
	if err != nil {
		t.Fatal(err)
	}
	want := "struct MyType IDL:MyModule/MyType:2.1 {" +
		"tm: struct Time IDL:RTC/Time:1.0 {sec: unsigned long; nsec: unsigned long}; " +
		"mode: enum Mode IDL:MyModule/Inner/Mode:1.0 {IDLE, WALKING, RUNNING}; " +
		"joints: alias JointList IDL:MyModule/Inner/JointList:1.0 = sequence<struct Joint IDL:MyModule/Inner/Joint:1.0 {" +
		"name: alias Label IDL:MyModule/Label:1.0 = string<16>; angle: double; colour: enum Colour IDL:example.jp/Common/Colour:1.0 {RED, GREEN, BLUE}}>; " +
		"values: alias DoubleList IDL:MyModule/DoubleList:1.0 = sequence<double>; " +
		"counts: alias ShortList IDL:MyModule/ShortList:1.0 = sequence<long, 8>; " +
		"pose: alias Matrix IDL:MyModule/Matrix:1.0 = double[3][4]; " +
		"raw: octet[2]; ok: boolean; big: long long; small: unsigned short; ratio: float; text: string; c: char}"
	if got := describe(tc); got != want {
		t.Errorf("MyType:\n got %s\nwant %s", got, want)
	}
	if m := tc.Members[5].Type.Content; m.Length != 3 || m.Content.Length != 4 {
		t.Errorf("Matrix is %d of %d, want 3 of 4", m.Length, m.Content.Length)
	}
	for _, name := range []string{"MyModule.Inner.Joint", "Common::Stamp", "MyModule::Robot::MyTypeList", "Joint"} {
		if _, err := l.Lookup(name); err != nil {
			t.Errorf("Lookup(%q): %v", name, err)
		}
	}
	if _, err := l.Lookup("MyModule::Robot"); err == nil || !strings.Contains(err.Error(), "is an interface, not a data type") {
		t.Errorf("Lookup(MyModule::Robot): %v", err)
	}
	row := []any{1.5, 2.5, 3.5, 4.5}
	val := map[string]any{
		"tm":     map[string]any{"sec": uint32(1795755353), "nsec": uint32(288030270)},
		"mode":   "WALKING",
		"joints": []any{map[string]any{"name": "首", "angle": 0.25, "colour": "BLUE"}},
		"values": []float64{1.345, -2},
		"counts": []int32{1, 2, 3},
		"pose":   []any{row, row, row},
		"raw":    []byte{0xca, 0xfe},
		"ok":     true,
		"big":    int64(-1 << 40),
		"small":  uint16(65535),
		"ratio":  float32(0.5),
		"text":   "こんにちは",
		"c":      byte('x'),
	}
	for _, order := range []corba.ByteOrder{corba.LittleEndian, corba.BigEndian} {
		e := corba.NewEncoder(order)
		if err := e.WriteValue(tc, val); err != nil {
			t.Fatal(err)
		}
		d := corba.NewDecoder(e.Bytes(), order)
		got := d.ReadValue(tc)
		if err := d.Err(); err != nil {
			t.Fatal(err)
		}
		if d.Len() != 0 {
			t.Errorf("%d bytes left", d.Len())
		}
		e2 := corba.NewEncoder(order)
		if err := e2.WriteValue(tc, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Bytes(), e2.Bytes()) {
			t.Errorf("written again:\n%x\nfirst\n%x", e2.Bytes(), e.Bytes())
		}
		s := got.(corba.Struct)
		if v, _ := s.Get("text"); v != "こんにちは" {
			t.Errorf("text %q", v)
		}
		if v, _ := s.Get("mode"); v != (corba.Enum{Value: 1, Name: "WALKING"}) {
			t.Errorf("mode %v", v)
		}
		j, _ := s.Get("joints")
		if name, _ := j.([]any)[0].(corba.Struct).Get("name"); name != "首" {
			t.Errorf("joint name %q", name)
		}
	}
	// A bounded sequence refuses more than its bound.
	val["counts"] = make([]int32, 9)
	if err := corba.NewEncoder(corba.LittleEndian).WriteValue(tc, val); err == nil {
		t.Error("9 counts in a sequence<long, 8> written")
	}
}

// TestErrors pins the text of the errors users see.
func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // written in a temporary directory
		load  string            // file to Load, or "" to Lookup lookup
		look  string
		want  string // $DIR is the temporary directory
	}{
		{
			name:  "syntax",
			files: map[string]string{"a.idl": "module M {\n  struct S {\n    long x\n  };\n};\n"},
			load:  "a.idl",
			want:  `$DIR/a.idl:4:3: expected ";", found "}"`,
		},
		{
			name:  "syntax after Japanese",
			files: map[string]string{"a.idl": "// 日本語\nmodule M { struct S { string 名前; long 1x; }; };\n"},
			load:  "a.idl",
			want:  `$DIR/a.idl:2:39: expected an identifier, found "1x"`,
		},
		{
			name:  "undefined type",
			files: map[string]string{"a.idl": "module M {\n  struct Time { long sec; };\n  struct S { Tme tm; };\n};\n"},
			load:  "a.idl",
			want:  `$DIR/a.idl:3:14: undefined name Tme; did you mean Time?`,
		},
		{
			name:  "comment not terminated",
			files: map[string]string{"a.idl": "module M {};\n/* oops\n"},
			load:  "a.idl",
			want:  `$DIR/a.idl:2:1: comment not terminated`,
		},
		{
			name:  "array bound",
			files: map[string]string{"a.idl": "const long N = -1;\ntypedef long A[N];\n"},
			load:  "a.idl",
			want:  `$DIR/a.idl:2:15: array bound must be a positive integer, not -1`,
		},
		{
			name:  "redefined",
			files: map[string]string{"a.idl": "struct S { long x; };\nenum S { A };\n"},
			load:  "a.idl",
			want:  `$DIR/a.idl:2:6: S redefined (first defined at $DIR/a.idl:1:8)`,
		},
		{
			name:  "include cycle",
			files: map[string]string{"a.idl": "#include \"b.idl\"\n", "b.idl": "\n#include \"c.idl\"\n", "c.idl": "#include <a.idl>\n"},
			load:  "a.idl",
			want:  `$DIR/c.idl:1:1: include cycle: a.idl → b.idl → c.idl → a.idl`,
		},
		{
			name:  "missing include",
			files: map[string]string{"a.idl": "module M {};\n#include <Nowhere.idl>\n"},
			load:  "a.idl",
			want:  `$DIR/a.idl:2:1: cannot find include file "Nowhere.idl" (searched $DIR/path1, $DIR/path2, $DIR)`,
		},
		{
			name:  "unknown type",
			files: map[string]string{"BasicDataType.idl": "module RTC { struct Time { long sec; }; struct TimedString { Time tm; string data; }; };\n"},
			look:  "TimedStrng",
			want:  `unknown IDL type "TimedStrng"; did you mean TimedString? (searched $DIR/path1, $DIR/path2, $DIR)`,
		},
		{
			name:  "unknown scoped type",
			files: map[string]string{"BasicDataType.idl": "module RTC { struct Time { long sec; }; struct TimedString { Time tm; string data; }; };\n"},
			look:  "RTC.TimeString",
			want:  `unknown IDL type "RTC.TimeString"; did you mean RTC::TimedString? (searched $DIR/path1, $DIR/path2, $DIR)`,
		},
		{
			name:  "ambiguous",
			files: map[string]string{"x.idl": "module A { struct P { long x; }; };\nmodule B { struct P { long y; }; };\n"},
			look:  "P",
			want:  `IDL type name P is ambiguous: write one of A::P, B::P`,
		},
		{
			name:  "not a data type",
			files: map[string]string{"x.idl": "module M { interface I { void f(); }; };\n"},
			look:  "M::I",
			want:  `M::I ($DIR/x.idl:1:22) is an interface, not a data type`,
		},
		{
			name:  "struct redefined",
			files: map[string]string{"a.idl": "struct S;\nstruct S { long x; };\nstruct S { long y; };\n"},
			load:  "a.idl",
			want:  `$DIR/a.idl:3:8: S redefined (first defined at $DIR/a.idl:2:8)`,
		},
		{
			name:  "too large",
			files: map[string]string{"a.idl": doubling(20)},
			load:  "a.idl",
			want:  `$DIR/a.idl:15:8: type T14 is too large: more than 65536 nested types when written out`,
		},
		{
			name:  "unterminated conditional",
			files: map[string]string{"a.idl": "#ifndef A\n#define A\nmodule M {};\n"},
			load:  "a.idl",
			want:  `$DIR/a.idl:1:1: conditional directive not terminated by #endif`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l := NewLoader([]string{filepath.Join(dir, "path1"), filepath.Join(dir, "path2"), dir})
			var err error
			if tt.load != "" {
				err = l.Load(filepath.Join(dir, tt.load))
			} else {
				_, err = l.Lookup(tt.look)
				if !errors.Is(err, ErrNotFound) && strings.HasPrefix(tt.want, "unknown") {
					t.Errorf("%v is not ErrNotFound", err)
				}
			}
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if got := strings.ReplaceAll(err.Error(), dir, "$DIR"); got != tt.want {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// doubling declares n structs, each with two members of the one before:
// T(n) is 2^n structs written out.
func doubling(n int) string {
	var sb strings.Builder
	sb.WriteString("struct T0 { long x; };\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&sb, "struct T%d { T%d a; T%d b; };\n", i, i-1, i-1)
	}
	return sb.String()
}

func TestEmptyPath(t *testing.T) {
	_, err := NewLoader(nil).Lookup("TimedLong")
	want := `unknown IDL type "TimedLong"; the IDL search path is empty: set SEAT_IDL_PATH`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestDefaultPath(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	t.Setenv(PathEnv, a+string(os.PathListSeparator)+b)
	t.Setenv("RTM_ROOT", "/opt/rtm")
	p := DefaultPath()
	if len(p) < 3 || p[0] != a || p[1] != b || p[2] != "/opt/rtm/rtm/idl" {
		t.Errorf("DefaultPath() = %v", p)
	}
}

// jsonInts turns JSON's integral float64s into int64s, for printing.
func jsonInts(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonInts(e)
		}
		return out
	}
	return v
}
