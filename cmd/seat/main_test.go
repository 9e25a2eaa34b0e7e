package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the real main when SEAT_TEST_MAIN is set, so tests can start
// seat as a process and send it signals. Otherwise it runs the tests, with
// a leak check. The stdio adaptor's reader may stay blocked on a pipe
// nobody closes: the documented cost of reading a terminal, not a leak of
// the machine.
func TestMain(m *testing.M) {
	if os.Getenv("SEAT_TEST_MAIN") == "1" {
		main()
		return
	}
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("io.(*pipe).read"))
}
