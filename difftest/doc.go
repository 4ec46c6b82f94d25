// Package difftest holds dsd to its reference model by differential testing: a command
// script (model.Command values and clock ticks) runs on the pure state machine
// (model.State.Apply) and on a target, the engine (on its default data file backend) called directly or the HTTP
// layer over it, and every response must agree on what the protocol makes observable:
// status, error code, the Stream-* and Producer-* headers, Content-Type, and read
// bodies.
//
// Scripts come from Generate, which draws its choices from a Source: a seeded PRNG for
// the random-script tests, or the fuzzer's bytes (fuzz.FuzzModelVsEngine). The
// generator runs the model as it goes, so it can pick offsets that are real message
// boundaries, producers' next sequence numbers and the streams that exist.
//
// Commands cover the base protocol with forks (soft delete, cascading GC, sub-offsets,
// TTL inheritance) and every extension: attributes, append-batch (acknowledgements
// compared frame by frame), snapshots, retention, /bootstrap (parsed with mime/multipart
// and compared part by part), record coordinates and record-aware reads. The model
// applies expiry at once; dsd lazily, so Run sweeps it after each clock tick
// (settleExpiry). Known discrepancies (known.go) end a script early and are counted;
// planted_test.go shows that each extension rule, broken in a wrapped store, is caught.
//
// The engine must not call the model's Apply (it re-implements every decision against
// storage); that is what makes agreement meaningful. A mismatch names the first step
// that differs and prints the script up to it, so it can be replayed.
package difftest
