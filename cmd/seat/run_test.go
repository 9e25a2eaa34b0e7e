package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExamplesCheckClean loads and checks every file in examples/: no error
// and no warning.
func TestExamplesCheckClean(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.seatml")
	if len(files) < 3 {
		t.Fatalf("found %d examples", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), []string{"check", f}, nil, &stdout, &stderr); err != nil {
				t.Errorf("seat check: %v\n%s", err, stderr.String())
			}
			if stderr.Len() > 0 {
				t.Errorf("diagnostics:\n%s", stderr.String())
			}
		})
	}
}

func TestRunStdioExample(t *testing.T) {
	var stdout, stderr bytes.Buffer
	in := strings.NewReader("hi\nhow are you\nnum21\nbye\nfoo\nhello")
	err := run(context.Background(), []string{"run", "--log-format=json", "../../examples/greeter-stdio.seatml"}, in, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	want := "Hello! (#1)\nfine, thank you\nnumber 21 doubled is 42\nbye\n(say hello first)\nHello! (#2)\n"
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("--log-format=json wrote a non-JSON line: %q", line)
		}
	}
	if !strings.Contains(stderr.String(), `"msg":"state","behavior":"greeter-stdio","from":"idle","to":"talking"`) {
		t.Errorf("no state change logged:\n%s", stderr.String())
	}
}

func TestRunRefusesBrokenFile(t *testing.T) {
	var stdout, stderr bytes.Buffer
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.seatml")
	os.WriteFile(path, []byte(`<seatml><general name="x"><adaptor name="o" type="stdio"/></general><state name="a"><onentry><message sendto="o">started</message><statetransition>nowhere</statetransition></onentry></state></seatml>`), 0o644)
	err := run(context.Background(), []string{"run", path}, strings.NewReader(""), &stdout, &stderr)
	if code := exitCode(err, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if stdout.Len() != 0 {
		t.Errorf("a file with errors started: %q", stdout.String())
	}
	if want := path + `:1:148: statetransition target "nowhere" is not a declared state`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
}

func TestRunStopsOnSignalWithOnExit(t *testing.T) {
	// The signal context ends: onexit runs, adaptors close, status 0.
	dir := t.TempDir()
	path := filepath.Join(dir, "s.seatml")
	os.WriteFile(path, []byte(`<seatml><general name="x"><adaptor name="o" type="stdio"/></general>
<state name="a"><onentry><message sendto="o">entered</message></onentry><onexit><message sendto="o">exited</message></onexit>
<rule><key>stop</key><script>stop_now()</script></rule></state></seatml>`), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	defer pw.Close()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"run", path}, pr, &stdout, &stderr) }()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), `"to": "a"`) })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := stdout.String(); got != "entered\nexited\n" {
		t.Errorf("stdout %q", got)
	}
}

func TestUsageAndVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := exitCode(run(context.Background(), nil, nil, &stdout, &stderr), &stderr); code != 2 || !strings.Contains(stderr.String(), "Usage:") {
		t.Errorf("no args: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := exitCode(run(context.Background(), []string{"chek"}, nil, &stdout, &stderr), &stderr); code != 2 || !strings.Contains(stderr.String(), `unknown command "chek"`) {
		t.Errorf("unknown command: exit %d, %q", code, stderr.String())
	}
	if err := run(context.Background(), []string{"version"}, nil, &stdout, &stderr); err != nil || !strings.HasPrefix(stdout.String(), "seat ") {
		t.Errorf("version: %v %q", err, stdout.String())
	}
}
