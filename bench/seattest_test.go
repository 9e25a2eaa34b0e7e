package bench

import (
	"testing"

	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/seattest"
)

// BenchmarkSeatTestHour is seat test's "+1h" on a behavior whose onexec
// runs at 1000 Hz: 3.6 million ticks, every one run, then a check that
// all ran. One op is the whole transcript (goal: well under the 10 s step
// limit).
func BenchmarkSeatTestHour(b *testing.B) {
	prog, diags := seatml.LoadBytes("tick.seatml", []byte(`<seatml><general name="t" rate="1000"><adaptor name="io" type="stdio"/><script>n = 0</script></general>
<state name="s"><onexec><script>n = n + 1</script></onexec>
<rule><key>count</key><script sendto="io">return tostring(n)</script></rule></state></seatml>`), seatml.LoadOptions{})
	if prog == nil || diags.HasErrors() {
		b.Fatal(diags)
	}
	tr, diags := seattest.Parse("tick.seattest", []byte("+1h\n> count\n< 3600000\n"))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	for b.Loop() {
		res, err := seattest.RunProgram(tr, prog, seattest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Failure != nil {
			b.Fatalf("%+v", res.Failure)
		}
	}
}
