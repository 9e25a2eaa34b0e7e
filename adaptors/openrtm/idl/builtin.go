package idl

import (
	"strings"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// Builtin returns the TypeCode of one of OpenRTM's basic data types, the
// structs of module RTC in BasicDataType.idl (Time, TimedLong,
// TimedString, TimedDoubleSeq...), without reading a file: seat speaks
// them on a machine without OpenRTM's IDL. The name is written as for
// Lookup ("TimedString", "RTC::TimedString", "RTC.TimedString"). The
// tests check each against BasicDataType.idl read by the parser. The
// TypeCodes are shared: do not modify them.
func Builtin(name string) (*corba.TypeCode, bool) {
	key := strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(name), ".", "::"), "::")
	key = strings.TrimPrefix(key, "RTC::")
	tc, ok := builtins[key]
	return tc, ok
}

// BuiltinNames are the names Builtin knows, in BasicDataType.idl's order.
var BuiltinNames []string

var builtins = map[string]*corba.TypeCode{}

func init() {
	timeTC := &corba.TypeCode{Kind: corba.TkStruct, ID: "IDL:RTC/Time:1.0", Name: "Time", Members: []corba.Member{
		{Name: "sec", Type: corba.NewTypeCode(corba.TkULong)},
		{Name: "nsec", Type: corba.NewTypeCode(corba.TkULong)},
	}}
	builtins["Time"] = timeTC
	BuiltinNames = append(BuiltinNames, "Time")
	kinds := []struct {
		name string
		kind corba.Kind
	}{
		{"State", corba.TkShort}, {"Short", corba.TkShort}, {"Long", corba.TkLong}, {"UShort", corba.TkUShort},
		{"ULong", corba.TkULong}, {"Float", corba.TkFloat}, {"Double", corba.TkDouble}, {"Char", corba.TkChar},
		{"WChar", corba.TkWChar}, {"Boolean", corba.TkBoolean}, {"Octet", corba.TkOctet}, {"String", corba.TkString},
		{"WString", corba.TkWString},
	}
	timed := func(name string, data *corba.TypeCode) {
		builtins[name] = &corba.TypeCode{Kind: corba.TkStruct, ID: "IDL:RTC/" + name + ":1.0", Name: name, Members: []corba.Member{
			{Name: "tm", Type: timeTC}, {Name: "data", Type: data},
		}}
		BuiltinNames = append(BuiltinNames, name)
	}
	for _, k := range kinds {
		timed("Timed"+k.name, corba.NewTypeCode(k.kind))
	}
	for _, k := range kinds {
		if k.name != "State" {
			timed("Timed"+k.name+"Seq", &corba.TypeCode{Kind: corba.TkSequence, Content: corba.NewTypeCode(k.kind)})
		}
	}
}
