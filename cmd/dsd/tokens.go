package main

import (
	"fmt"
	"os"

	"github.com/dsd-project/dsd/httpd"
)

// readTokens reads the --auth-tokens file (httpd.ParseTokens: "TOKEN [scope ...]" lines);
// nil without a file.
func readTokens(path string) (*httpd.Tokens, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("auth tokens: %w", err)
	}
	defer f.Close()
	ts, err := httpd.ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("auth tokens %s: %w", path, err)
	}
	return ts, nil
}
