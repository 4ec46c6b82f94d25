// Package model is the pure reference model of the Durable Streams protocol and of the
// extensions dsd serves: the vocabulary (offsets, offset specs, producer triples, errors,
// JSON canonical bytes, header grammars, identifiers) and a deterministic state machine
// (State.Apply) that every other layer is checked against.
//
// The package is stdlib only, performs no IO and never reads the clock: time is an
// argument. Requirement IDs (B-x.y-nn from docs/spec/base-protocol.md, X-x.y-nn from the
// extension spec as numbered in CONFORMANCE.md, A-nn resolutions, Dn design decisions)
// are cited beside the rules that implement them.
package model
