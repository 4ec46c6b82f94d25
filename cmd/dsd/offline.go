package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dsd-project/dsd/engine/boltstore"
)

// checkMain is `dsd check FILE`: 0 when the data file is sound, 1 with the damage listed
// (or when it cannot be read), 2 on bad usage.
func checkMain(args []string, stdout, stderr io.Writer) int {
	const usage = "usage: dsd check FILE   (a stopped server's DATA_DIR/dsd.db, or a copy from dsd backup)"
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(stdout, usage)
		return 0
	}
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	rep, err := boltstore.CheckFile(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "dsd check:", err)
		return 1
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintf(stderr, "dsd check: %s is damaged:\n", args[0])
		for _, p := range rep.Problems {
			fmt.Fprintln(stderr, "  "+p)
		}
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok (%d buckets, %d streams, %d incarnations)\n", args[0], rep.Buckets, rep.Streams, rep.Incarnations)
	if rep.Logged > 0 || rep.LoggedTorn {
		fmt.Fprintf(stdout, "%s: %d committed groups in %s, replayed at the next start", args[0], rep.Logged, boltstore.LogDir)
		if rep.LoggedTorn {
			fmt.Fprint(stdout, " (its last record was cut short by a crash: never acknowledged, cut off then)")
		}
		fmt.Fprintln(stdout)
	}
	return 0
}

// backupMain is `dsd backup --from ADMIN_URL --out FILE [--token-file F]`: it fetches the
// admin listener's /backup into FILE.tmp, syncs it and renames it to FILE. 0 on success,
// 1 on failure, 2 on bad usage.
func backupMain(args []string, stdout, stderr io.Writer) int {
	const usage = "usage: dsd backup --from http://127.0.0.1:9437 --out FILE [--token-file FILE]"
	fs := flag.NewFlagSet("dsd backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	from := fs.String("from", "", "the admin listener's URL (http://127.0.0.1:9437), or its /backup URL")
	out := fs.String("out", "", "file to write the copy to (replaced only once complete)")
	tokenFile := fs.String("token-file", "", "file holding a bearer token with the admin scope (when the server has --auth-tokens)")
	timeout := fs.Duration("timeout", time.Hour, "give up after this long")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	if err != nil || fs.NArg() > 0 || *from == "" || *out == "" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	n, err := fetchBackup(*from, *out, *tokenFile, *timeout)
	if err != nil {
		fmt.Fprintln(stderr, "dsd backup:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d bytes (check it with: dsd check %s)\n", *out, n, *out)
	return 0
}

// isHelp says whether arg asks for usage (-h, -help, --h, --help), as the flag package reads it.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--h", "--help":
		return true
	}
	return false
}

func fetchBackup(from, out, tokenFile string, timeout time.Duration) (int64, error) {
	u, err := url.Parse(from)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return 0, fmt.Errorf("--from %q: want http://HOST:PORT of the admin listener", from)
	}
	if !strings.HasSuffix(u.Path, "/backup") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/backup"
	}
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, err
	}
	if tokenFile != "" {
		tok, err := os.ReadFile(tokenFile)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, fmt.Errorf("%s: %s %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	return writeFileAtomic(out, resp.Body, resp.ContentLength)
}

// writeFileAtomic copies r (of want bytes, -1 unknown) to path through path.tmp, synced
// and renamed, so that path is either the whole copy or untouched.
func writeFileAtomic(path string, r io.Reader, want int64) (int64, error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if err == nil && want >= 0 && n != want {
		err = fmt.Errorf("short copy: %d of %d bytes", n, want)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return n, errors.Join(errors.New("the copy was not written"), err)
	}
	return n, nil
}
