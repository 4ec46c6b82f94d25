package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// readTokens reads bearer tokens, one per line; blank lines and # comments are skipped.
func readTokens(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("auth tokens: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" && !strings.HasPrefix(t, "#") {
			out = append(out, t)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("auth tokens: %s lists no token", path)
	}
	return out, nil
}
