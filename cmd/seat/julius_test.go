package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJuliusResultsOnTheRealBinary: a Julius/OpenHRI result (the shared
// fixtures, sent as one line over a socket) is tried hypothesis by
// hypothesis in rank order against the keys, skipping those under
// general@scorelimit; the rule sees the hypothesis taken and its score;
// a result with none taken reaches the data rules as its XML.
func TestJuliusResultsOnTheRealBinary(t *testing.T) {
	port := freePortNumber(t)
	file := filepath.Join(t.TempDir(), "julius.seatml")
	os.WriteFile(file, []byte(`<seatml><general name="julius" scorelimit="0.5">
  <adaptor name="音声" type="socket" role="server" port="`+port+`"/>
</general>
<state name="s">
  <rule source="音声"><key>はい</key><script>seat.reply("はい " .. event.confidence)</script></rule>
  <rule source="音声"><key>天気</key><script>seat.reply("晴れです " .. event.text)</script></rule>
  <rule source="音声"><cond>event.text:sub(1, 5) == "&lt;?xml"</cond><script>seat.reply("もう一度お願いします")</script></rule>
</state></seatml>`), 0o644)
	_, log := startSeat(t, "run", file)
	waitForWithin(t, 30*time.Second, func() bool { return strings.Contains(log.String(), "listening") })
	conn, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, c := range []struct{ fixture, want string }{
		{"nbest.xml", "晴れです 天気,0.901"}, // rank 1 (listed second in the file)
		{"rejected.xml", "もう一度お願いします"}, // both under 0.5
	} {
		b, err := os.ReadFile(filepath.Join("../../testdata/julius", c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		conn.Write([]byte(strings.ReplaceAll(string(b), "\n", " ") + "\n"))
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := r.ReadString('\n')
		if got := strings.TrimSpace(line); err != nil || got != c.want {
			t.Errorf("%s: answered %q (%v), want %q", c.fixture, got, err, c.want)
		}
	}
	// Rank 1 under the limit, rank 2 taken.
	conn.Write([]byte(`<?xml version="1.0"?><listenText><data rank="1" score="0.4" text="天気"/><data rank="2" score="0.8" text="はい"/></listenText>` + "\n"))
	if line, err := r.ReadString('\n'); strings.TrimSpace(line) != "はい 0.8" {
		t.Errorf("answered %q (%v), want はい 0.8", line, err)
	}
}
