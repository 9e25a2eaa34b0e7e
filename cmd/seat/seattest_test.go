package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSeatTestExamples: every example behavior ships a transcript, and
// seat test runs them all green, as CI does.
func TestSeatTestExamples(t *testing.T) {
	behaviors, _ := filepath.Glob("../../examples/*.seatml")
	scxml, _ := filepath.Glob("../../examples/*.scxml")
	for _, b := range append(behaviors, scxml...) {
		base := strings.TrimSuffix(b, ".seatml") // NAME.scxml's are NAME.scxml*.seattest
		if m, _ := filepath.Glob(base + "*.seattest"); len(m) == 0 {
			t.Errorf("%s has no transcript", b)
		}
	}
	stdout, stderr, code := runSeat("test", "../../examples")
	if code != 0 {
		t.Fatalf("seat test examples: exit %d\n%s%s", code, stdout, stderr)
	}
	transcripts, _ := filepath.Glob("../../examples/*.seattest")
	deeper, _ := filepath.Glob("../../examples/*/*.seattest")
	transcripts = append(transcripts, deeper...)
	if n := len(regexp.MustCompile(`(?m)^ok   `).FindAllString(stdout, -1)); n != len(transcripts) || len(transcripts) < len(behaviors) {
		t.Errorf("%d ok lines for %d transcripts:\n%s", n, len(transcripts), stdout)
	}
	for _, f := range transcripts {
		if !regexp.MustCompile(`(?m)^ok   ` + regexp.QuoteMeta(f) + `  \d+ steps  \S+$`).MatchString(stdout) {
			t.Errorf("no ok line for %s:\n%s", f, stdout)
		}
	}
}

// elapsed is the run time in seat test's report, which varies.
var elapsed = regexp.MustCompile(`(?m)(  \d+ steps  )\S+(  \(\d+ warnings?\))?$`)

// TestSeatTestGolden runs each transcript of testdata/seattest, most of
// them written to fail, and compares the report and exit status with
// NAME.report (go test ./cmd/seat -update rewrites them).
func TestSeatTestGolden(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/seattest/*.seattest")
	if len(files) < 8 {
		t.Fatalf("%d files in testdata/seattest", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".seattest")
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runSeat("test", file)
			got := elapsed.ReplaceAllString(stdout+stderr, "${1}TIME${2}") + fmt.Sprintf("exit %d\n", code)
			golden(t, strings.TrimSuffix(file, ".seattest")+".report", got)
			want := 1
			switch {
			case strings.HasPrefix(name, "bad-"), strings.HasPrefix(name, "no-"):
				want = 2
			case strings.HasSuffix(name, "-allowed"):
				want = 0
			}
			if code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
		})
	}
}

// TestSeatTestFlags: -run selects files, -v prints each step and message,
// a directory's testdata is skipped, and no transcript at all is bad input.
func TestSeatTestFlags(t *testing.T) {
	stdout, _, code := runSeat("test", "-run", `kiosk\.timeouts`, "../../examples")
	if code != 0 || strings.Count(stdout, "ok ") != 1 || !strings.Contains(stdout, "kiosk.timeouts.seattest") {
		t.Errorf("-run: exit %d\n%s", code, stdout)
	}
	stdout, _, code = runSeat("test", "../../examples/greeter.seattest", "-v")
	for _, want := range []string{
		"=== RUN   ../../examples/greeter.seattest\n",
		"    ../../examples/greeter.seattest:6: > hi\n",
		"        0s     chat< Hello, stranger! (#1)   (a reply to peer1)\n",
		"        10s    chat< silence for 10 s, going idle\n",
	} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("-v: exit %d, no %q in\n%s", code, want, stdout)
		}
	}
	// testdata holds failing transcripts, skipped when a parent is named.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "testdata"), 0o755)
	os.WriteFile(filepath.Join(dir, "testdata", "x.seattest"), []byte("> hi\n"), 0o644)
	if _, stderr, code := runSeat("test", dir); code != 2 || !strings.Contains(stderr, "no .seattest files in") {
		t.Errorf("empty directory: exit %d\n%s", code, stderr)
	}
}

// TestSeatTestSignal: SIGTERM (or Ctrl-C) ends seat test in the middle of
// a + step that would run for days: the step fails as interrupted, the
// transcripts after it are not run, and the exit status is 1. (Issue 20:
// +1000000h ran for over ten minutes and ignored SIGTERM and Ctrl-C.)
func TestSeatTestSignal(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.seatml"), []byte(`<seatml><general name="t" rate="1000"><adaptor name="io" type="stdio"/></general>
<state name="s"><onexec><script>n = (n or 0) + 1</script></onexec></state></seatml>`), 0o644)
	os.WriteFile(filepath.Join(dir, "a.seattest"), []byte("behavior: b.seatml\n+1000000h\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.seattest"), []byte("+1s\n"), 0o644)
	cmd := exec.Command(os.Args[0], "test", "-v", dir)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(out.String(), "a.seattest:2: +1000000h") }) // -v: the step has begun
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, cmd, 5*time.Second, nil) // exits 1: checked below
	t.Logf("ended %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), "interrupted at +") || !strings.Contains(errOut.String(), "interrupted; ") || strings.Contains(out.String(), "b.seattest") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
}

// TestSeatTestWarnings: seat test passes a transcript during which the
// behavior logged an error (a Lua error, error.execution), and says so:
// "(1 warning)" on the ok line, then what was logged. Before, it printed
// a bare ok. On the real binary.
func TestSeatTestWarnings(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "受付.seatml"), []byte(`<seatml><general name="受付"><adaptor name="係員" type="stdio"/></general>
<state name="待機">
  <rule><key>こんにちは</key><message sendto="係員">いらっしゃいませ</message><script>local name = string.match(event.text, "(%d+)番"); seat.reply(name .. "番の方")</script></rule>
</state></seatml>
`), 0o644)
	f := filepath.Join(dir, "受付.seattest")
	os.WriteFile(f, []byte("> こんにちは\n< いらっしゃいませ\n"), 0o644)
	stdout, stderr, code := runBinaryIO(t, "", "test", f)
	got := elapsed.ReplaceAllString(stdout, "${1}TIME${2}")
	want := "ok   " + f + "  2 steps  TIME  (1 warning)\n    the behavior logged:\n        error\tscript failed\t"
	if code != 0 || stderr != "" || !strings.HasPrefix(got, want) || !strings.Contains(got, "受付.seatml:3: ") {
		t.Errorf("seat test: exit %d\n%s%s\nwant it to begin\n%s", code, stdout, stderr, want)
	}
}

// TestSeatTestEventsAndConfigurationsOnTheRealBinary: seat test sends an
// SCXML document named events with data (@event NAME JSON) and checks
// its exact active states (== A, B, C), on the real binary: the shipped
// reception.events.seattest pauses and resumes the dialogue by its own
// events, and a wrong set of states fails naming the states missing and
// those active too.
func TestSeatTestEventsAndConfigurationsOnTheRealBinary(t *testing.T) {
	stdout, stderr, code := runBinaryIO(t, "", "test", "../../examples/reception.events.seattest")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "ok   ../../examples/reception.events.seattest  ") {
		t.Errorf("seat test reception.events.seattest: exit %d\n%s%s", code, stdout, stderr)
	}
	behavior, err := filepath.Abs("../../examples/reception.scxml")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "中断.seattest")
	os.WriteFile(f, []byte("behavior: "+behavior+`
> こんにちは
< いらっしゃいませ。本日はどのようなご用件でしょうか。
@event 中断 {"理由": "点検"}
== 稼働, 対話, 会話, 接客, 用件, 見守り, 平常
`), 0o644)
	stdout, stderr, code = runBinaryIO(t, "", "test", f)
	for _, want := range []string{
		f + ":5: == 稼働, 対話, 会話, 接客, 用件, 見守り, 平常\n",
		"        wrong active states (not active: 会話, 接客, 用件; active too: 中断)\n",
		"        got:   稼働, 対話, 中断, 見守り, 平常\n",
		`            @event 中断 {"理由": "点検"}` + "\n",
	} {
		if code != 1 || !strings.Contains(stdout, want) {
			t.Errorf("exit %d; no %q in\n%s%s", code, want, stdout, stderr)
		}
	}
}
