package main

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// versionPattern is the shape of seat's version line, as go version's:
// "seat version VERSION (GOVERSION GOOS/GOARCH)".
var versionPattern = regexp.MustCompile(`^seat version (v\d+\.\d+\.\d+\S*|\(devel\)( [0-9a-f]{1,12}(\+modified)?)?) \(go1\.\d+\S* [a-z0-9]+/[a-z0-9]+\)\n$`)

// TestVersionFlags: seat --version, seat -v, seat -version and seat
// version print the same line, from the build information of the binary
// that runs, and exit 0; extra arguments are refused (issue 21 #14).
func TestVersionFlags(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	want := versionLine(bi) + "\n"
	if !versionPattern.MatchString(want) {
		t.Fatalf("version line %q does not have the documented shape", want)
	}
	for _, args := range [][]string{{"--version"}, {"-v"}, {"-version"}, {"version"}} {
		stdout, stderr, code := seatProcess(t, "", args...)
		if code != 0 || stderr != "" || stdout != want {
			t.Errorf("seat %s: exit %d, stdout %q, stderr %q; want %q", args[0], code, stdout, stderr, want)
		}
	}
	if _, stderr, code := seatProcess(t, "", "version", "now"); code != 2 || !strings.Contains(stderr, `seat version: takes no arguments, not "now"`) {
		t.Errorf("seat version now: exit %d\n%s", code, stderr)
	}
}

// TestVersionLine: the module version when the build has one; else
// (devel) with the commit, marked when the tree was modified; the Go
// version and platform the binary was built with.
func TestVersionLine(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install at a tag", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.2.0"},
			Settings: settings("GOOS", "linux", "GOARCH", "arm64")}, "seat version v0.2.0 (go1.26.8 linux/arm64)"},
		{"go build in a checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20260102150405-0123456789ab+dirty"},
			Settings: settings("GOOS", "darwin", "GOARCH", "arm64", "vcs.revision", rev, "vcs.modified", "true")},
			"seat version v0.0.0-20260102150405-0123456789ab+dirty (go1.26.8 darwin/arm64)"},
		{"devel, modified", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: settings("GOOS", "linux", "GOARCH", "amd64", "vcs.revision", rev, "vcs.modified", "true")},
			"seat version (devel) 0123456789ab+modified (go1.26.8 linux/amd64)"},
		{"devel, clean", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: settings("GOOS", "linux", "GOARCH", "amd64", "vcs.revision", rev, "vcs.modified", "false")},
			"seat version (devel) 0123456789ab (go1.26.8 linux/amd64)"},
		{"devel, no commit", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: settings("GOOS", "windows", "GOARCH", "amd64")}, "seat version (devel) (go1.26.8 windows/amd64)"},
		{"no build information", nil, "seat version (devel) (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := versionLine(c.bi)
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			if !versionPattern.MatchString(got + "\n") {
				t.Errorf("%q does not have the documented shape", got)
			}
		})
	}
}

// TestVersionOfABuiltBinary builds seat as a user does in a checkout (go
// build, with version control stamping) and runs it: the line is the
// binary's own build information, and carries the module's
// pseudo-version, which names the commit (skipped outside a git checkout).
func TestVersionOfABuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds seat")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		t.Skipf("no go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "seat")
	build := exec.Command(gobin, "build", "-buildvcs=true", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("go build -buildvcs=true (not a git checkout?): %v\n%s", err, out)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var rev string
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			rev = s.Value
		}
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("seat --version: %v\n%s", err, out)
	}
	got := string(out)
	if got != versionLine(bi)+"\n" || !versionPattern.MatchString(got) {
		t.Errorf("seat --version printed %q, want %q", got, versionLine(bi)+"\n")
	}
	if rev == "" {
		t.Skipf("not built in a git checkout: no commit to find in %q", got)
	}
	if !strings.Contains(got, rev[:12]) {
		t.Errorf("seat --version of a build at %s printed %q", rev, got)
	}
}
