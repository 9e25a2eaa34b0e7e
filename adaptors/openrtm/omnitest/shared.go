package omnitest

import (
	"os"
	"path/filepath"
)

// SharedEnv names the directory of the shared OpenRTM material: OpenRTM's
// IDL (idl/rtm) and the GIOP messages captured between its components
// (wire/vectors).
const SharedEnv = "SEAT_OPENRTM"

// SharedDir is $SEAT_OPENRTM when set, else ../shared/openrtm beside the
// repository holding the working directory (the directory of its go.mod),
// as the W3C SCXML suite is found (interpreter/scxml/irptest).
func SharedDir() string {
	if d := os.Getenv(SharedEnv); d != "" {
		return d
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.Join(filepath.Dir(d), "shared", "openrtm")
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return filepath.Join("..", "..", "..", "..", "shared", "openrtm")
}

// SharedRequired says why missing shared material fails the tests that
// need it ("" when they skip): $SEAT_OPENRTM names it, CI=true or
// SEAT_REQUIRE_TOOLS=1.
func SharedRequired() string {
	switch {
	case os.Getenv(SharedEnv) != "":
		return SharedEnv + " names it"
	case os.Getenv("CI") == "true":
		return "CI=true"
	case os.Getenv("SEAT_REQUIRE_TOOLS") == "1":
		return "SEAT_REQUIRE_TOOLS=1"
	}
	return ""
}
