//go:build unix

package httpd

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// fdConn is a parked SSE connection's socket as a bare file descriptor, out of Go's
// netpoller (issue 19): a parked subscriber then holds no netFD, no addresses and no
// runtime poll descriptor (about 550 bytes together). Its writes never wait: when the
// socket buffer is full they return what went out and os.ErrDeadlineExceeded, as a write
// past its deadline would. One goroutine owns a parked connection at a time (its hub),
// so a Close never races a Write on the same descriptor number. It lives inside its
// sseConn (no allocation of its own).
type fdConn struct{ fd int32 }

var errParked = errors.New("httpd: parked SSE connection has no deadlines")

func (c *fdConn) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, errno := rawWrite(int(c.fd), p[n:])
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return n, os.ErrDeadlineExceeded
		case errno != 0:
			return n, os.NewSyscallError("write", errno)
		case m == 0:
			return n, syscall.EPIPE
		}
		n += m
	}
	return n, nil
}

// rawWrite is write(2) without telling the scheduler: on the parked (non-blocking) socket
// it never waits, so its P need not be handed off, and the thousands of few-microsecond
// writes of a fan-out then cost no scheduler bookkeeping and no sysmon retakes (issue 19:
// CPU per delivery).
func rawWrite(fd int, p []byte) (int, syscall.Errno) {
	r, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(r), errno
}

func (c *fdConn) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(c.fd), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, os.ErrDeadlineExceeded
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		}
		return n, nil
	}
}

// Close closes the descriptor once.
func (c *fdConn) Close() error {
	if c.fd < 0 {
		return nil
	}
	err := syscall.Close(int(c.fd))
	c.fd = -1
	return err
}

// lingerOff makes the close reset the connection (SO_LINGER 0).
func (c *fdConn) lingerOff() {
	if c.fd >= 0 {
		_ = syscall.SetsockoptLinger(int(c.fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1})
	}
}

var noAddr = &net.TCPAddr{}

func (c *fdConn) LocalAddr() net.Addr              { return noAddr }
func (c *fdConn) RemoteAddr() net.Addr             { return noAddr }
func (c *fdConn) SetDeadline(time.Time) error      { return errParked }
func (c *fdConn) SetReadDeadline(time.Time) error  { return errParked }
func (c *fdConn) SetWriteDeadline(time.Time) error { return errParked }

// dupSocket returns a close-on-exec duplicate of tc's descriptor; it shares tc's open
// file description (and so its O_NONBLOCK flag and socket options).
func dupSocket(tc *net.TCPConn) (int, error) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(s uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, s, syscall.F_DUPFD_CLOEXEC, 0)
		if e != 0 {
			derr = os.NewSyscallError("fcntl", e)
			return
		}
		fd = int(r)
	}); err != nil {
		return -1, err
	}
	return fd, derr
}

// park takes c's socket out of the netpoller into an fdConn, through the wrappers above
// it that let it be replaced (ops' observed connection); c stays as it is otherwise (TLS).
func (c *sseConn) park() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	cur, set := c.bare()
	tc, ok := cur.(*net.TCPConn)
	if !ok {
		return
	}
	fd, err := dupSocket(tc)
	if err != nil {
		return
	}
	if err := syscall.SetNonblock(fd, true); err != nil { // already so (shared flags): rawWrite relies on it
		_ = syscall.Close(fd)
		return
	}
	c.fdc = fdConn{fd: int32(fd)}
	set(&c.fdc)
	_ = tc.Close() // the duplicate keeps the connection open
	c.parked = true
}

// unpark puts a parked socket back into the netpoller, for writes that wait (a
// subscriber that left its hub). On error the connection is closed.
func (c *sseConn) unpark() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	if !c.parked {
		return nil
	}
	cur, set := c.bare()
	fc := cur.(*fdConn)
	f := os.NewFile(uintptr(fc.fd), "sse")
	nc, err := net.FileConn(f) // a duplicate, in the netpoller
	_ = f.Close()
	fc.fd = -1
	c.parked, c.wdl = false, 0
	if err != nil {
		c.closed = true
		_ = c.conn.Close() // finishes what wraps it
		return err
	}
	set(nc)
	return nil
}

// bare returns the connection under c's replaceable wrappers and how to replace it.
func (c *sseConn) bare() (net.Conn, func(net.Conn)) {
	cur, set := c.conn, func(n net.Conn) { c.conn = n }
	for {
		w, ok := cur.(netConnSetter)
		if !ok {
			return cur, set
		}
		cur, set = w.NetConn(), w.SetNetConn
	}
}

// lingerOff makes closing c reset it (SO_LINGER 0), parked or not; c.mu is held.
func (c *sseConn) lingerOff() {
	if cur, _ := c.bare(); c.parked {
		cur.(*fdConn).lingerOff()
		return
	}
	lingerOff(c.conn)
}
