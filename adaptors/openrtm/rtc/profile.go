package rtc

import (
	"crypto/rand"
	"fmt"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// ReturnCode is RTC::ReturnCode_t, what most RTC operations return.
type ReturnCode uint32

// The return codes.
const (
	OK ReturnCode = iota
	Error
	BadParameter
	Unsupported
	OutOfResources
	PreconditionNotMet
)

var returnCodes = [...]string{"RTC_OK", "RTC_ERROR", "BAD_PARAMETER", "UNSUPPORTED", "OUT_OF_RESOURCES", "PRECONDITION_NOT_MET"}

func (r ReturnCode) String() string { return enumName(returnCodes[:], uint32(r), "ReturnCode_t") }

// enumName is an enumerator's name, or the type and value when out of
// range.
func enumName(names []string, v uint32, typ string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// LifeCycleState is RTC::LifeCycleState, a component's state in an
// execution context.
type LifeCycleState uint32

// The states.
const (
	Created LifeCycleState = iota
	Inactive
	Active
	ErrorState
)

var states = [...]string{"CREATED", "INACTIVE", "ACTIVE", "ERROR"}

func (s LifeCycleState) String() string { return enumName(states[:], uint32(s), "LifeCycleState") }

// PortStatus is OpenRTM::PortStatus and RTC::PortStatus (the same
// enumerators): what put, push, get and pull return.
type PortStatus uint32

// The port statuses.
const (
	PortOK PortStatus = iota
	PortError
	BufferFull
	BufferEmpty
	BufferTimeout
	UnknownError
)

var portStatuses = [...]string{"PORT_OK", "PORT_ERROR", "BUFFER_FULL", "BUFFER_EMPTY", "BUFFER_TIMEOUT", "UNKNOWN_ERROR"}

func (s PortStatus) String() string { return enumName(portStatuses[:], uint32(s), "PortStatus") }

// Repository ids of the interfaces seat serves and calls.
const (
	IDDataFlowComponent   = "IDL:openrtm.aist.go.jp/OpenRTM/DataFlowComponent:1.0"
	IDRTObject            = "IDL:omg.org/RTC/RTObject:1.0"
	IDPortService         = "IDL:omg.org/RTC/PortService:1.0"
	IDExecutionContextSvc = "IDL:omg.org/RTC/ExecutionContextService:1.0"
	IDExecutionContext    = "IDL:omg.org/RTC/ExecutionContext:1.0"
	IDInPortCdr           = "IDL:OpenRTM/InPortCdr:1.0"
	IDOutPortCdr          = "IDL:OpenRTM/OutPortCdr:1.0"
	IDDataPushService     = "IDL:omg.org/RTC/DataPushService:1.0"
	IDDataPullService     = "IDL:omg.org/RTC/DataPullService:1.0"
	IDConfiguration       = "IDL:org.omg/SDOPackage/Configuration:1.0"
	IDSDOService          = "IDL:org.omg/SDOPackage/SDOService:1.0"
	idInvalidParameter    = "IDL:org.omg/SDOPackage/InvalidParameter:1.0"
)

// NV is one entry of an NVList (SDOPackage::NameValue).
type NV struct {
	Name  string
	Value *corba.Any
}

// NVList is SDOPackage::NVList: OpenRTM's properties, in order.
type NVList []NV

var stringTC = corba.NewTypeCode(corba.TkString)

// String returns the value of name when it is a string.
func (l NVList) String(name string) (string, bool) {
	for _, nv := range l {
		if nv.Name == name && nv.Value != nil {
			s, ok := nv.Value.Value.(string)
			return s, ok
		}
	}
	return "", false
}

// Get returns the value of name, or nil.
func (l NVList) Get(name string) *corba.Any {
	for _, nv := range l {
		if nv.Name == name {
			return nv.Value
		}
	}
	return nil
}

// Set gives name a string value, replacing a value it had.
func (l *NVList) Set(name, value string) {
	l.SetAny(name, &corba.Any{Type: stringTC, Value: value})
}

// SetObject gives name an object reference of the interface id (whose
// simple name is iface), as OpenRTM publishes dataport.corba_cdr.inport_ref.
func (l *NVList) SetObject(name, id, iface string, ior *corba.IOR) {
	l.SetAny(name, &corba.Any{Type: &corba.TypeCode{Kind: corba.TkObjref, ID: id, Name: iface}, Value: ior})
}

// SetAny gives name a value, replacing a value it had.
func (l *NVList) SetAny(name string, v *corba.Any) {
	for i := range *l {
		if (*l)[i].Name == name {
			(*l)[i].Value = v
			return
		}
	}
	*l = append(*l, NV{Name: name, Value: v})
}

func writeNVList(e *corba.Encoder, l NVList) error {
	e.WriteULong(uint32(len(l)))
	for _, nv := range l {
		e.WriteString(nv.Name)
		v := nv.Value
		if v == nil {
			v = &corba.Any{Type: corba.NewTypeCode(corba.TkNull)}
		}
		if err := e.WriteAny(v); err != nil {
			return fmt.Errorf("property %s: %w", nv.Name, err)
		}
	}
	return nil
}

func readNVList(d *corba.Decoder) NVList {
	// An entry is at least a string (5 bytes) and a TypeCode (4).
	n := d.ReadLength("NVList", 9)
	l := make(NVList, 0, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		name := d.ReadString("NameValue name")
		l = append(l, NV{Name: name, Value: d.ReadAny()})
	}
	return l
}

// ConnectorProfile is RTC::ConnectorProfile: one connection between
// ports.
type ConnectorProfile struct {
	Name       string
	ID         string
	Ports      []*corba.IOR
	Properties NVList
}

func writeConnectorProfile(e *corba.Encoder, p *ConnectorProfile) error {
	e.WriteString(p.Name)
	e.WriteString(p.ID)
	e.WriteULong(uint32(len(p.Ports)))
	for _, ior := range p.Ports {
		e.WriteIOR(ior)
	}
	return writeNVList(e, p.Properties)
}

func readConnectorProfile(d *corba.Decoder) *ConnectorProfile {
	p := &ConnectorProfile{Name: d.ReadString("ConnectorProfile name"), ID: d.ReadString("connector_id")}
	n := d.ReadLength("ConnectorProfile ports", 8)
	for i := 0; i < n && d.Err() == nil; i++ {
		p.Ports = append(p.Ports, d.ReadIOR())
	}
	p.Properties = readNVList(d)
	return p
}

// PortProfile is RTC::PortProfile, as seat reads a peer's and writes its
// own. Data ports have no interfaces.
type PortProfile struct {
	Name       string
	Interfaces []PortInterface
	Ref        *corba.IOR
	Connectors []*ConnectorProfile
	Owner      *corba.IOR
	Properties NVList
}

// PortInterface is RTC::PortInterfaceProfile (service ports).
type PortInterface struct {
	InstanceName, TypeName string
	Polarity               uint32
}

func writePortProfile(e *corba.Encoder, p *PortProfile) error {
	e.WriteString(p.Name)
	e.WriteULong(uint32(len(p.Interfaces)))
	for _, i := range p.Interfaces {
		e.WriteString(i.InstanceName)
		e.WriteString(i.TypeName)
		e.WriteULong(i.Polarity)
	}
	e.WriteIOR(p.Ref)
	e.WriteULong(uint32(len(p.Connectors)))
	for _, c := range p.Connectors {
		if err := writeConnectorProfile(e, c); err != nil {
			return err
		}
	}
	e.WriteIOR(p.Owner)
	return writeNVList(e, p.Properties)
}

// ReadPortProfile reads an RTC::PortProfile.
func ReadPortProfile(d *corba.Decoder) *PortProfile {
	p := &PortProfile{Name: d.ReadString("PortProfile name")}
	n := d.ReadLength("PortProfile interfaces", 14)
	for i := 0; i < n && d.Err() == nil; i++ {
		p.Interfaces = append(p.Interfaces, PortInterface{
			InstanceName: d.ReadString("interface instance_name"),
			TypeName:     d.ReadString("interface type_name"),
			Polarity:     d.ReadULong(),
		})
	}
	p.Ref = d.ReadIOR()
	n = d.ReadLength("PortProfile connector_profiles", 20)
	for i := 0; i < n && d.Err() == nil; i++ {
		p.Connectors = append(p.Connectors, readConnectorProfile(d))
	}
	p.Owner = d.ReadIOR()
	p.Properties = readNVList(d)
	return p
}

// newUUID returns a random (version 4) UUID, as OpenRTM makes connector
// ids.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// sameObject reports whether two references name the same object: the
// same object key at the same address.
func sameObject(a, b *corba.IOR) bool {
	pa, err := a.IIOP()
	if err != nil {
		return false
	}
	pb, err := b.IIOP()
	if err != nil {
		return false
	}
	return pa.Port == pb.Port && pa.Host == pb.Host && string(pa.ObjectKey) == string(pb.ObjectKey)
}
