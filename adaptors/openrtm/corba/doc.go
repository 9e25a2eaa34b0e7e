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
// On top of the codec it has the rest of a small ORB over IIOP (TCP):
//
//   - a Client (client.go), the invoking side: Objects made from IORs or
//     corbaloc URLs, two-way and oneway calls with a context's deadline,
//     LocateRequest, one connection per endpoint shared by concurrent
//     calls, forwards followed, exceptions as typed errors (see
//     SystemException, UserExceptionError, ConnError and IsRetryable);
//   - a Server (server.go), the object-adapter side: Servants registered
//     by object key, their IORs as omniORB writes them, LocateRequest,
//     the standard _is_a and _non_existent, MessageError for what cannot
//     be read, and a Close that says CloseConnection;
//   - a CosNaming client (naming.go): NamingContext with names in the
//     INS string form OpenRTM uses ("host.host_cxt/Foo0.rtc").
//
// The server accepts what omniORB clients send: a LocateRequest before
// the first call on a reference, the CodeSets service context on a
// connection's first request, CloseConnection, garbage in padding. The
// client sends that CodeSets context (char ISO-8859-1, wchar UTF-16) as
// omniORB does, but no LocateRequest unless asked (Object.Locate).
// Strings pass as bytes: UTF-8 between omniORB peers. The tests run them against Debian's omniNames,
// nameclt and catior and against omniORB C++ programs (see
// ../omnitest).
//
// It does not cover the kinds OpenRTM does not use: unions, exceptions as
// values, wide characters and wide strings (they need code-set
// conversion), fixed, long double and valuetypes; decoding them fails
// with an error that names the kind. Nor bidirectional GIOP, TLS, or
// addressing other than by object key. Decoding never
// panics, and it never allocates more than the input's size justifies: a
// length field is checked against the bytes that are left before anything
// is allocated for it. Every decoding error says what it was decoding and
// at which offset (see Error).
package corba
