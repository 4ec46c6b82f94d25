//go:build unix

package httpd

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
)

// replaceableConn stands for ops' observed connection: a wrapper whose connection
// underneath can be replaced.
type replaceableConn struct{ net.Conn }

func (c *replaceableConn) NetConn() net.Conn     { return c.Conn }
func (c *replaceableConn) SetNetConn(n net.Conn) { c.Conn = n }

// A hijacked connection accepted through JSONErrorListener and wrapped by the request
// log is parked out of the netpoller (the errConn between them is dropped), its writes
// reach the client, and it can be unparked and written again.
func TestParkThroughListenerWrappers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	eln := JSONErrorListener(ln)
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	accepted, err := eln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	wrap := &replaceableConn{accepted}
	c := &sseConn{conn: wrap}
	c.park()
	if !c.parked {
		t.Fatal("the connection was not parked")
	}
	if _, ok := wrap.Conn.(*fdConn); !ok {
		t.Fatalf("under the wrapper: %T, want *fdConn", wrap.Conn)
	}
	expectWrite(t, c, client, "parked")
	if err := c.unpark(); err != nil {
		t.Fatal(err)
	}
	if c.parked {
		t.Fatal("still parked after unpark")
	}
	expectWrite(t, c, client, "unparked")
	c.finish()
	rest, err := io.ReadAll(client)
	if err != nil || string(rest) != string(lastChunk) {
		t.Fatalf("after finish the client read %q, %v; want the last chunk and EOF", rest, err)
	}
}

// expectWrite writes s to c and checks that client reads exactly s.
func expectWrite(t *testing.T, c *sseConn, client net.Conn, s string) {
	t.Helper()
	if _, err := c.write([]byte(s), sseWriteTimeout); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(s))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != s {
		t.Fatalf("client read %q, %v; want %q", got, err, s)
	}
}

// A parked write to a client that does not read returns at once with what the socket
// took and os.ErrDeadlineExceeded; after a reset from another goroutine, writes fail
// with net.ErrClosed instead of reaching a reused descriptor.
func TestParkedWriteNeverWaits(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	_ = accepted.(*net.TCPConn).SetWriteBuffer(4 << 10)
	c := &sseConn{conn: accepted}
	c.park()
	if !c.parked {
		t.Fatal("the connection was not parked")
	}
	big := make([]byte, 8<<20)
	n, err := c.write(big, sseWriteTimeout)
	if !errors.Is(err, os.ErrDeadlineExceeded) || n <= 0 || n >= len(big) {
		t.Fatalf("write to a client that does not read: %d of %d bytes, %v; want part and os.ErrDeadlineExceeded", n, len(big), err)
	}
	done := make(chan struct{})
	go func() { c.reset(); close(done) }()
	<-done
	if _, err := c.write([]byte("x"), sseWriteTimeout); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after reset: %v, want net.ErrClosed", err)
	}
}
