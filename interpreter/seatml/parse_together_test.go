package seatml

import (
	"testing"

	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/schema"
)

func TestParseTogetherIsSound(t *testing.T) {
	job := func(src string, expr bool) *luaJob {
		return &luaJob{ch: luadm.NewChunk(src, schema.Pos{File: "t", Line: 2, Col: 1}, expr, 0)}
	}
	valid := []*luaJob{job("x = 1", false), job("return 'a'", false), job("seat.state() == 'a'", true),
		job("for i = 1, 3 do\n  y = i\nend", false), job("a and\n b", true), job("", false)}
	if !parseTogether(valid) {
		t.Fatal("valid chunks rejected")
	}
	for _, bad := range [][]*luaJob{
		{job("x = 1 end do y = 2", false), job("z = 3", false)}, // escapes its block, still parses
		{job("x = 1 end do", false), job("end do y = 2", false)},
		{job("x = 1", false), job("if x then", false)},
		{job("x ==", true), job("y", true)},
		{job("x) local z = (1", true)}, // escapes its parentheses
		{job("return 1\nx = 2", false)},
		{job("s = [[", false), job("]]", false)}, // a long string across chunks
	} {
		if parseTogether(bad) {
			t.Errorf("accepted %q", []string{bad[0].ch.Src})
		}
		for _, j := range bad {
			j.diag = j.ch.Check()
		}
		failed := false
		for _, j := range bad {
			failed = failed || j.diag != nil
		}
		if !failed {
			t.Errorf("%q: no chunk fails on its own either", bad[0].ch.Src)
		}
	}
}
