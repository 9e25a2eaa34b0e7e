package main

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// TestReceptionInBothLanguages runs examples/reception.seatml (nested
// SEATML) and examples/reception.scxml (its SCXML twin) on the real
// binary over TCP, in Japanese: a visitor's dialogue, the staff console
// running the simulated robot's battery low (the watch region interrupts
// the dialogue and turns the chest LED red), the visitor answered while
// it waits, and the dialogue resumed by its deep history where it was
// (確認, so はい answers the pending question) once the battery is charged.
func TestReceptionInBothLanguages(t *testing.T) {
	for _, file := range []string{"reception.seatml", "reception.scxml"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			vport, sport := freePortNumber(t), freePortNumber(t)
			_, log := startSeat(t, "run", "--log-format", "json", "--set", "音声.port="+vport, "--set", "係員.port="+sport, "../../examples/"+file)
			visitor, staff := dialSeat(t, vport), dialSeat(t, sport)
			for _, c := range []net.Conn{visitor, staff} {
				c.SetDeadline(time.Now().Add(20 * time.Second))
			}
			vr, sr := bufio.NewReader(visitor), bufio.NewReader(staff)
			read := func(r *bufio.Reader, who string) string {
				t.Helper()
				l, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("%s: %v\n%s", who, err, log.String())
				}
				return strings.TrimSuffix(l, "\n")
			}
			exchange := func(say string, want ...string) {
				t.Helper()
				if say != "" {
					send(t, visitor, say)
				}
				for _, w := range want {
					if got := read(vr, "visitor"); got != w {
						t.Fatalf("after %q: visitor got %q, want %q\n%s", say, got, w, log.String())
					}
				}
			}
			// status polls the staff console's 様子 until it reads want:
			// the LED follows at the next control cycle.
			status := func(want string) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for {
					send(t, staff, "様子")
					got := read(sr, "staff")
					if got == want {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("様子: %q, want %q", got, want)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			exchange("こんにちは,0.93", "いらっしゃいませ。本日はどのようなご用件でしょうか。")
			exchange("山田さんと約束があります,0.88", "山田様ですね。お約束の方でよろしいですか。")
			status("確認 電池1.0 赤0")
			send(t, staff, "電池 0.1")
			exchange("", "電池が少なくなりました。充電の間、少々お待ちください。")
			status("中断 電池0.1 赤1")
			exchange("はい", "ただいま対応できません。少々お待ちください。")
			send(t, staff, "電池 0.9")
			exchange("", "お待たせしました。")
			status("確認 電池0.9 赤0")
			exchange("はい,0.97", "山田様をお呼びします。少々お待ちください。", "いらっしゃいませ。本日はどのようなご用件でしょうか。")
			exchange("さようなら", "ありがとうございました。お気をつけて。")
			status("待機 電池0.9 赤0")
		})
	}
}
