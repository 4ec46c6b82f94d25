//go:build !linux

package main

import "errors"

// ssePoller needs epoll(7): elsewhere newSSEPoller fails and subscribers use net/http.
type ssePoller struct{ DelayedACKs bool }

var errPollerClosed = errors.New("ssePoller: needs Linux")

func newSSEPoller() (*ssePoller, error)    { return nil, errPollerClosed }
func (p *ssePoller) Run(<-chan struct{})   {}
func (p *ssePoller) add(*polledConn) error { return errPollerClosed }
func (p *ssePoller) cancel(*polledConn)    {}
func (p *ssePoller) open() int             { return 0 }
func dupSocket(uintptr) (int, error)       { return -1, errPollerClosed }
func closeSocket(int)                      {}
