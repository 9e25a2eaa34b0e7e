package bench

import (
	"testing"

	"github.com/seatml/seat/adaptors"
)

// luaStrings is a rule whose script does what chat behaviors do with a
// line: split it with a pattern, escape it with gsub, walk its words with
// gmatch, and build a reply with format and table.concat.
const luaStrings = `<seatml><general name="strings"><script>last = ""</script></general>
<state name="a"><rule><key>say</key><script><![CDATA[
local cmd, rest = event.text:match("^(%a+)%s*(.*)$")
local safe = rest:gsub("<", "&lt;")
local words = {}
for w in safe:gmatch("%S+") do words[#words + 1] = w:upper() end
last = string.format("%s: %d words, %s", cmd, #words, table.concat(words, ","))
]]></script></rule></state>
</seatml>`

// BenchmarkLuaStrings is one event through that rule: the string library's
// cost on the event path.
func BenchmarkLuaStrings(b *testing.B) {
	m := machine(b, luaStrings)
	ev := adaptors.Event{Source: "chat", Text: "say hello <world> from the robot"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Dispatch(ev)
	}
}
