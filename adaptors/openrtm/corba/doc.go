// Package corba is the codec layer of seat's OpenRTM support: enough of
// CORBA's wire formats to talk to OpenRTM-aist components over omniORB,
// written from the OMG specifications and checked against GIOP messages
// captured between real OpenRTM-aist C++ components.
//
// It covers:
//
//   - CDR (Common Data Representation): an Encoder and a Decoder for the
//     primitive types, strings, sequences and encapsulations, in both byte
//     orders, with alignment measured from a base the caller chooses (the
//     GIOP header for messages, byte 0 of OpenRTM's CdrData payload, the
//     byte-order octet of an encapsulation);
//   - TypeCodes and Any: the kinds OpenRTM's data types and NVLists use
//     (null, void, the basic kinds, string, objref, struct, enum, sequence,
//     array, alias, any, TypeCode), with indirection, decoded to plain Go
//     values (see Any);
//   - GIOP 1.0, 1.1 and 1.2 messages: the header, Request, Reply,
//     LocateRequest, LocateReply, CancelRequest, CloseConnection,
//     MessageError and Fragment, service contexts with the CodeSets
//     context, system and user exceptions and location forwards, and the
//     reassembly of fragmented messages;
//   - object references: stringified IORs, IIOP profiles 1.0 to 1.2 with
//     their tagged components (ORB type, code sets), and corbaloc URLs.
//
// It does not cover sockets, request dispatch, an ORB, the naming service
// or servants: those build on this package. Nor the kinds OpenRTM does not
// use: unions, exceptions as values, wide characters and wide strings
// (they need code-set conversion), fixed, long double and valuetypes;
// decoding them fails with an error that names the kind. Decoding never
// panics, and it never allocates more than the input's size justifies: a
// length field is checked against the bytes that are left before anything
// is allocated for it. Every decoding error says what it was decoding and
// at which offset (see Error).
package corba
