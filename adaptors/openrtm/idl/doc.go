// Package idl reads OMG IDL files at run time and gives the
// corba.TypeCodes of the data types that OpenRTM data ports carry, as
// package rosmsg does for ROS .msg files. With such a TypeCode,
// corba.Decoder.ReadValue and corba.Encoder.WriteValue read and write a
// port's data: OpenRTM's CdrData payload is the bare CDR of the struct
// (little-endian unless the connector says otherwise), aligned from the
// payload's byte 0.
//
// # The language
//
// The parser takes the IDL of OpenRTM-aist's own files (BasicDataType.idl,
// ExtendedDataTypes.idl, InterfaceDataTypes.idl, RTC.idl, SDOPackage.idl,
// DataPort*.idl, ...) and what users write for their data types:
//
//   - modules (nested and reopened), struct, enum, typedef, const
//     (integer, floating-point, string, character, boolean and enum
//     constants, with C's operators; usable as bounds), exception,
//     native, forward declarations;
//   - the basic types boolean, char, octet, short, long, long long and
//     their unsigned forms, float, double, long double, string,
//     string<N>, wchar, wstring, any, Object, TypeCode; sequence<T>,
//     sequence<T, N>, arrays T name[N][M], fixed<D, S>;
//   - scoped names, absolute (::RTC::Time) and relative (RTC::Time, Time),
//     resolved as IDL says: the first identifier in the current scope,
//     then in each enclosing one;
//   - interfaces, unions and valuetypes are parsed for their names
//     (interfaces as objref TypeCodes, unions without members); their
//     operations and attributes are skipped. Types declared inside an
//     interface are kept;
//   - the preprocessor: comments, #include "file" (beside the including
//     file, then on the search path) and #include <file> (on the search
//     path, then beside it), each file parsed once, cycles an error that
//     names the chain; object-like #define (SDOPackage.idl and RTC.idl
//     use them) and #undef; #ifdef, #ifndef, #if with 0, 1 and defined X,
//     #elif, #else, #endif; #pragma prefix, #pragma version and #pragma
//     ID, which make repository ids as omniidl does
//     ("IDL:omg.org/RTC/PortService:1.0", "IDL:RTC/TimedLong:1.0");
//     other pragmas (#pragma keylist) are ignored.
//
// Errors name the place: "file:line:col: message", columns in
// characters. Nothing in the input makes the parser panic or run without
// bound: files, nesting, macro expansion and the size of a type written
// out are limited.
//
// # Finding types
//
// A Loader keeps what the files it has read declare. Loader.Lookup takes
// the names eSEAT users write in datatype=: "TimedString",
// "RTC.TimedString", "RTC::TimedString", "MyModule::MyType". A name not
// yet known loads BasicDataType.idl, ExtendedDataTypes.idl and
// InterfaceDataTypes.idl from the search path, then every *.idl file in
// the path's directories; an unknown name is an error with a suggestion
// ("did you mean TimedString?") and the directories searched.
//
// The search path (DefaultPath) is, in order:
//
//   - the directories in $SEAT_IDL_PATH (PathEnv), separated by ":";
//   - $RTM_ROOT/rtm/idl, when RTM_ROOT is set (OpenRTM-aist's installers
//     set RTM_ROOT; on Windows the IDL is in %RTM_ROOT%\rtm\idl);
//   - /usr/include/openrtm-*/rtm/idl and
//     /usr/local/include/openrtm-*/rtm/idl: OpenRTM-aist C++ 1.x and 2.x
//     install their headers in <prefix>/include/openrtm-<major.minor>/rtm,
//     with the IDL in rtm/idl (Ubuntu's and Debian's openrtm-aist and
//     openrtm-aist-idl packages, and builds from source with the default
//     prefix /usr/local);
//   - /opt/openrtm-aist/include/openrtm-*/rtm/idl, for a build installed
//     under /opt;
//   - /usr/share/openrtm-*/idl;
//   - /usr/lib/python3/dist-packages/OpenRTM_aist/RTM_IDL and
//     /usr/local/lib/python3*/dist-packages/OpenRTM_aist/RTM_IDL, where
//     OpenRTM-aist-Python keeps the same IDL files.
//
// Of the install locations only those that exist are kept, the newest
// version first (openrtm-2.0 before openrtm-1.2).
package idl
