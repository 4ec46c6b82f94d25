package main

import (
	"errors"
	"io"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ssePoller reads many subscribers' SSE responses on one goroutine through epoll(7), so that
// a delivery costs about one read(2) and the parse instead of a goroutine wake-up through the
// runtime's netpoller and net/http's body reader: the generator then takes less of the CPU
// it shares with the server it measures. Subscribers connect (dial, request, response
// header) on their own goroutines and hand the socket to the poller (add); it hands it back,
// closed, with the response's outcome when the response ends or Run stops.
type ssePoller struct {
	// DelayedACKs turns TCP_QUICKACK off on every socket added: Linux then acknowledges a
	// small pushed segment with the next one's ACK (or its delayed-ACK timer) instead of at
	// once when it is read (tcp(7)), so loopback subscribers send half the ACKs, each of
	// which costs the generator a transmit and the server socket's receive processing. The
	// kernel leaves this mode when a delayed-ACK timer fires. Set before adding.
	DelayedACKs bool

	epfd   int
	mu     sync.Mutex
	conns  map[int32]*polledConn // by file descriptor
	closed bool                  // Run has stopped: add fails
	buf    []byte                // read buffer, used by Run only
}

// errPollerClosed is the outcome of responses still open when the poller stops.
var errPollerClosed = errors.New("ssePoller: stopped")

// newSSEPoller creates the epoll instance; Run must then be running for responses to be read.
func newSSEPoller() (*ssePoller, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &ssePoller{epfd: fd, conns: map[int32]*polledConn{}, buf: make([]byte, 64<<10)}, nil
}

// pollWait is the longest a poller waits in epoll_wait(2) at a time (ms). The runtime's
// sysmon takes the P away from a goroutine that has been in a syscall for more than 10 ms
// (while another P is idle), or that has run for 10 ms without passing through the
// scheduler, and then wakes every 20 us for a while: 15-20 % of the generator's CPU in a
// first version. Run waits less than that, and yields (runtime.Gosched) every yieldEvery.
const (
	pollWait   = 5
	yieldEvery = 2 * time.Millisecond
)

// Run reads every added response as its bytes arrive until stop is closed (checked at least
// every pollWait ms), then ends the responses still open with errPollerClosed and closes the
// epoll instance.
func (p *ssePoller) Run(stop <-chan struct{}) {
	events := make([]syscall.EpollEvent, 256)
	ready := make([]*polledConn, 0, len(events))
	yielded := time.Now()
	for {
		select {
		case <-stop:
			p.closeAll()
			return
		default:
		}
		if time.Since(yielded) >= yieldEvery {
			runtime.Gosched()
			yielded = time.Now()
		}
		n, err := syscall.EpollWait(p.epfd, events, pollWait)
		if err != nil { // EINTR; nothing else is expected of a valid epoll fd
			continue
		}
		// Look every descriptor up before reading any: a response ended below frees its
		// descriptor number for a new connection, which is not the one that was ready.
		ready = ready[:0]
		p.mu.Lock()
		for _, ev := range events[:n] {
			if c := p.conns[ev.Fd]; c != nil {
				ready = append(ready, c)
			}
		}
		p.mu.Unlock()
		for _, c := range ready {
			p.read(c)
		}
	}
}

// read takes what the socket of c holds (level-triggered: more remains for the next wait)
// and parses it; the receive time is taken right after the read.
func (p *ssePoller) read(c *polledConn) {
	n, err := syscall.Read(c.fd, p.buf)
	at := time.Now()
	switch {
	case err == syscall.EAGAIN || err == syscall.EINTR:
		return
	case err != nil:
		p.end(c, err)
		return
	case n == 0:
		p.end(c, io.EOF)
		return
	}
	if done, err := c.feed(p.buf[:n], at); done {
		p.end(c, err)
	}
}

// add hands c's socket to the poller; it fails after Run stopped.
func (p *ssePoller) add(c *polledConn) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errPollerClosed
	}
	if p.DelayedACKs {
		if err := syscall.SetsockoptInt(c.fd, syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 0); err != nil {
			return err
		}
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(c.fd)}
	if err := syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		return err
	}
	p.conns[int32(c.fd)] = c
	return nil
}

// cancel makes the poller end c soon (its subscriber's context ended): it shuts the socket
// down, so that the next read sees the end, unless c has ended already.
func (p *ssePoller) cancel(c *polledConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns[int32(c.fd)] == c { // not ended, so c.fd is still c's socket
		syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	}
}

// open returns how many responses the poller holds.
func (p *ssePoller) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// end closes c's socket and reports outcome to its subscriber.
func (p *ssePoller) end(c *polledConn, outcome error) {
	p.mu.Lock()
	delete(p.conns, int32(c.fd))
	p.mu.Unlock()
	_ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil)
	syscall.Close(c.fd)
	c.done <- outcome
}

// closeAll ends every open response and closes the epoll instance.
func (p *ssePoller) closeAll() {
	p.mu.Lock()
	p.closed = true
	open := make([]*polledConn, 0, len(p.conns))
	for _, c := range p.conns {
		open = append(open, c)
	}
	p.mu.Unlock()
	for _, c := range open {
		p.end(c, errPollerClosed)
	}
	syscall.Close(p.epfd)
}

// dupSocket returns a close-on-exec duplicate of the descriptor fd.
func dupSocket(fd uintptr) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	nfd, err := syscall.Dup(int(fd))
	if err == nil {
		syscall.CloseOnExec(nfd)
	}
	return nfd, err
}

// closeSocket closes a descriptor from dupSocket that was never added to a poller.
func closeSocket(fd int) { syscall.Close(fd) }
