package interpreter

import (
	"bufio"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/interpreter/seatml"
)

// TestKioskExample drives examples/kiosk.seatml over TCP through a whole
// visit: greeting, a ticket purchase, help entered with push and left with
// pop, timeouts on the fake clock, and goodbye.
func TestKioskExample(t *testing.T) {
	data, err := os.ReadFile("../examples/kiosk.seatml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(data), `port="5001"`, `port="0"`, 1)
	h := start(t, src)
	c, err := net.DialTimeout("tcp", addrOf(t, h, "visitor"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	expect := func(what string, want ...string) {
		t.Helper()
		var got []string
		for range want {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v after %q", what, err, got)
			}
			got = append(got, strings.TrimSuffix(line, "\n"))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", what, diff)
		}
	}
	say := func(text string) {
		t.Helper()
		if _, err := c.Write([]byte(text + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	// The visitor is welcomed when it connects (onconnect), not before.
	expect("onconnect", "Welcome! Say hello to start.")
	h.advance(30 * time.Second)
	expect("attract timeout", "Welcome! Say hello to start.")
	say("hello there")
	expect("menu", "Visitor #1: tickets, map, or help?")
	say("map")
	expect("map", "You are here: the main hall. Exhibits are upstairs.")
	say("what?")
	expect("menu data rule", "Sorry, I did not get that. Say tickets, map, or help.")
	say("tickets")
	expect("tickets", "How many tickets? (1 to 9)")
	say("2")
	expect("price", "2 ticket(s) cost 25.00 EUR. Confirm? yes/no")
	say("help")
	expect("help", "Help: say tickets, map or bye. Say back to return.")
	say("back")
	say("yes")
	expect("after pop, confirm", "Printed. Tickets sold today: 2", "Visitor #1: tickets, map, or help?")
	if got := h.state(); got != "menu" {
		t.Fatalf("state %q, want menu", got)
	}
	h.advance(20 * time.Second)
	expect("menu timeout", "Still there? Say tickets or map.")
	say("help")
	expect("help again", "Help: say tickets, map or bye. Say back to return.")
	h.sync()
	h.advance(10 * time.Second) // help times out and pops back to menu
	expect("help timeout pops to the menu, whose onentry runs", "Visitor #1: tickets, map, or help?")
	say("bye")
	expect("bye", "Goodbye, enjoy the museum!")
	// A visitor who leaves in the middle of a purchase resets the kiosk:
	// the next one is welcomed from attract.
	say("hi")
	expect("menu again", "Visitor #2: tickets, map, or help?")
	say("tickets")
	expect("tickets again", "How many tickets? (1 to 9)")
	c.Close()
	h.eventually("attract after the visitor left", func() bool { return h.m.State() == "attract" })
	c2, err := net.DialTimeout("tcp", addrOf(t, h, "visitor"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetDeadline(time.Now().Add(30 * time.Second))
	if line, err := bufio.NewReader(c2).ReadString('\n'); err != nil || line != "Welcome! Say hello to start.\n" {
		t.Fatalf("next visitor got %q (%v)", line, err)
	}
}

// TestReceptionExample drives examples/reception.seatml, the Japanese
// reception dialogue, over TCP: Japanese keys, alternatives, optional
// parts, a \p{Han} pattern, speech results with a confidence after the
// comma, Japanese state and adaptor names, global rules and timeouts.
func TestReceptionExample(t *testing.T) {
	data, err := os.ReadFile("../examples/reception.seatml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(data), `port="5004"`, `port="0"`, 1)
	src = strings.Replace(src, `port="5007"`, `port="0"`, 1)
	prog, _, tweak := loadWithDevices(t, src, seatml.LoadOptions{})
	h := startProgram(t, prog, tweak)
	if len(h.m.prog.Diagnostics) != 0 {
		t.Errorf("diagnostics: %v", h.m.prog.Diagnostics)
	}
	c, err := net.DialTimeout("tcp", addrOf(t, h, "音声"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	exchange := func(say string, want ...string) {
		t.Helper()
		if say != "" {
			c.Write([]byte(say + "\n"))
		}
		for _, w := range want {
			line, err := r.ReadString('\n')
			if err != nil || strings.TrimSuffix(line, "\n") != w {
				t.Fatalf("after %q: got %q (%v), want %q", say, line, err, w)
			}
		}
	}
	h.waitLog("client connected")
	h.advance(60 * time.Second)
	exchange("", "いらっしゃいませ。ご用件をどうぞ。")
	exchange("こんにちは,0.95", "いらっしゃいませ。本日はどのようなご用件でしょうか。")
	exchange("展示を見たい", "展示室は二階です。エレベーターは左手にございます。")
	exchange("ふにゃふにゃ", "申し訳ありません、聞き取れませんでした。もう一度お願いします。")
	exchange("山田さんと約束があります,0.91", "山田様ですね。お約束の方でよろしいですか。")
	if got := h.state(); got != "確認" {
		t.Fatalf("state %q, want 確認", got)
	}
	exchange("トイレはどこですか", "お手洗いは廊下の突き当たり、右側です。") // global, any state
	exchange("はい,0.88", "山田様をお呼びします。少々お待ちください。", "いらっしゃいませ。本日はどのようなご用件でしょうか。")
	exchange("鈴木さんに会いに来ました", "鈴木様ですね。お約束の方でよろしいですか。")
	h.advance(15 * time.Second)
	exchange("", "お返事がないので、最初に戻ります。")
	if got := h.state(); got != "待機" {
		t.Fatalf("state %q after the timeout, want 待機", got)
	}
	exchange("おはようございます", "いらっしゃいませ。本日はどのようなご用件でしょうか。")
	exchange("さようなら", "ありがとうございました。お気をつけて。")
	if got := h.state(); got != "待機" {
		t.Fatalf("state %q, want 待機", got)
	}
}

// TestGreeterExample drives examples/greeter.seatml over TCP: a greeting
// on connect naming the peer, a conversation, and back to idle when the
// visitor leaves in the middle of it.
func TestGreeterExample(t *testing.T) {
	data, err := os.ReadFile("../examples/greeter.seatml")
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, strings.Replace(string(data), `port="5000"`, `port="0"`, 1))
	c, err := net.DialTimeout("tcp", addrOf(t, h, "chat"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	exchange := func(say, want string) {
		t.Helper()
		if say != "" {
			c.Write([]byte(say + "\n"))
		}
		if line, err := r.ReadString('\n'); err != nil || line != want+"\n" {
			t.Fatalf("after %q: %q (%v), want %q", say, line, err, want)
		}
	}
	exchange("", "Hi "+c.LocalAddr().String()+"! Say hello.")
	exchange("hi", "Hello, stranger! (#1)")
	exchange("how are you", "fine, thank you")
	if got := h.state(); got != "talking" {
		t.Fatalf("state %q", got)
	}
	c.Close()
	h.eventually("idle after the visitor left", func() bool { return h.m.State() == "idle" })
}
