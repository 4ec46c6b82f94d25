package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

// runCeilingServer serves the bare net/http handler that bounds what any Go server can do per
// request on this machine: it reads the whole body and answers with one header and no body
// (PUT 201, everything else 204). `make bench-peers` runs the append workloads against it so
// that every dsd figure can be given as a fraction of it (issue 19).
func runCeilingServer(args []string) error {
	fs := flag.NewFlagSet("ceiling-server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (port 0 = any free port)")
	fs.Usage = flagUsage(fs, "ceiling-server", "The bare net/http ceiling: read the body, answer 204 (PUT: 201) with one header.\n"+
		"Prints \"listening on http://ADDR\" once it accepts connections; stops on SIGTERM/SIGINT.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(ceilingHandler)}
	fmt.Fprintf(os.Stdout, "ceiling-server: listening on http://%s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ceilingOffset is the one header the ceiling answers with, preallocated as dsd's own
// constant headers are.
var ceilingOffset = []string{"0000000000000000_0000000000000000"}

// ceilingHandler reads the body and answers 201 to PUT (so that workloads can "create" their
// streams) and 204 to everything else.
func ceilingHandler(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header()["Stream-Next-Offset"] = ceilingOffset
	if r.Method == http.MethodPut {
		w.WriteHeader(http.StatusCreated)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
