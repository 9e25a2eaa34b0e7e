package monitor

import (
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors/web/webtest"
	"github.com/seatml/seat/interpreter/manager"
)

// The behavior of TestPageLayoutInBrowser: its name, states and adaptors
// are Japanese, the state it moves to has a long name.
const (
	layoutName  = "受付ロボット"
	layoutLong  = "いらっしゃいませ・ご用件をお伺いしています"
	layoutInput = "音声認識サーバーからの入力"
)

var layoutSrc = `<seatml><general name="` + layoutName + `">
<adaptor name="` + layoutInput + `" type="socket" role="server" port="0"/>
<adaptor name="操作パネル" type="web" port="0"/>
<adaptor name="発話とジェスチャーの指令" type="socket" role="server" port="0"/>
</general>
<state name="待機"><rule source="` + layoutInput + `"><key>こんにちは</key><statetransition>` + layoutLong + `</statetransition></rule></state>
<state name="` + layoutLong + `"><rule source="` + layoutInput + `"><key>さようなら</key><statetransition>待機</statetransition></rule></state>
</seatml>`

// TestPageLayoutInBrowser opens the monitor in headless Chromium on a
// 1024x768, a 1920x1080 and a 640x480 screen, with a behavior whose name,
// states and adaptors are Japanese, and checks from the page's geometry
// what a user sees (issue 21 #17: the adaptor table was cut by its column
// at 1200 px and below, its scroll bar under the log):
//   - the page never scrolls sideways, and nothing around the adaptor
//     table does: the table fits its own box, or that box, holding the
//     table alone, scrolls (it does at 640 px);
//   - at 1920 px the table is whole on the screen, no cell cut;
//   - the Japanese state name is shown as the state, drawn with a font
//     that has Japanese glyphs (not boxes), and every state's name is
//     inside its box in the graph.
//
// The screenshots are kept with go test -artifacts.
func TestPageLayoutInBrowser(t *testing.T) {
	b := webtest.Start(t)
	m := startMonitored(t, layoutName, layoutSrc)
	mg, info, srv := m.mg, m.info, m.srv

	// A visitor speaks: the behavior moves to the long state, and the
	// table and the log have something in them.
	var input string
	for _, a := range info.Adaptors {
		if a.Name == layoutInput {
			input = a.Addr
		}
	}
	conn, err := net.DialTimeout("tcp", input, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, "こんにちは")
	deadline := time.Now().Add(10 * time.Second)
	for mg.Machine(layoutName).CurrentState() != layoutLong {
		if time.Now().After(deadline) {
			t.Fatalf("still in %q 10 s after こんにちは", mg.Machine(layoutName).CurrentState())
		}
		time.Sleep(5 * time.Millisecond)
	}

	japanese := japaneseFonts(t)
	for _, size := range []struct{ w, h int }{{1024, 768}, {1920, 1080}, {640, 480}} {
		{
			at := fmt.Sprintf("%dx%d", size.w, size.h)
			b.SetViewport(size.w, size.h)
			b.Navigate(srv.URL + "/monitor/")
			sec := `document.querySelector('section.behavior')`
			b.WaitFor("the adaptor table", sec+`.querySelectorAll('table.adaptors tbody tr').length == 3`)
			b.WaitFor("the visitor counted", sec+`.querySelector('table.adaptors tbody td:nth-child(5)').textContent == "1"`) // the visitor's connection
			b.WaitFor("the graph", sec+`.querySelector('.graph svg g.node.current') != null`)
			b.WaitFor("laid out", `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
			png := b.Screenshot()
			if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "monitor-"+at+".png"), png, 0o644); err != nil {
				t.Error(err)
			}

			// The page does not scroll sideways.
			if got := b.Eval(`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`).([]any); got[0].(float64) > got[1].(float64) {
				t.Errorf("%s: the page is %v px wide on a %v px screen: it scrolls sideways", at, got[0], got[1])
			}
			// Nothing around the table's box overflows (and so clips or
			// scrolls it): only the box itself may scroll.
			overflowing := b.Eval(`(() => {
				const out = [];
				for (let e = document.querySelector('table.adaptors').parentElement.parentElement; e && e !== document.documentElement; e = e.parentElement)
					if (e.scrollWidth > e.clientWidth) out.push(e.tagName.toLowerCase() + "." + e.className + ": " + e.scrollWidth + " > " + e.clientWidth);
				return out;
			})()`).([]any)
			if len(overflowing) > 0 {
				t.Errorf("%s: the adaptor table overflows what holds it: %v", at, overflowing)
			}
			box := b.Eval(`(() => {
				const t = document.querySelector('table.adaptors'), box = t.parentElement;
				const r = box.getBoundingClientRect();
				return {scroll: box.scrollWidth, client: box.clientWidth, overflow: getComputedStyle(box).overflowX, others: box.children.length - 1,
					left: r.left, right: r.right, screen: innerWidth,
					cut: Array.from(t.querySelectorAll('th, td')).filter(c => c.scrollWidth > c.clientWidth || c.getBoundingClientRect().right > r.right + 0.5).map(c => c.textContent)};
			})()`).(map[string]any)
			fits := box["scroll"].(float64) <= box["client"].(float64)
			if others := box["others"].(float64); !fits && others > 0 {
				// A box shared with the log: the table is cut at the
				// column's edge, and its scroll bar is below the log.
				t.Errorf("%s: the adaptor table (%v px) is cut at %v px by a box it shares with %v other elements", at, box["scroll"], box["client"], others)
			}
			if !fits && box["overflow"] != "auto" && box["overflow"] != "scroll" {
				t.Errorf("%s: the adaptor table is %v px wide in a box of %v px that does not scroll (overflow-x: %v)", at, box["scroll"], box["client"], box["overflow"])
			}
			if box["left"].(float64) < 0 || box["right"].(float64) > box["screen"].(float64) {
				t.Errorf("%s: the adaptor table's box spans %v to %v px on a %v px screen", at, box["left"], box["right"], box["screen"])
			}
			if size.w >= 1920 {
				if !fits {
					t.Errorf("%s: the adaptor table (%v px) does not fit its box (%v px) on a %d px screen", at, box["scroll"], box["client"], size.w)
				}
				if cut := box["cut"].([]any); len(cut) > 0 {
					t.Errorf("%s: cells cut: %q", at, cut)
				}
			}

			// The Japanese state name: shown as the state, in a font with
			// Japanese glyphs, inside its box in the graph.
			if got := b.Eval(`(() => { const e = document.querySelector('.status .state b'); const r = e.getBoundingClientRect(); return [e.textContent, r.width, r.height]; })()`).([]any); got[0] != layoutLong || got[1].(float64) <= 0 || got[2].(float64) <= 0 {
				t.Errorf("%s: the state shown is %q, %v x %v px", at, got[0], got[1], got[2])
			}
			if japanese != nil {
				fonts := b.Fonts(".status .state b")
				drawn := 0
				for family, glyphs := range fonts {
					if japanese[family] {
						drawn += glyphs
					}
				}
				if want := utf8.RuneCountInString(layoutLong); drawn < want {
					t.Errorf("%s: of the %d characters of the state's name, %d were drawn with a font that has Japanese (fonts used: %v; Japanese fonts installed: %d)", at, want, drawn, fonts, len(japanese))
				}
			}
			outside := b.Eval(`Array.from(document.querySelectorAll('.graph g.node')).filter(n => {
				const text = n.querySelector('text'), shape = n.querySelector('path, polygon, ellipse');
				if (!text || !shape) return false;
				const t = text.getBoundingClientRect(), s = shape.getBoundingClientRect();
				return t.width <= 0 || t.left < s.left || t.right > s.right;
			}).map(n => n.querySelector('title').textContent)`).([]any)
			if len(outside) > 0 {
				t.Errorf("%s: state names drawn outside their box in the graph: %q", at, outside)
			}
			if got := b.Eval(`document.querySelector('.graph g.node.current title').textContent`); got != layoutLong {
				t.Errorf("%s: the graph highlights %q", at, got)
			}
		}
	}
}

// monitored is a behavior running under a manager with a monitor, whose
// page is served.
type monitored struct {
	file string // the behavior's file
	mon  *Monitor
	mg   *manager.Manager
	info manager.Info
	srv  *httptest.Server
}

// startMonitored starts the behavior src, written as 受付.seatml, under a
// manager with a monitor, and serves the monitor's page. All stop when
// the test ends.
func startMonitored(t *testing.T, name, src string) monitored {
	t.Helper()
	m := monitored{file: filepath.Join(t.TempDir(), "受付.seatml"), mon: New(zap.NewNop())}
	if err := os.WriteFile(m.file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m.mg = manager.New(manager.Options{Log: zap.NewNop(), Observe: m.mon.Observe})
	t.Cleanup(m.mg.StopAll)
	if _, err := m.mg.Load(m.file); err != nil {
		t.Fatal(err)
	}
	var err error
	if m.info, err = m.mg.Start(name); err != nil {
		t.Fatal(err)
	}
	m.srv = httptest.NewServer(m.mon.Handler(m.mg))
	t.Cleanup(m.srv.Close)
	return m
}

// japaneseFonts returns the font families fontconfig says cover Japanese,
// as Chromium names them. With none installed it returns nil, and the test
// says so; CI (SEAT_REQUIRE_BROWSER) installs fonts-noto-cjk and fails
// without it.
func japaneseFonts(t *testing.T) map[string]bool {
	out, err := exec.Command("fc-list", ":lang=ja", "family").Output()
	if err != nil {
		t.Logf("fc-list: %v: which fonts draw Japanese is not checked", err)
		return nil
	}
	families := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		for _, name := range strings.Split(line, ",") {
			if name = strings.TrimSpace(name); name != "" {
				families[name] = true
			}
		}
	}
	if len(families) == 0 {
		if os.Getenv("SEAT_REQUIRE_BROWSER") != "" {
			t.Fatal("no font with Japanese is installed and SEAT_REQUIRE_BROWSER is set: screenshots would show boxes (apt-get install fonts-noto-cjk)")
		}
		t.Log("no font with Japanese is installed: Japanese is drawn as boxes, and that is not checked (apt-get install fonts-noto-cjk; CI sets SEAT_REQUIRE_BROWSER=1)")
		return nil
	}
	return families
}
