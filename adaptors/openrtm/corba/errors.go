package corba

import (
	"errors"
	"fmt"
)

// Error is a decoding error: the part being decoded, the offset where it
// went wrong (from the start of the message, IOR or payload the decoder was
// given) and what is wrong there.
type Error struct {
	Part   string // "request header", "TypeCode", ...; may be empty
	Offset int
	Msg    string
	// Unsupported is set when the input is valid CORBA that this package
	// does not handle; errors.Is(err, ErrUnsupported) then holds.
	Unsupported bool
}

func (e *Error) Error() string {
	if e.Part == "" {
		return fmt.Sprintf("at offset %#x: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("%s at offset %#x: %s", e.Part, e.Offset, e.Msg)
}

// Is makes errors.Is(err, ErrUnsupported) hold for an unsupported feature.
func (e *Error) Is(target error) bool { return e.Unsupported && target == ErrUnsupported }

// ErrUnsupported is matched (errors.Is) by the errors for valid CORBA this
// package does not handle: a TypeCode kind, a GIOP version, a
// TargetAddress kind.
var ErrUnsupported = errors.New("not supported")
