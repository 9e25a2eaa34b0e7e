package corba

import "fmt"

// CompletionStatus says whether an operation that raised a system
// exception had completed.
type CompletionStatus uint32

// The completion statuses.
const (
	CompletedYes CompletionStatus = iota
	CompletedNo
	CompletedMaybe
)

func (c CompletionStatus) String() string {
	switch c {
	case CompletedYes:
		return "COMPLETED_YES"
	case CompletedNo:
		return "COMPLETED_NO"
	case CompletedMaybe:
		return "COMPLETED_MAYBE"
	}
	return fmt.Sprintf("completion status %d", uint32(c))
}

// SystemException is the body of a SYSTEM_EXCEPTION reply (and of a
// LOC_SYSTEM_EXCEPTION locate reply). It is an error.
type SystemException struct {
	ID        string // "IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0"
	Minor     uint32
	Completed CompletionStatus
}

func (x *SystemException) Error() string {
	return fmt.Sprintf("CORBA system exception %s (minor %#x, %v)", x.ID, x.Minor, x.Completed)
}

// ReadSystemException reads a system exception.
func (d *Decoder) ReadSystemException() *SystemException {
	x := &SystemException{ID: d.ReadString("exception id"), Minor: d.ReadULong()}
	at := d.pos
	x.Completed = CompletionStatus(d.ReadULong())
	if d.Err() == nil && x.Completed > CompletedMaybe {
		d.failAt(at, false, "unknown completion status %d", uint32(x.Completed))
	}
	if d.Err() != nil {
		return nil
	}
	return x
}

// WriteSystemException writes a system exception.
func (e *Encoder) WriteSystemException(x *SystemException) {
	e.WriteString(x.ID)
	e.WriteULong(x.Minor)
	e.WriteULong(uint32(x.Completed))
}

// Exception returns the error a Reply or LocateReply reports, read from
// its body: a *SystemException for SYSTEM_EXCEPTION and
// LOC_SYSTEM_EXCEPTION, a *UserExceptionError for USER_EXCEPTION, a
// *ForwardError for the forwards. It returns nil for the other statuses
// and other messages; a body that cannot be read gives its decoding error.
func (m *Message) Exception() error {
	d := m.Body()
	var err error
	switch {
	case m.Reply != nil && m.Reply.Status == ReplySystemException,
		m.LocateReply != nil && m.LocateReply.Status == LocateSystemException:
		if x := d.ReadSystemException(); x != nil {
			err = x
		}
	case m.Reply != nil && m.Reply.Status == ReplyUserException:
		err = &UserExceptionError{ID: d.ReadString("exception id"), Members: d}
	case m.Reply != nil && (m.Reply.Status == ReplyLocationForward || m.Reply.Status == ReplyLocationForwardPerm),
		m.LocateReply != nil && (m.LocateReply.Status == LocateObjectForward || m.LocateReply.Status == LocateObjectForwardPerm):
		err = &ForwardError{IOR: d.ReadIOR(),
			Permanent: m.Reply != nil && m.Reply.Status == ReplyLocationForwardPerm || m.LocateReply != nil && m.LocateReply.Status == LocateObjectForwardPerm}
	default:
		return nil
	}
	if derr := d.Err(); derr != nil {
		return fmt.Errorf("giop: %w", derr)
	}
	return err
}

// UserExceptionError is a USER_EXCEPTION reply: the exception's repository
// id, and a Decoder positioned at its members, which only the caller, who
// knows the exception's type, can read.
type UserExceptionError struct {
	ID      string
	Members *Decoder
}

func (x *UserExceptionError) Error() string { return "CORBA user exception " + x.ID }

// ForwardError is a LOCATION_FORWARD reply or an OBJECT_FORWARD locate
// reply: the request is to be sent again to IOR.
type ForwardError struct {
	IOR       *IOR
	Permanent bool
}

func (x *ForwardError) Error() string {
	return fmt.Sprintf("location forward to %s", x.IOR.TypeID)
}
