package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seatml/seat/interpreter/srcfile"
)

// TestSCXMLPeerSessionIDsAreUnique: each peer's session of an SCXML
// document (session="peer") has a _sessionid of its own, and
// #_scxml_ID of another peer's session does not reach the sender: it is
// error.communication (real binary, TCP). Before, every peer's session
// was "1", and the send came back to the sender itself.
func TestSCXMLPeerSessionIDsAreUnique(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "番号.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" name="番号">
  <seat:adaptor name="客" type="socket" role="server" port="`+port+`" session="peer"/>
  <state id="聞く">
    <transition event="客.line" cond="_event.data.text == '番号'"><script>seat.reply(_sessionid)</script></transition>
    <transition event="客.line" cond="_event.data.text:match('^送る ')">
      <send event="呼び" targetexpr="'#_scxml_' .. _event.data.text:match('^送る (.*)$')"/>
    </transition>
    <transition event="呼び"><script>seat.reply('自分に届いた ' .. _sessionid)</script></transition>
    <transition event="error.communication"><script>seat.reply('届かない')</script></transition>
  </state>
</scxml>
`), 0o644)
	_, log := startSeat(t, "run", "--log-format", "json", f)
	a, b := dialSeat(t, port), dialSeat(t, port)
	ra, rb := bufio.NewReader(a), bufio.NewReader(b)
	for _, c := range []net.Conn{a, b} {
		c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	ask := func(c net.Conn, r *bufio.Reader, say string) string {
		t.Helper()
		send(t, c, say)
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v\n%s", say, err, log.String())
		}
		return strings.TrimSuffix(l, "\n")
	}
	idA, idB := ask(a, ra, "番号"), ask(b, rb, "番号")
	if idA == "" || idA == idB {
		t.Errorf("session ids %q and %q; want two different ids", idA, idB)
	}
	if got := ask(b, rb, "送る "+idA); got != "届かない" {
		t.Errorf("b's <send> to #_scxml_%s (a's session): b heard %q; want error.communication (届かない)\n%s", idA, got, log.String())
	}
	if got := ask(b, rb, "送る "+idB); got != "自分に届いた "+idB {
		t.Errorf("b's <send> to its own #_scxml_%s: %q", idB, got)
	}
}

// guard kills the process cmd runs when its resident memory passes
// limitMiB (a defect that reads without bound must not take the machine
// the tests run on with it), and tells the test so. It stops when the
// process ends.
func guard(t *testing.T, cmd *exec.Cmd, limitMiB int) (killed func() int) {
	t.Helper()
	var over atomic.Int64
	go func() {
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		for {
			b, err := os.ReadFile(status)
			if err != nil {
				return // ended
			}
			for _, l := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
					kib, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
					if kib > limitMiB<<10 {
						over.Store(int64(kib >> 10))
						cmd.Process.Kill()
						return
					}
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func() int { return int(over.Load()) }
}

// TestSCXMLFilesAreHeldToTheDocumentsDirectory: what a document reads
// through <data src>, <script src>, <invoke src> and srcexpr is held to
// its directory, to regular files and to srcfile.MaxSize bytes, checked
// at run time when the path is made at run time (real binary, a TCP
// peer choosing the path). A path outside is refused with the same
// message whether or not the file exists; a FIFO does not block the
// document, /dev/zero does not take the memory. Before, the peer that
// sent /etc/passwd received its contents, an <invoke srcexpr> of a file
// outside said whether it existed, a FIFO blocked the event loop for
// good and /dev/zero took the memory until the process was killed.
func TestSCXMLFilesAreHeldToTheDocumentsDirectory(t *testing.T) {
	dir := t.TempDir()
	port := freePortNumber(t)
	f := filepath.Join(dir, "読み手.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" name="読み手" initial="待つ">
  <seat:adaptor name="客" type="socket" role="server" port="`+port+`"/>
  <datamodel><data id="path" expr="''"/></datamodel>
  <script><![CDATA[
    function child(path)
      return [[<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua"><datamodel><data id="d" src="]] .. path .. [["/></datamodel><final id="f"><donedata><param name="text" expr="d"/></donedata></final></scxml>]]
    end
  ]]></script>
  <state id="待つ">
    <transition event="客.line" cond="_event.data.text:match('^data ')" target="データ"><script>path = _event.data.text:sub(6)</script></transition>
    <transition event="客.line" cond="_event.data.text:match('^invoke ')" target="文書"><script>path = _event.data.text:sub(8)</script></transition>
  </state>
  <state id="データ">
    <invoke id="子"><content expr="child(path)"/></invoke>
    <transition event="done.invoke.子" target="待つ"><script>seat.send('客', '読めた ' .. tostring(_event.data.text))</script></transition>
    <transition event="error.execution" target="待つ"><script>seat.send('客', '誤り ' .. _event.data)</script></transition>
  </state>
  <state id="文書">
    <invoke id="子" srcexpr="path"/>
    <transition event="done.invoke.子" target="待つ"><script>seat.send('客', '読めた')</script></transition>
    <transition event="error.execution" target="待つ"><script>seat.send('客', '誤り ' .. _event.data)</script></transition>
  </state>
</scxml>
`), 0o644)
	os.WriteFile(filepath.Join(dir, "中身.txt"), []byte("こんにちは"), 0o644)
	os.WriteFile(filepath.Join(dir, "子.scxml"), []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua"><final id="終"/></scxml>`), 0o644)
	big, _ := os.Create(filepath.Join(dir, "大きい.txt"))
	big.Truncate(srcfile.MaxSize + 1)
	big.Close()
	fifo := filepath.Join(dir, "管")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runBinary(t, "", "check", f); code != 0 {
		t.Fatalf("seat check: exit %d: %s", code, out)
	}
	cmd, log := startSeat(t, "run", "--log-format", "json", f)
	// Cleanups run last first: before seat is stopped, a reader blocked on
	// the FIFO (the defect) is let go, so that seat can stop.
	t.Cleanup(func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	tooBig := guard(t, cmd, 512)
	c := dialSeat(t, port)
	r := bufio.NewReader(c)
	ask := func(say string) string {
		t.Helper()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		send(t, c, say)
		l, err := r.ReadString('\n')
		if err != nil {
			if mib := tooBig(); mib > 0 {
				t.Fatalf("after %q: seat grew past %d MiB and was killed\n%s", say, mib, log.String())
			}
			t.Fatalf("after %q: no answer: %v\n%s", say, err, log.String())
		}
		return strings.TrimSuffix(l, "\n")
	}
	if got := ask("data 中身.txt"); got != "読めた こんにちは" {
		t.Errorf("a file beside the document: %q", got)
	}
	if got := ask("invoke 子.scxml"); got != "読めた" {
		t.Errorf("a document beside the document: %q", got)
	}
	for say, want := range map[string]string{
		"data 管":         "it is not a regular file (a FIFO)",
		"invoke 管":       "it is not a regular file (a FIFO)",
		"data 大きい.txt":   "it is larger than 4 MiB",
		"invoke 大きい.txt": "it is larger than 4 MiB",
	} {
		if got := ask(say); !strings.HasPrefix(got, "誤り ") || !strings.Contains(got, want) {
			t.Errorf("%q: %q; want error.execution saying %q", say, got, want)
		}
	}
	const outside = "the path leads outside the document's directory: seat reads only files under it"
	for _, tc := range []struct{ exists, missing string }{
		{"data /etc/passwd", "data /etc/no-such-外"},
		{"data ../../../../../../../etc/passwd", "data ../../../../../../../etc/no-such-外"},
		{"invoke ../../../../../../../etc/passwd", "invoke ../../../../../../../etc/no-such-外"},
		{"invoke /etc/hostname", "invoke /etc/no-such-外"},
		{"invoke /dev/zero", "invoke /dev/no-such-外"},
		{"data /dev/zero", "data /dev/no-such-外"},
	} {
		got, other := ask(tc.exists), ask(tc.missing)
		if !strings.HasPrefix(got, "誤り ") || !strings.Contains(got, outside) || strings.Contains(got, "root:") {
			t.Errorf("%q: %q; want error.execution saying %q", tc.exists, got, outside)
		}
		p, q := strings.SplitN(tc.exists, " ", 2)[1], strings.SplitN(tc.missing, " ", 2)[1]
		if strings.ReplaceAll(got, p, "PATH") != strings.ReplaceAll(other, q, "PATH") {
			t.Errorf("the answers tell a file outside that exists from one that does not:\n%q: %q\n%q: %q", tc.exists, got, tc.missing, other)
		}
	}
	if got := ask("data 中身.txt"); got != "読めた こんにちは" {
		t.Errorf("afterwards: %q", got)
	}
}

// TestCheckSCXMLFilesAreHeld: seat check refuses <data src>, <script
// src> and <invoke src> that lead outside the document's directory, or
// name a FIFO, a device or a file over the limit, each at its place, and
// ends at once. Before, <data src="/dev/zero"> took the memory (seat
// check was killed), a FIFO blocked it for good, and /etc/passwd was
// read.
func TestCheckSCXMLFilesAreHeld(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "検査.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua">
  <datamodel><data id="零" src="/dev/zero"/><data id="a" src="管"/><data id="b" src="大きい.txt"/><data id="c" src="file:../../../../../../etc/passwd"/></datamodel>
  <state id="状態">
    <onentry><script src="/etc/hostname"/></onentry>
    <invoke src="../../../../../../etc/passwd"/>
  </state>
</scxml>
`), 0o644)
	big, _ := os.Create(filepath.Join(dir, "大きい.txt"))
	big.Truncate(srcfile.MaxSize + 1)
	big.Close()
	fifo := filepath.Join(dir, "管")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "check", f)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	out := &syncBuffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tooBig := guard(t, cmd, 512)
	t.Cleanup(func() { // the defect: a reader blocked on the FIFO
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	err := waitExit(t, cmd, 20*time.Second, out)
	if mib := tooBig(); mib > 0 {
		t.Fatalf("seat check grew past %d MiB and was killed\n%s", mib, out.String())
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("seat check: %v, want exit status 1", err)
	}
	for _, want := range []string{
		`:2:24: data id "零" is not a Lua variable name`,
		`:2:32: cannot read "/dev/zero": the path leads outside the document's directory: seat reads only files under it`,
		`:2:62: cannot read "管": it is not a regular file (a FIFO): seat reads only regular files`,
		`:2:84: cannot read "大きい.txt": it is larger than 4 MiB`,
		`:2:112: cannot read "file:../../../../../../etc/passwd": the path leads outside the document's directory`,
		`:4:27: cannot read "/etc/hostname": the path leads outside the document's directory`,
		`:5:18: <invoke> src "../../../../../../etc/passwd": the path leads outside the document's directory`,
	} {
		if !strings.Contains(out.String(), f+want) {
			t.Errorf("want %s%s in:\n%s", f, want, out.String())
		}
	}
}

// TestSCXMLDelayedSendStormIsBounded: a document in which each event
// sends two more with delay="1ms" stops growing at scxml.MaxDelayed
// waiting events: the <send>s past it raise error.communication, one
// log line names the <send>'s place, and the document still answers its
// peer (real binary, TCP). Before, seat grew by some 100 MB/s until the
// system killed it, logging nothing (here the test's guard kills it at
// 512 MiB).
func TestSCXMLDelayedSendStormIsBounded(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "増殖.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" name="増殖" initial="増える">
  <seat:adaptor name="客" type="socket" role="server" port="`+port+`"/>
  <state id="増える">
    <onentry><send event="e" delay="1ms"/></onentry>
    <transition event="e"><send event="e" delay="1ms"/><send event="e" delay="1ms"/></transition>
    <transition event="客.line"><script>seat.reply('聞こえる')</script></transition>
  </state>
</scxml>
`), 0o644)
	cmd, log := startSeat(t, "run", "--log-format", "json", f)
	tooBig := guard(t, cmd, 512)
	const full = `<send> with a delay: 10000 delayed events already wait in this session`
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), full) {
		if mib := tooBig(); mib > 0 {
			t.Fatalf("seat grew past %d MiB and was killed, without a line saying %q\n%s", mib, full, log.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line saying %q within 20 s\n%s", full, log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := dialSeat(t, port)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	send(t, c, "もしもし")
	if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || l != "聞こえる\n" {
		t.Fatalf("the peer: %q, %v\n%s", l, err, log.String())
	}
	if mib := tooBig(); mib > 0 {
		t.Fatalf("seat grew past %d MiB", mib)
	}
	lines := strings.Count(log.String(), full)
	if lines != 1 || !strings.Contains(log.String(), f+`:5:56: `+full) {
		t.Errorf("%d lines saying %q; want one, naming the <send> at %s:5:56\n%s", lines, full, f, log.String())
	}
}

// TestSCXMLRaiseLoopSaysWhere: a macrostep that raises events without
// end is stopped (exit 1) with a cause placed at the last transition it
// took, naming the state and the event; its states entered are logged
// for its first microsteps, then summed up in one line (real binary).
// Before, it wrote 100,000 "state" lines, then "the machine did not
// settle: too many microsteps in one macrostep", naming nothing.
func TestSCXMLRaiseLoopSaysWhere(t *testing.T) {
	f := filepath.Join(t.TempDir(), "輪.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" initial="待つ">
  <state id="待つ"><transition target="回る"/></state>
  <state id="回る">
    <onentry><raise event="また"/></onentry>
    <transition event="また" target="回る"/>
  </state>
</scxml>
`), 0o644)
	out, code := runBinary(t, "", "run", "--log-format", "json", f)
	states, summary := 0, ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, `"msg":"state"`):
			states++
		case strings.Contains(l, `"msg":"states entered, not logged one by one"`):
			summary = l
		}
	}
	want := f + `:5:5: the machine did not settle: too many microsteps in one macrostep (100000): the last took a transition of \"回る\" on the event \"また\", into state \"回る\"`
	if code != 1 || !strings.Contains(out, `"msg":"stopped without reaching a final state"`) || !strings.Contains(out, want) {
		t.Errorf("exit %d; want 1 and a cause %s", code, want)
	}
	if states > 200 || !strings.Contains(summary, `"last":"回る"`) || !strings.Contains(summary, `"count":999`) {
		t.Errorf("%d state lines (want at most 200), summary %q", states, summary)
	}
	if t.Failed() {
		if len(out) > 20000 {
			out = out[:10000] + "\n…\n" + out[len(out)-10000:]
		}
		t.Logf("output:\n%s", out)
	}
}

// TestSCXMLInvokedStormSaysWhere: an invoked document that sends its
// parent events without a delay, in a loop, keeps the parent's queue
// from ever emptying; the run is stopped (exit 1) with a cause that says
// so: the events, from the invoked document to its parent, and the
// <send>'s place (real binary). Before, it was blamed on "a <send> to
// itself".
func TestSCXMLInvokedStormSaysWhere(t *testing.T) {
	f := filepath.Join(t.TempDir(), "親.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" initial="聞く">
  <state id="聞く">
    <invoke id="子">
      <content>
        <scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" initial="話す">
          <state id="話す">
            <onentry><send target="#_parent" event="もしもし"/><send event="もう一度"/></onentry>
            <transition event="もう一度" target="話す"/>
          </state>
        </scxml>
      </content>
    </invoke>
  </state>
</scxml>
`), 0o644)
	out, code := runBinary(t, "", "run", "--log-level", "warn", f)
	for _, want := range []string{
		"100000 events handled without the queue ever empty: of the last ",
		` were \"もしもし\" from the document invoked as \"子\" (in state \"話す\") to its parent, sent by the <send> at ` + f + `:7:22`,
		` were \"もう一度\" from the document invoked as \"子\" (in state \"話す\") to itself, sent by the <send> at ` + f + `:7:60`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %s in the output", want)
		}
	}
	if code != 1 || strings.Contains(out, "a <send> to itself with no delay") {
		t.Errorf("exit %d (want 1), or blamed on a <send> to itself", code)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// TestCheckRefusesSpecialFiles: the files an author names (the behavior
// itself, an included file, a device file, a motion script a rule plays)
// are read only if they are regular files: a FIFO given by mistake is
// refused at once instead of blocking seat check or the behavior, and
// /dev/zero is refused instead of read until memory runs out.
func TestCheckRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"管.seatml", "規則.xml", "歩く.yaml"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	withInclude := filepath.Join(dir, "受付.seatml")
	os.WriteFile(withInclude, []byte(`<seatml><general name="受付"/><state name="待機"><rule file="規則.xml"/></state></seatml>`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", filepath.Join(dir, "管.seatml")}, "it is not a regular file (a FIFO)"},
		{[]string{"check", "/dev/zero"}, "it is not a regular file (a device)"},
		{[]string{"check", withInclude}, "規則.xml"},
		{[]string{"check", "--devices", "/dev/zero", "../../examples/touch-wave.seatml"}, "it is not a regular file (a device)"},
	} {
		cmd := exec.Command(os.Args[0], c.args...)
		cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
		out := &syncBuffer{}
		cmd.Stderr = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tooBig := guard(t, cmd, 512)
		err := waitExit(t, cmd, 20*time.Second, out)
		if mib := tooBig(); mib > 0 {
			t.Fatalf("seat %s grew past %d MiB and was killed", strings.Join(c.args, " "), mib)
		}
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(out.String(), c.want) {
			t.Errorf("seat %s: %v, want an error saying %q:\n%s", strings.Join(c.args, " "), err, c.want, out.String())
		}
	}
}

// TestMotionScriptFIFODoesNotBlock: a motion script a rule plays by name
// that is a FIFO (in the scripts directory) is refused with an error the
// script can catch, and the behavior answers its next line; before, the
// read waited for a writer and the behavior stalled.
func TestMotionScriptFIFODoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "動作"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "動作", "歩く.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "歩行.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="歩行"><adaptor name="係員" type="stdio"/></general>
<state name="待機">
  <rule><key>歩いて</key><script>local ok, err = pcall(seat.motion, {scripts = "歩く"}); seat.reply(tostring(err))</script></rule>
  <rule><key>様子</key><message sendto="係員">待機中</message></rule>
</state></seatml>
`), 0o644)
	cmd := exec.Command(os.Args[0], "run", "--scripts", filepath.Join(dir, "動作"), f)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	cmd.Stdin = strings.NewReader("歩いて\n様子\n")
	out, errb := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the defect: a read blocked on the FIFO
		if w, err := os.OpenFile(filepath.Join(dir, "動作", "歩く.yaml"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	if err := waitExit(t, cmd, 20*time.Second, errb); err != nil {
		t.Fatalf("seat run: %v\n%s%s", err, out.String(), errb.String())
	}
	if got := out.String(); !strings.Contains(got, "it is not a regular file (a FIFO)") || !strings.HasSuffix(got, "待機中\n") {
		t.Errorf("the staff got %q, want the FIFO refused, then 待機中", got)
	}
}

// TestSCXMLRunawayCountsTheInputThatStartedIt: a line from an adaptor
// that starts a <send> loop is one of the 100,000 events a burst may
// handle, whether or not it waited in the queue: the run stops after the
// same events as before the queue became the machine's (in state 弐, the
// summary and the storm text unchanged; real binary, input on standard
// input). Handled outside the count, it ran one event longer and stopped
// in 壱. The two <send>s tie; the storm text names them in the order they
// are written (it followed a map's order, and flipped 2 runs in 30).
func TestSCXMLRunawayCountsTheInputThatStartedIt(t *testing.T) {
	f := filepath.Join(t.TempDir(), "嵐.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" name="嵐" initial="始">
  <seat:adaptor name="term" type="stdio"/>
  <state id="始">
    <transition event="term.line" target="壱"><send event="loop"/></transition>
  </state>
  <state id="壱">
    <transition event="loop" target="弐"><send event="loop"/></transition>
  </state>
  <state id="弐">
    <transition event="loop" target="壱"><send event="loop"/></transition>
  </state>
</scxml>
`), 0o644)
	out, code := runBinary(t, "go\n", "run", "--log-format", "json", f)
	for _, want := range []string{
		`"count":99008,"last":"弐"`,
		`100000 events handled without the queue ever empty: of the last 9984 events, 4992 were \"loop\" from the document (in state \"弐\") to itself, sent by the <send> at ` + f + `:7:41; 4992 were \"loop\" from the document (in state \"弐\") to itself, sent by the <send> at ` + f + `:10:41`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %s in the output", want)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if t.Failed() {
		if len(out) > 20000 {
			out = out[:10000] + "\n…\n" + out[len(out)-10000:]
		}
		t.Logf("output:\n%s", out)
	}
}
