// Package all imports every adaptor kind seat has: the one list that
// cmd/seat, seat test, seat check and the tests share (the compiler
// imports it), so that what a behavior may declare never depends on
// what a binary linked. A new transport is its package plus one line
// here (docs/architecture.md, "Adding an adaptor kind").
package all

import (
	_ "github.com/seatml/seat/adaptors/mqtt"
	_ "github.com/seatml/seat/adaptors/openrtm"
	_ "github.com/seatml/seat/adaptors/ros"
	_ "github.com/seatml/seat/adaptors/socket"
	_ "github.com/seatml/seat/adaptors/speech"
	_ "github.com/seatml/seat/adaptors/stdio"
	_ "github.com/seatml/seat/adaptors/web"
)
