package corba

import "fmt"

// ServiceContext is one entry of a GIOP service context list; Data is its
// encapsulation, kept as it came.
type ServiceContext struct {
	ID   uint32
	Data []byte
}

// ServiceCodeSets is the id of the CodeSets service context, which an
// omniORB client sends on the first request of a connection.
const ServiceCodeSets = 1

func (d *Decoder) readServiceContexts() []ServiceContext {
	var scs []ServiceContext
	n := d.ReadLength("service context list", 8)
	for i := 0; i < n && d.st.err == nil; i++ {
		sc := ServiceContext{ID: d.ReadULong()}
		sc.Data = d.ReadOctetSeq("service context data")
		scs = append(scs, sc)
	}
	return scs
}

func (e *Encoder) writeServiceContexts(scs []ServiceContext) {
	e.WriteULong(uint32(len(scs)))
	for _, sc := range scs {
		e.WriteULong(sc.ID)
		e.WriteOctetSeq(sc.Data)
	}
}

// CodeSetContext is the CodeSets service context: the transmission code
// sets a client chose for char and wchar data.
type CodeSetContext struct {
	Char, WChar uint32
}

// ServiceContext encodes c as a CodeSets service context.
func (c CodeSetContext) ServiceContext(order ByteOrder) ServiceContext {
	e := NewEncapsulation(order)
	e.WriteULong(c.Char)
	e.WriteULong(c.WChar)
	return ServiceContext{ID: ServiceCodeSets, Data: e.Bytes()}
}

// CodeSets decodes a CodeSets service context.
func (sc ServiceContext) CodeSets() (CodeSetContext, error) {
	if sc.ID != ServiceCodeSets {
		return CodeSetContext{}, fmt.Errorf("giop: service context %d is not CodeSets", sc.ID)
	}
	d, err := encapsulation(sc.Data, "CodeSets service context")
	if err != nil {
		return CodeSetContext{}, fmt.Errorf("giop: %w", err)
	}
	c := CodeSetContext{Char: d.ReadULong(), WChar: d.ReadULong()}
	if err := d.Err(); err != nil {
		return CodeSetContext{}, fmt.Errorf("giop: %w", err)
	}
	return c, nil
}
