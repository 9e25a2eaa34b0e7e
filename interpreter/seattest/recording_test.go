package seattest

import (
	"strings"
	"testing"

	"github.com/seatml/seat/interpreter/record"
)

const twoBehaviors = `{"t":0,"kind":"recording"}
{"t":0.001,"kind":"start","behavior":"kiosk","file":"kiosk.seatml"}
{"t":0.002,"kind":"start","behavior":"robot","file":"robot.seatml"}
{"t":0.003,"kind":"state","behavior":"kiosk","state":"attract"}
{"t":0.003,"kind":"state","behavior":"robot","state":"idle"}
{"t":1.003,"kind":"in","behavior":"robot","source":"memory","key":"Head/Touch","text":"1"}
{"t":1.5,"kind":"in","behavior":"kiosk","source":"visitor","peer":"a:1","text":"hello"}
{"t":1.5001,"kind":"fire","behavior":"kiosk","at":"kiosk.seatml:49"}
{"t":1.5002,"kind":"state","behavior":"kiosk","state":"menu"}
{"t":1.5003,"kind":"out","behavior":"kiosk","source":"visitor","text":"Visitor #1"}
{"t":21.5004,"kind":"timer","behavior":"kiosk","timer":"timeout","state":"menu"}
{"t":21.5005,"kind":"out","behavior":"kiosk","source":"visitor","text":"Still there?"}
{"t":22,"kind":"in","behavior":"kiosk","source":"visitor","peer":"b:2","text":"map"}
`

// TestFromRecording: one behavior's part of a recording becomes a
// transcript: time from its initial state, the clock moved to a timer
// before its message, a second peer named, device events left out.
func TestFromRecording(t *testing.T) {
	lines, _, err := record.Read("r.jsonl", strings.NewReader(twoBehaviors))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromRecording("r.jsonl", lines, ""); err == nil || !strings.Contains(err.Error(), "holds 2 behaviors (kiosk, robot): choose one with --name") {
		t.Errorf("no name: %v", err)
	}
	if _, err := FromRecording("r.jsonl", lines, "kiosc"); err == nil || !strings.Contains(err.Error(), `did you mean "kiosk"?`) {
		t.Errorf("bad name: %v", err)
	}
	tr, err := FromRecording("r.jsonl", lines, "kiosk")
	if err != nil {
		t.Fatal(err)
	}
	want := `behavior: kiosk.seatml
= attract
+1.497s
visitor@a:1> hello
visitor< Visitor #1
= menu
+20.0004s
visitor< Still there?
+499.6ms
visitor@b:2> map
`
	if got := Format(tr); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if r := tr.Steps[3].Recorded; r == nil || r.Rule != "kiosk.seatml:49" || r.Line != 10 || r.T.String() != "1.4973s" {
		t.Errorf("recorded rule of the first message: %+v", r)
	}
	// A behavior that only had device events has nothing to replay.
	if _, err := FromRecording("r.jsonl", lines, "robot"); err == nil || !strings.Contains(err.Error(), `behavior "robot" did nothing`) {
		t.Errorf("robot: %v", err)
	}
	// The transcript reads back as it was written.
	back, diags := Parse("r.seattest", []byte(Format(tr)))
	if diags.HasErrors() || len(back.Steps) != len(tr.Steps) || back.Steps[8].Peer != "b:2" {
		t.Errorf("read back: %v %+v", diags, back)
	}
}
