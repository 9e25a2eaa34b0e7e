package idl

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// openrtmEnv names the directory of the shared OpenRTM material (idl/,
// wire/vectors/), as in ../corba's tests.
const openrtmEnv = "SEAT_OPENRTM"

func TestMain(m *testing.M) {
	if _, err := os.Stat(rtmDir()); err != nil && required() == "" {
		fmt.Fprintf(os.Stderr, "NOTE: the tests against OpenRTM's IDL and the captured vectors are skipped: %v; set %s to the directory of the OpenRTM material\n", err, openrtmEnv)
	}
	os.Exit(m.Run())
}

// openrtmDir is $SEAT_OPENRTM when set, else ../shared/openrtm beside the
// repository holding the working directory (the directory of its go.mod).
func openrtmDir() string {
	if d := os.Getenv(openrtmEnv); d != "" {
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

// rtmDir is the directory of OpenRTM's IDL files.
func rtmDir() string { return filepath.Join(openrtmDir(), "idl", "rtm") }

// required says why missing material fails the tests ("" when they skip).
func required() string {
	switch {
	case os.Getenv(openrtmEnv) != "":
		return openrtmEnv + " names it"
	case os.Getenv("CI") == "true":
		return "CI=true"
	case os.Getenv("SEAT_REQUIRE_TOOLS") == "1":
		return "SEAT_REQUIRE_TOOLS=1"
	}
	return ""
}

// needRTM returns the IDL directory, or skips (fails when required).
func needRTM(t testing.TB) string {
	t.Helper()
	dir := rtmDir()
	if _, err := os.Stat(filepath.Join(dir, "BasicDataType.idl")); err != nil {
		if why := required(); why != "" {
			t.Fatalf("OpenRTM's IDL is required (%s): %v", why, err)
		}
		t.Skipf("OpenRTM's IDL not found: %v; set %s", err, openrtmEnv)
	}
	return dir
}
