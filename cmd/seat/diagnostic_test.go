package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seatml/seat/interpreter/record"
)

// TestRunTimeErrorIsADiagnostic runs the real binary with a script that
// fails on its third line, Japanese around the culprit: the log's error
// line gives the file and line, the explanation and the failing line of
// code; the recording keeps the error with the code and a caret under the
// nil global (past Japanese, two columns a character); the behavior goes
// on (the next line is answered), and the recording replays, its error
// failing again in the replay.
func TestRunTimeErrorIsADiagnostic(t *testing.T) {
	dir := t.TempDir()
	port := freePortNumber(t)
	beh, rec := filepath.Join(dir, "受付.seatml"), filepath.Join(dir, "受付.jsonl")
	os.WriteFile(beh, []byte(`<seatml><general name="受付"><adaptor name="音声" type="socket" role="server" port="`+port+`"/></general>
<state name="待機">
  <rule><key>こんにちは</key><script>
    local name = "山田さん"
    local greeting = "ようこそ"; greet_guest(greeting)
  </script></rule>
  <rule><key>さようなら</key><message sendto="音声">お気をつけて</message></rule>
</state></seatml>`), 0o644)
	cmd, stderr := startSeat(t, "run", "--record", rec, beh)
	conn := dialSeat(t, port)
	defer conn.Close()
	conn.Write([]byte("こんにちは\nさようなら\n"))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := bufio.NewReader(conn).ReadString('\n'); err != nil || got != "お気をつけて\n" {
		t.Fatalf("after the failed script: %q, %v\n%s", got, err, stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("seat run: %v\n%s", err, stderr.String())
	}
	msg := beh + ":5: attempt to call greet_guest, which is nil (a global not defined when this ran; check its spelling)"
	if log := stderr.String(); !strings.Contains(log, `"error": "`+msg+`"`) || !strings.Contains(log, `"state": "待機", "code": "local greeting = \"ようこそ\"; greet_guest(greeting)"`) {
		t.Errorf("the log's error line:\n%s", log)
	}

	f, err := os.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	lines, _, err := record.Read(rec, f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var errs []record.Line
	for _, l := range lines {
		if l.Kind == "error" {
			errs = append(errs, l)
		}
	}
	want := "5 | local greeting = \"ようこそ\"; greet_guest(greeting)\n  | " + strings.Repeat(" ", 29) + "^" // 25 characters before it, 4 of them wide
	if len(errs) != 1 || errs[0].TextOf() != msg || errs[0].Key != "script failed" || errs[0].State != "待機" || errs[0].Detail != want {
		t.Fatalf("the recording's errors: %+v\nwant one, detail:\n%s", errs, want)
	}
	if stdout, errOut, code := runSeat("replay", rec); code != 0 || !strings.Contains(stdout, "2 inputs, 1 message match") {
		t.Errorf("replay: exit %d\n%s%s", code, stdout, errOut)
	}
}
