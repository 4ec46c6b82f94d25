package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

func runStallBody(args []string) error {
	fs := flag.NewFlagSet("stall-body", flag.ContinueOnError)
	common := registerCommon(fs)
	bodies := fs.Int("bodies", 100, "connections that announce a large body, send part of it and stall")
	length := byteSize(32 << 20)
	fs.Var(&length, "content-length", "the Content-Length each announces")
	sent := byteSize(16 << 20)
	fs.Var(&sent, "sent", "bytes of the body each sends before stalling")
	missing := fs.Bool("missing", false, "POST to a stream that does not exist (the issue's repro) instead of an existing one")
	hold := fs.Duration("hold", 5*time.Second, "how long the stalled bodies stay connected after the last one is")
	parallel := fs.Int("connect-parallel", 100, "connections opened at a time")
	pid := fs.Int("server-pid", envInt("DS_SERVER_PID"), "server process whose VmRSS is sampled (default $DS_SERVER_PID)")
	fs.Usage = flagUsage(fs, "stall-body", "Issue 20, target 2: --bodies raw connections POST a --content-length body, send --sent\n"+
		"bytes of it and stall. Reports the server's peak RSS growth and the answers the stalled\n"+
		"requests got (404 at once for a missing stream, 503 past the body budget, 408 after the\n"+
		"body idle timeout).")
	cm, err := common(args)
	if err != nil {
		return err
	}
	if *pid <= 0 || *bodies < 1 || sent > length {
		return errors.New("--server-pid (or $DS_SERVER_PID), --bodies >= 1 and --sent <= --content-length are required")
	}
	raiseNoFile(uint64(*bodies + 1024))
	t := newTarget(cm, 8)
	ctx := context.Background()
	if err := t.Prepare(ctx); err != nil {
		return unsupportedOr("stall-body", cm.Tags, err)
	}
	name := t.StreamName(0)
	if !*missing {
		if _, err := t.CreateStream(ctx, name, "application/octet-stream"); err != nil {
			return err
		}
	}
	time.Sleep(time.Second)
	ps, err := startPeakSampler(*pid, serverPort(cm.Base))
	if err != nil {
		return err
	}
	fmt.Printf("stall-body: %d bodies of Content-Length %d, %d sent, to %s stream; server pid %d\n",
		*bodies, int64(length), int64(sent), map[bool]string{true: "a missing", false: "an existing"}[*missing], *pid)
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: bench\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n",
		t.StreamURL(name)[len(cm.Base):], int64(length))
	piece := make([]byte, 256<<10)
	start := time.Now()
	conns, failed := dialMany(*bodies, *parallel, func() (net.Conn, error) { return stallDial(cm.Base, 0) },
		func(_ int, c net.Conn) error {
			if _, err := c.Write([]byte(head)); err != nil {
				return err
			}
			for left := int64(sent); left > 0; left -= int64(len(piece)) {
				if _, err := c.Write(piece[:min(int64(len(piece)), left)]); err != nil {
					return err
				}
			}
			return nil
		})
	fmt.Printf("sent %d/%d in %v; holding %v\n", *bodies-failed, *bodies, time.Since(start).Round(time.Millisecond), *hold)
	time.Sleep(*hold)
	ps.finish()
	answers := Statuses{}
	for _, c := range conns {
		if c == nil {
			continue
		}
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answers.Inc(0, errors.New("no answer"))
		} else {
			answers.Inc(resp.StatusCode, nil)
		}
		c.Close()
	}
	r := NewResult("stall-body", cm.Tags)
	r.Set("bodies", *bodies)
	r.Set("content_length", strconv.FormatInt(int64(length), 10))
	r.Set("sent", int64(sent))
	r.Set("missing", *missing)
	ps.report(r)
	fmt.Printf("answers to the stalled requests: %s\n", answers)
	r.SetStatuses("", answers)
	fmt.Println(r)
	return nil
}
