package httpd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dsd-project/dsd/model"
	"github.com/dsd-project/dsd/subs"
)

// allErrors is every protocol error: the model's, the delivery worker's and the routes'.
var allErrors = append(append(append([]error{}, model.AllErrors...), subs.AllErrors...), ErrWebhooksOff, ErrNotJSONBody)

// Every protocol error has a status in the one table; unknown errors are 500.
func TestEveryErrorHasAStatus(t *testing.T) {
	for _, err := range allErrors {
		st, known := errorStatus(err)
		if !known || st < 400 || st >= 600 {
			t.Errorf("%T %v: status %d known=%v", err, err, st, known)
		}
		if model.ErrorCode(err) == "" {
			t.Errorf("%v has no code", err)
		}
	}
	for _, d := range model.AllDetails {
		if st, _ := errorStatus(d); st != statusOf[d.Base] || model.ErrorCode(d) != d.Base.Code {
			t.Errorf("%q: status %d code %s, want its base's", d.Msg, st, model.ErrorCode(d))
		}
	}
	if _, known := errorStatus(fmt.Errorf("boom")); known {
		t.Error("an unknown error must not map to a protocol status")
	}
}

// errorTable renders the code -> status table that CONFORMANCE.md shows.
func errorTable() string {
	var b strings.Builder
	b.WriteString("| code | status | meaning | messages that name the parameter |\n|---|---|---|---|\n")
	details := map[string][]string{}
	for _, d := range model.AllDetails {
		details[d.Base.Code] = append(details[d.Base.Code], "`"+d.Msg+"`")
	}
	details[model.ErrBadQuery.Code] = append(details[model.ErrBadQuery.Code], "`"+model.MalformedQuery("NAME").Error()+"`")
	seen := map[string]bool{}
	for _, err := range allErrors {
		code := model.ErrorCode(err)
		if seen[code] {
			continue
		}
		seen[code] = true
		st, _ := errorStatus(err)
		fmt.Fprintf(&b, "| `%s` | %d | %s | %s |\n", code, st, err.Error(), strings.Join(details[code], "<br>"))
	}
	return b.String()
}

var errorsSection = regexp.MustCompile(`(?s)(<!-- BEGIN GENERATED: errors -->\n).*?(<!-- END GENERATED: errors -->)`)

// CONFORMANCE.md shows the current error table; UPDATE_DOCS=1 rewrites it.
func TestConformanceDocErrorTable(t *testing.T) {
	const path = "../CONFORMANCE.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !errorsSection.Match(doc) {
		t.Fatalf("%s has no generated errors section", path)
	}
	want := errorsSection.ReplaceAllString(string(doc), "${1}"+strings.ReplaceAll(errorTable(), "$", "$$")+"${2}")
	if want == string(doc) {
		return
	}
	if os.Getenv("UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s's error table is stale: run `make docs`", path)
}

// checkRequestSyntax indexes http.Header directly, so its names must be canonical.
func TestSingleValuedHeadersAreCanonical(t *testing.T) {
	for _, name := range singleValued {
		if c := http.CanonicalHeaderKey(name); c != name {
			t.Errorf("singleValued holds %q, http.Header keys it as %q", name, c)
		}
	}
}

// Every 503 carries Retry-After; a storage failure's body names no path and no OS error
// (issue 20, D4 amended).
func TestServerErrorsAreGenericAndRetryable(t *testing.T) {
	cause := fmt.Errorf("%w: write /var/lib/dsd/dsd.db: no space left on device", model.ErrStorageFailed)
	for _, err := range []error{cause, model.ErrShuttingDown, model.ErrBusy} {
		rec := httptest.NewRecorder()
		writeError(rec, httptest.NewRequest("POST", "/v1/stream/x", nil), err)
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("%v: status %d, want 503", err, rec.Code)
		}
		if ra := rec.Header().Get("Retry-After"); ra == "" {
			t.Errorf("%v: 503 without Retry-After", err)
		}
		var body errorBody
		if e := json.Unmarshal(rec.Body.Bytes(), &body); e != nil {
			t.Fatalf("%v: body %q: %v", err, rec.Body, e)
		}
		if body.Error.Code != model.ErrorCode(err) {
			t.Errorf("%v: code %q", err, body.Error.Code)
		}
		if strings.Contains(body.Error.Message, "/var/lib") || strings.Contains(body.Error.Message, "no space") {
			t.Errorf("503 body leaks the cause: %q", body.Error.Message)
		}
	}
	rec := httptest.NewRecorder()
	writeError(rec, httptest.NewRequest("POST", "/v1/stream/x", nil), fmt.Errorf("%w: line 3", model.ErrBadBatch))
	if !strings.Contains(rec.Body.String(), "line 3") {
		t.Errorf("a 400 keeps its detail: %s", rec.Body)
	}
}
