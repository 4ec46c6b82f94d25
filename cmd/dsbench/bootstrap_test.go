package main

import (
	"bytes"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
)

// The example response body of extension §3.2, with CRLF line ends as RFC 2046 requires.
const specBootstrapExample = "--rr-bootstrap-9f1c2e7a\r\n" +
	"Content-Type: application/octet-stream\r\n\r\n" +
	"<snapshot-bytes>\r\n" +
	"--rr-bootstrap-9f1c2e7a\r\n" +
	"Content-Type: application/json\r\n\r\n" +
	`{"op":"set","path":["title"],"value":"hello"}` + "\r\n" +
	"--rr-bootstrap-9f1c2e7a\r\n" +
	"Content-Type: application/json\r\n\r\n" +
	`{"op":"insert","path":["body",0],"value":"world"}` + "\r\n" +
	"--rr-bootstrap-9f1c2e7a--\r\n"

func TestReadBootstrapSpecExample(t *testing.T) {
	s, err := readBootstrap("multipart/mixed; boundary=rr-bootstrap-9f1c2e7a", strings.NewReader(specBootstrapExample))
	if err != nil {
		t.Fatal(err)
	}
	if s.SnapshotType != "application/octet-stream" || s.SnapshotBytes != int64(len("<snapshot-bytes>")) {
		t.Fatalf("snapshot part: %q %d bytes", s.SnapshotType, s.SnapshotBytes)
	}
	want := int64(len(`{"op":"set","path":["title"],"value":"hello"}`) + len(`{"op":"insert","path":["body",0],"value":"world"}`))
	if s.Updates != 2 || s.UpdateBytes != want || s.UpdateTypes["application/json"] != 2 {
		t.Fatalf("updates: %+v, want 2 json parts of %d bytes", s, want)
	}
}

func TestReadBootstrapEmptySnapshotAndBinaryParts(t *testing.T) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part := func(ct string, data []byte) {
		w, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {ct}})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	part("application/octet-stream", nil) // no snapshot: empty first part
	binary := []byte("\r\n--not-the-boundary\r\n\x00\xff")
	part("application/octet-stream", binary)
	part("application/octet-stream", []byte("two"))
	mw.Close()
	s, err := readBootstrap("multipart/mixed; boundary="+mw.Boundary(), &body)
	if err != nil {
		t.Fatal(err)
	}
	if s.SnapshotBytes != 0 || s.Updates != 2 || s.UpdateBytes != int64(len(binary)+3) {
		t.Fatalf("summary %+v", s)
	}
}

func TestReadBootstrapRejectsNonMultipartAndEmpty(t *testing.T) {
	if _, err := readBootstrap("text/plain", strings.NewReader("x")); err == nil {
		t.Error("accepted text/plain")
	}
	if _, err := readBootstrap("multipart/mixed", strings.NewReader("")); err == nil {
		t.Error("accepted a multipart type without boundary")
	}
	if _, err := readBootstrap("multipart/mixed; boundary=b", strings.NewReader("--b--\r\n")); err == nil {
		t.Error("accepted a body with no parts")
	}
	if _, err := readBootstrap("multipart/mixed; boundary=b", strings.NewReader("--b\r\nContent-Type: a/b\r\n\r\ntrunc")); err == nil {
		t.Error("accepted a truncated part")
	}
}
