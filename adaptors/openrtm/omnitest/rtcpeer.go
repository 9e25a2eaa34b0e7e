package omnitest

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The OpenRTM-style C++ peer (testdata/rtcpeer.cc), built once per test process.
var peer struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// RTCPeer returns the path of rtcpeer, an OpenRTM-style program on
// omniORB built from OpenRTM's IDL in the shared material (see
// testdata/rtcpeer.cc for what it does): a component with data ports, and the
// commands of OpenRTM's tools. It skips or fails the test when the
// build tools or the IDL are missing. Call Cleanup from TestMain.
func RTCPeer(t testing.TB) string {
	t.Helper()
	RequireBuildTools(t)
	idl := filepath.Join(SharedDir(), "idl", "rtm")
	if _, err := os.Stat(filepath.Join(idl, "RTC.idl")); err != nil {
		if why := SharedRequired(); why != "" {
			t.Fatalf("OpenRTM's IDL is not at %s, and %s", idl, why)
		}
		t.Skipf("OpenRTM's IDL is not at %s (set %s)", idl, SharedEnv)
	}
	peer.once.Do(func() {
		_, self, _, _ := runtime.Caller(0)
		if peer.dir, peer.err = os.MkdirTemp("", "rtcpeer"); peer.err != nil {
			return
		}
		var idls []string
		for _, f := range []string{"SDOPackage", "RTC", "DataPort_OpenRTM", "DataPort", "BasicDataType"} {
			idls = append(idls, filepath.Join(idl, f+".idl"))
		}
		peer.bin, peer.err = Build(peer.dir, "rtcpeer", idls, []string{filepath.Join(filepath.Dir(self), "testdata", "rtcpeer.cc")})
	})
	if peer.err != nil {
		t.Fatal(peer.err)
	}
	return peer.bin
}

// Cleanup removes what the test process built (RTCPeer's program).
func Cleanup() {
	if peer.dir != "" {
		os.RemoveAll(peer.dir)
	}
}
