package rosmsg

import (
	"strings"
	"testing"

	"github.com/bluenviron/goroslib/v2/pkg/msgproc"
)

// TestCompiledFallback: with no definition file anywhere, every message
// type goroslib ships compiled is built from its definition, with the
// MD5 sum goroslib gives its own struct; a type neither has is still an
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
	if _, err := r.Message("sensor_msgs/Joi"); err == nil || !strings.Contains(err.Error(), `message type "sensor_msgs/Joi" not found; searched `) {
		t.Errorf("a type neither has: %v", err)
	}
}
