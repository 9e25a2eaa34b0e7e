// Package speechtest is Debian's speech engines for tests: what they need
// installed, the WAV files they write, and their processes.
package speechtest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Packages are Debian's packages the speech tests need (the voice is in
// Debian's contrib section; .ci/run enables it for that one install).
const Packages = "open-jtalk open-jtalk-mecab-naist-jdic hts-voice-nitech-jp-atr503-m001 espeak-ng sox pocketsphinx pocketsphinx-en-us"

// Require skips a test when one of the programs is not installed, or
// fails it when CI=true or SEAT_REQUIRE_TOOLS=1.
func Require(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" || os.Getenv("SEAT_REQUIRE_TOOLS") == "1" {
				t.Fatalf("%s is not installed, and CI or SEAT_REQUIRE_TOOLS requires it (apt-get install %s)", p, Packages)
			}
			t.Skipf("%s is not installed; install Debian's %s", p, Packages)
		}
	}
}

// Child is the process id of a running child of this process whose
// command name is name, or 0.
func Child(t testing.TB, name string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) > 1 && s[open+1:end] == name && f[1] == strconv.Itoa(self) {
			return pid
		}
	}
	return 0
}
