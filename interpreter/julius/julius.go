// Package julius reads a speech recognizer's result as Julius and
// OpenHRI's JuliusRTC send it: an XML document whose <data> elements are
// the n-best hypotheses, each with its rank, score and text:
//
//	<?xml version="1.0" encoding="UTF-8"?>
//	<listenText state="Success">
//	  <data rank="1" score="0.93" text="はい"/>
//	  <data rank="2" score="0.41" text="さい"/>
//	</listenText>
//
// eSEAT tries the hypotheses in rank order against the current state's
// keys, skipping those scored under its scorelimit (docs/speech.md).
package julius

import (
	"encoding/xml"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Hypothesis is one of a result's n-best hypotheses.
type Hypothesis struct {
	Rank  int
	Score float64
	Text  string
}

// IsResult says whether an event's text is an XML document, as eSEAT
// tells a Julius result from a line of text.
func IsResult(text string) bool {
	return strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "<?xml")
}

// Parse reads a result's hypotheses, in rank order (a rank that is not a
// number comes last, in document order; a score that is not a number is
// 0, as eSEAT takes it).
func Parse(text string) ([]Hypothesis, error) {
	d := xml.NewDecoder(strings.NewReader(text))
	d.Strict = false
	var hyps []Hypothesis
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return hyps, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "data" {
			continue
		}
		h := Hypothesis{Rank: int(^uint(0) >> 1)}
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "rank":
				if n, err := strconv.Atoi(strings.TrimSpace(a.Value)); err == nil {
					h.Rank = n
				}
			case "score":
				h.Score, _ = strconv.ParseFloat(strings.TrimSpace(a.Value), 64)
			case "text":
				h.Text = strings.TrimSpace(a.Value)
			}
		}
		hyps = append(hyps, h)
	}
	sort.SliceStable(hyps, func(i, j int) bool { return hyps[i].Rank < hyps[j].Rank })
	return hyps, nil
}

// Try offers take a result's hypotheses in rank order, skipping those
// scored under limit or without text, until take takes one; it reports
// whether one was taken. A document cut short is tried as far as it goes,
// and its error returned too.
func Try(text string, limit float64, take func(h Hypothesis) bool) (bool, error) {
	hyps, err := Parse(text)
	for _, h := range hyps {
		if h.Score >= limit && h.Text != "" && take(h) {
			return true, err
		}
	}
	return false, err
}
