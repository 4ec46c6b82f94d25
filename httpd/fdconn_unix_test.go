//go:build unix

package httpd

import (
	"errors"
	"net"
	"os"
	"testing"
)

// setterConn is a replaceable wrapper like ops' observed connection.
type setterConn struct{ net.Conn }

func (c *setterConn) NetConn() net.Conn     { return c.Conn }
func (c *setterConn) SetNetConn(n net.Conn) { c.Conn = n }

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if server, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return server, client
}

// A hijacked connection accepted through JSONErrorListener parks: its socket leaves the
// netpoller (issue 19), with or without a replaceable wrapper above the listener's, and
// writes still reach the client.
func TestHijackedErrConnParks(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		server, client := tcpPair(t)
		var conn net.Conn = &errConn{Conn: server, capture: true}
		if wrapped {
			conn = &setterConn{conn}
		}
		c := &sseConn{conn: dropErrConn(conn)}
		c.park()
		if cur, _ := c.bare(); !c.parked || cur == nil {
			t.Fatalf("wrapped=%v: not parked (bare %T)", wrapped, cur)
		} else if _, ok := cur.(*fdConn); !ok {
			t.Fatalf("wrapped=%v: bare connection is %T, want *fdConn", wrapped, cur)
		}
		if _, err := c.write([]byte("hi"), sseWriteTimeout); err != nil {
			t.Fatalf("wrapped=%v: parked write: %v", wrapped, err)
		}
		buf := make([]byte, 2)
		if _, err := client.Read(buf); err != nil || string(buf) != "hi" {
			t.Fatalf("wrapped=%v: client read %q, %v", wrapped, buf, err)
		}
		c.finish()
	}
}

// A parked write to a client that does not read returns at once with what the socket
// took and os.ErrDeadlineExceeded; after a reset from another goroutine, writes fail
// with net.ErrClosed instead of reaching a reused descriptor.
func TestParkedWriteNeverWaits(t *testing.T) {
	server, _ := tcpPair(t)
	_ = server.(*net.TCPConn).SetWriteBuffer(4 << 10)
	c := &sseConn{conn: server}
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
