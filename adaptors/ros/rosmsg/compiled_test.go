package rosmsg

import (
	"reflect"
	"strings"
	"testing"

	"github.com/bluenviron/goroslib/v2/pkg/msg"
	"github.com/bluenviron/goroslib/v2/pkg/msgproc"
	"github.com/bluenviron/goroslib/v2/pkg/serviceproc"
)

// TestCompiledFallback: with no definition file anywhere, every message
// and service type goroslib ships compiled is built from its definition,
// with the MD5 sum goroslib gives its own structs; a type neither has is still an
// error naming the paths searched.
func TestCompiledFallback(t *testing.T) {
	r := NewRegistry([]string{t.TempDir()})
	if len(compiled) < 200 {
		t.Fatalf("only %d compiled types", len(compiled))
	}
	for name, zero := range compiled {
		typ, err := r.Message(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want, err := msgproc.MD5(zero)
		if err != nil {
			t.Fatal(err)
		}
		if typ.MD5 != want {
			t.Errorf("%s: MD5 %s, goroslib's %s", name, typ.MD5, want)
		}
	}
	for name, parts := range compiledServices {
		s, err := r.Service(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		zero := reflect.Zero(reflect.StructOf([]reflect.StructField{
			{Name: "Package", Type: reflect.TypeOf(msg.Package(0)), Anonymous: true, Tag: reflect.StructTag(`ros:"` + strings.Split(name, "/")[0] + `"`)},
			{Name: "Req", Type: reflect.TypeOf(parts[0])},
			{Name: "Res", Type: reflect.TypeOf(parts[1])},
		})).Interface()
		if want, err := serviceproc.MD5(zero); err != nil || s.MD5 != want {
			t.Errorf("%s: MD5 %s, goroslib's %s (%v)", name, s.MD5, want, err)
		}
	}
	if _, err := r.Message("sensor_msgs/Joi"); err == nil || !strings.Contains(err.Error(), `message type "sensor_msgs/Joi" not found; searched `) {
		t.Errorf("a type neither has: %v", err)
	}
}
