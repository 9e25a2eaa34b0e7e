package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The stdio adaptor's reader may stay blocked on a pipe nobody closes: that
// is the documented cost of reading a terminal, not a leak of the machine.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("io.(*pipe).read"))
}
