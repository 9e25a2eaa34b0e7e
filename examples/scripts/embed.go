// Package scripts holds a copy of the motion scripts shipped in
// examples/scripts, built into seat, so that seat motion play Nod works
// from any directory after go install.
package scripts

import "embed"

// FS holds the shipped motion scripts (*.yaml, at its root) and the
// license of those copied from NUbots (LICENSE-NUbots), which travels
// with them.
//
//go:embed *.yaml LICENSE-NUbots
var FS embed.FS
