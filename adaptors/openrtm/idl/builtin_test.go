package idl

import (
	"path/filepath"
	"testing"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// TestBuiltinMatchesBasicDataType: each built-in type is the TypeCode the
// parser makes of OpenRTM's BasicDataType.idl, and the file declares no
// struct that Builtin lacks.
func TestBuiltinMatchesBasicDataType(t *testing.T) {
	dir := needRTM(t)
	l := NewLoader([]string{dir})
	if err := l.Load(filepath.Join(dir, "BasicDataType.idl")); err != nil {
		t.Fatal(err)
	}
	for _, name := range BuiltinNames {
		want, err := l.Lookup("RTC::" + name)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Builtin(name)
		if !ok {
			t.Fatalf("Builtin(%q) missing", name)
		}
		if !sameTC(got, want) {
			t.Errorf("%s: built in %v, the IDL's %v", name, got, want)
		}
	}
	n := 0
	for _, name := range l.Types() {
		if tc, _ := l.Lookup(name); tc != nil && tc.Kind == corba.TkStruct && tc.ID[:8] == "IDL:RTC/" {
			n++
			if _, ok := Builtin(name); !ok {
				t.Errorf("BasicDataType.idl declares %s, which Builtin lacks", name)
			}
		}
	}
	if n != len(BuiltinNames) {
		t.Errorf("the file has %d RTC structs, Builtin %d", n, len(BuiltinNames))
	}
	for _, alias := range []string{"RTC.TimedString", "::RTC::TimedString", "RTC::TimedString"} {
		if tc, ok := Builtin(alias); !ok || tc.ID != "IDL:RTC/TimedString:1.0" {
			t.Errorf("Builtin(%q) = %v, %v", alias, tc, ok)
		}
	}
	if _, ok := Builtin("TimedStrin"); ok {
		t.Error("Builtin knows TimedStrin")
	}
}

func sameTC(a, b *corba.TypeCode) bool {
	if a.Kind != b.Kind || a.ID != b.ID || a.Name != b.Name || a.Bound != b.Bound || a.Length != b.Length || len(a.Members) != len(b.Members) {
		return false
	}
	for i := range a.Members {
		if a.Members[i].Name != b.Members[i].Name || !sameTC(a.Members[i].Type, b.Members[i].Type) {
			return false
		}
	}
	if (a.Content == nil) != (b.Content == nil) {
		return false
	}
	return a.Content == nil || sameTC(a.Content, b.Content)
}
