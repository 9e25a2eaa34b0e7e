package luadm

import (
	"reflect"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func evalIn(t *testing.T, src string) lua.LValue {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	if err := L.DoString("v = " + src); err != nil {
		t.Fatal(err)
	}
	return L.GetGlobal("v")
}

// TestFromLua: sequences become lists, other tables maps (keys as text),
// an empty table an empty list.
func TestFromLua(t *testing.T) {
	for src, want := range map[string]any{
		`{1, "二", true}`:         []any{1.0, "二", true},
		`{["名前"] = "花子", n = 3}`: map[string]any{"名前": "花子", "n": 3.0},
		`{1, 2, x = 3}`:          map[string]any{"1": 1.0, "2": 2.0, "x": 3.0},
		`{}`:                     []any{},
		`{{}, {a = {1}}}`:        []any{[]any{}, map[string]any{"a": []any{1.0}}},
		`nil`:                    nil,
	} {
		got, err := FromLua(evalIn(t, src))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v, %v; want %#v", src, got, err, want)
		}
	}
}

// TestFromLuaRefusesWhatWouldNotEnd: a table that contains itself, one
// nested too deep and one that shares a table so often that copying it
// would not end are errors, not a stack overflow or an exhausted memory.
func TestFromLuaRefusesWhatWouldNotEnd(t *testing.T) {
	for src, want := range map[string]string{
		`(function() local t = {} t["自分"] = t return t end)()`:                      "contains itself",
		`(function() local t = {1} t = {t, {t}} t[2][2] = t return t end)()`:        "contains itself",
		`(function() local t = {} for i = 1, 200 do t = {t} end return t end)()`:    "nested more than 100 deep",
		`(function() local t = {1} for i = 1, 60 do t = {t, t} end return t end)()`: "more than 100000 values",
	} {
		got, err := FromLua(evalIn(t, src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, %v; want an error saying %q", src, got, err, want)
		}
	}
	// A table shared a few times, not a cycle, is copied.
	got, err := FromLua(evalIn(t, `(function() local s = {1} return {s, s, {s}} end)()`))
	if want := []any{[]any{1.0}, []any{1.0}, []any{[]any{1.0}}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("shared: %#v, %v", got, err)
	}
}
