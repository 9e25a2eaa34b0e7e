package idl

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/seatml/seat/adaptors/openrtm/omnitest"
)

// openrtmEnv names the directory of the shared OpenRTM material.
const openrtmEnv = omnitest.SharedEnv

func TestMain(m *testing.M) {
	if _, err := os.Stat(rtmDir()); err != nil && required() == "" {
		fmt.Fprintf(os.Stderr, "NOTE: the tests against OpenRTM's IDL and the captured vectors are skipped: %v; set %s to the directory of the OpenRTM material\n", err, openrtmEnv)
	}
	os.Exit(m.Run())
}

// openrtmDir is the shared OpenRTM material's directory.
func openrtmDir() string { return omnitest.SharedDir() }

// rtmDir is the directory of OpenRTM's IDL files.
func rtmDir() string { return filepath.Join(openrtmDir(), "idl", "rtm") }

// required says why missing material fails the tests ("" when they skip).
func required() string { return omnitest.SharedRequired() }

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
