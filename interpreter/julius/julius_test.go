package julius

import (
	"os"
	"reflect"
	"testing"
)

// TestParse: a result's hypotheses in rank order, from the shared
// fixtures; a score that is not a number is 0; text that is not a result
// is told apart.
func TestParse(t *testing.T) {
	b, err := os.ReadFile("../../testdata/julius/nbest.xml")
	if err != nil {
		t.Fatal(err)
	}
	if !IsResult(string(b)) || IsResult("はい,0.93") || IsResult("hello <?xml") {
		t.Error("IsResult tells results from lines wrongly")
	}
	got, err := Parse(string(b))
	want := []Hypothesis{{1, 0.901, "天気"}, {2, 0.874, "はい"}, {3, 0.312, "さようなら"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Parse = %v, %v; want %v", got, err, want)
	}
	got, err = Parse(`<?xml version="1.0"?><listenText><data rank="1" score="high" text=" yes "/><data text="no"/></listenText>`)
	if err != nil || len(got) != 2 || got[0] != (Hypothesis{1, 0, "yes"}) || got[1].Text != "no" {
		t.Errorf("Parse = %v, %v", got, err)
	}
	got, err = Parse(`<?xml version="1.0"?><listenText><data rank="1" score="0.5" text="yes"/><data`)
	if err == nil || len(got) != 1 {
		t.Errorf("a cut document: %v, %v", got, err)
	}
}
