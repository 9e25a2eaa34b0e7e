// Package schema holds the SEATML vocabulary as Go data, the positioned
// document tree that the loader builds, and the structural checks that
// report unknown elements and attributes, missing required attributes and
// malformed values. Diagnostics are collected, never returned one by one:
// every problem of a file is reported at once, sorted by position.
package schema
