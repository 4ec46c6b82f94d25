//go:build !unix

package httpd

import "net"

// Elsewhere than on Unix, parked connections stay in the netpoller.

type fdConn struct{}

func (c *sseConn) park() {}
func (c *sseConn) unpark() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	return nil
}
func (c *sseConn) lingerOff() { lingerOff(c.conn) }
