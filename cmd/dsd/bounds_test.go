package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dsd wires the bounds of issue 20: a catch-up reader that does not read, past
// --live-buffer-budget, is cut with a reset (http.Server.ConnContext); a stalled body gets
// 408 after --body-idle-timeout.
func TestStalledClientsAreCut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dsd process; skipped with -short")
	}
	p := startDSD(t, t.TempDir(), "--live-buffer-budget", "262144", "--body-idle-timeout", "300ms")
	defer func() { p.cmd.Process.Kill(); <-p.done }()
	u := p.url + "/v1/stream/big"
	if resp, err := do("PUT", u, "text/plain", nil, nil); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v %v", resp, err)
	}
	// One 8 MiB message: a catch-up response larger than the kernel's send buffer can take.
	msg := bytes.Repeat([]byte("0123456789abcdef"), 512<<10)
	if resp, err := do("POST", u, "text/plain", msg, nil); err != nil || resp.StatusCode != 204 {
		t.Fatalf("append: %v %v", resp, err)
	}
	addr := strings.TrimPrefix(p.url, "http://")
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /v1/stream/big?offset=-1 HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(time.Second) // past the 200 ms grace: the sweep cuts it
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, c); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("a stalled catch-up reader past the budget ended with %v, want ECONNRESET", err)
	}

	b, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fmt.Fprintf(b, "POST /v1/stream/big HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nhalf")
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(b), nil)
	if err != nil || resp.StatusCode != 408 {
		t.Fatalf("a stalled body: %v %v, want 408", resp, err)
	}
}
