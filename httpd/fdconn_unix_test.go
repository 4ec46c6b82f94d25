//go:build unix

package httpd

import (
	"net"
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
