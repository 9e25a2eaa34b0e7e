package corba

// TypeCodes of the OpenRTM types the vectors carry, written from the IDL
// in ../shared/openrtm/idl (RTC.idl, SDOPackage.idl, DataPort.idl,
// DataPort_OpenRTM.idl, BasicDataType.idl) as omniidl would describe them.

var (
	tcBoolean = NewTypeCode(TkBoolean)
	tcULong   = NewTypeCode(TkULong)
	tcString  = NewTypeCode(TkString)
	tcAny     = NewTypeCode(TkAny)

	tcOctetSeq = &TypeCode{Kind: TkSequence, Content: NewTypeCode(TkOctet)}

	tcCdrData = &TypeCode{Kind: TkAlias, ID: "IDL:OpenRTM/CdrData:1.0", Name: "CdrData", Content: tcOctetSeq}
	tcRTCSeq  = &TypeCode{Kind: TkAlias, ID: "IDL:omg.org/RTC/OctetSeq:1.0", Name: "OctetSeq", Content: tcOctetSeq}

	tcReturnCode = &TypeCode{Kind: TkEnum, ID: "IDL:omg.org/RTC/ReturnCode_t:1.0", Name: "ReturnCode_t",
		Enumerators: []string{"RTC_OK", "RTC_ERROR", "BAD_PARAMETER", "UNSUPPORTED", "OUT_OF_RESOURCES", "PRECONDITION_NOT_MET"}}
	portStatuses       = []string{"PORT_OK", "PORT_ERROR", "BUFFER_FULL", "BUFFER_EMPTY", "BUFFER_TIMEOUT", "UNKNOWN_ERROR"}
	tcPortStatus       = &TypeCode{Kind: TkEnum, ID: "IDL:OpenRTM/PortStatus:1.0", Name: "PortStatus", Enumerators: portStatuses}
	tcRTCPortStatus    = &TypeCode{Kind: TkEnum, ID: "IDL:omg.org/RTC/PortStatus:1.0", Name: "PortStatus", Enumerators: portStatuses}
	tcUniqueID         = &TypeCode{Kind: TkAlias, ID: "IDL:org.omg/SDOPackage/UniqueIdentifier:1.0", Name: "UniqueIdentifier", Content: tcString}
	tcPortService      = &TypeCode{Kind: TkObjref, ID: "IDL:omg.org/RTC/PortService:1.0", Name: "PortService"}
	tcPortSvcList      = &TypeCode{Kind: TkAlias, ID: "IDL:omg.org/RTC/PortServiceList:1.0", Name: "PortServiceList", Content: &TypeCode{Kind: TkSequence, Content: tcPortService}}
	tcNameValue        = &TypeCode{Kind: TkStruct, ID: "IDL:org.omg/SDOPackage/NameValue:1.0", Name: "NameValue", Members: []Member{{"name", tcString}, {"value", tcAny}}}
	tcNVList           = &TypeCode{Kind: TkAlias, ID: "IDL:org.omg/SDOPackage/NVList:1.0", Name: "NVList", Content: &TypeCode{Kind: TkSequence, Content: tcNameValue}}
	tcConnectorProfile = &TypeCode{Kind: TkStruct, ID: "IDL:omg.org/RTC/ConnectorProfile:1.0", Name: "ConnectorProfile",
		Members: []Member{{"name", tcString}, {"connector_id", tcUniqueID}, {"ports", tcPortSvcList}, {"properties", tcNVList}}}

	tcTime = &TypeCode{Kind: TkStruct, ID: "IDL:RTC/Time:1.0", Name: "Time", Members: []Member{{"sec", tcULong}, {"nsec", tcULong}}}
	// timed is BasicDataType.idl's RTC::Timed* by name.
	timed = map[string]*TypeCode{
		"TimedLong":      timedType("TimedLong", NewTypeCode(TkLong)),
		"TimedString":    timedType("TimedString", tcString),
		"TimedDouble":    timedType("TimedDouble", NewTypeCode(TkDouble)),
		"TimedShortSeq":  timedType("TimedShortSeq", &TypeCode{Kind: TkSequence, Content: NewTypeCode(TkShort)}),
		"TimedDoubleSeq": timedType("TimedDoubleSeq", &TypeCode{Kind: TkSequence, Content: NewTypeCode(TkDouble)}),
	}
)

func timedType(name string, data *TypeCode) *TypeCode {
	return &TypeCode{Kind: TkStruct, ID: "IDL:RTC/" + name + ":1.0", Name: name, Members: []Member{{"tm", tcTime}, {"data", data}}}
}

// bodyTypes gives the values in the body of a request (or its reply) for
// the operations in the vectors: in and inout parameters, or the result
// and the inout and out parameters.
func bodyTypes(op string, reply bool) []*TypeCode {
	tcs, ok := operationTypes(op, reply)
	if !ok {
		panic("no body types for " + op)
	}
	return tcs
}

func operationTypes(op string, reply bool) ([]*TypeCode, bool) {
	switch {
	case (op == "connect" || op == "notify_connect") && !reply:
		return []*TypeCode{tcConnectorProfile}, true
	case op == "connect" || op == "notify_connect":
		return []*TypeCode{tcReturnCode, tcConnectorProfile}, true
	case op == "put" && !reply:
		return []*TypeCode{tcCdrData}, true
	case op == "put":
		return []*TypeCode{tcPortStatus}, true
	case op == "push" && !reply:
		return []*TypeCode{tcRTCSeq}, true
	case op == "push":
		return []*TypeCode{tcRTCPortStatus}, true
	case op == "_non_existent" && !reply:
		return nil, true
	case op == "_non_existent":
		return []*TypeCode{tcBoolean}, true
	case op == "notify_disconnect" && !reply:
		return []*TypeCode{tcUniqueID}, true
	case op == "notify_disconnect":
		return []*TypeCode{tcReturnCode}, true
	}
	return nil, false
}
