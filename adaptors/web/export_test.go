package web

// ClientFrame encodes a client's (masked) frame, for the tests over real
// connections.
var ClientFrame = clientFrame
