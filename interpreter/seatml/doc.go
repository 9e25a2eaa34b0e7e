// Package seatml is the SEATML front end: it reads a behavior file (and
// the files it includes), checks it, and compiles it into an immutable
// Program whose states are a statechart.Chart for the engine to run.
//
// Load reports every problem at once as file:line:col diagnostics
// (columns in characters). A Program holds what the runtime (package
// interpreter) needs and the tools read: the adaptors declared, the
// states with their rules (keys expanded into words, indexed by source
// for the search of docs/seatml.md §5), actions, Lua chunks compiled with
// their places, widgets and the device settings.
//
// An SCXML document is loaded here too (IsSCXML): package scxml compiles
// the document itself, and its elements in seat's namespace (adaptors)
// are compiled as SEATML's <general> would be, so both languages reach
// the runtime and the tools as one Program.
package seatml
