# Go fuzzing (issue 4): the targets of ./fuzz, one at a time (-fuzz must match exactly one
# target). New crashers land in fuzz/testdata/fuzz/FuzzX/ and are replayed by `go test`.

FUZZTIME     ?= 30s
FUZZ_TARGETS := $(shell grep -h '^func Fuzz' fuzz/*_test.go | sed 's/^func //; s/[^A-Za-z0-9].*//')

.PHONY: fuzz fuzz-replay

## fuzz: fuzz every target for FUZZTIME each (make fuzz FUZZTIME=60s).
fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  echo "== $$t ($(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./fuzz || exit 1; \
	done; echo "make fuzz: $(words $(FUZZ_TARGETS)) targets, nothing found"

## fuzz-replay: run every target on its seeds and committed corpus only.
fuzz-replay:
	@mkdir -p $(REPORT_DIR)
	@$(GO) test -count=1 -run '^Fuzz' -v ./fuzz >$(REPORT_DIR)/fuzz-replay.log 2>&1; rc=$$?; \
	  grep -E '^(--- |ok|FAIL)|SKIP|KI-' $(REPORT_DIR)/fuzz-replay.log; exit $$rc

DIFF_SCRIPTS ?= 5000

.PHONY: difftest

## difftest: a long differential run, model vs engine vs httpd (DIFF_SCRIPTS random scripts of 60 steps).
difftest:
	@mkdir -p $(REPORT_DIR)
	@$(GO) test -count=1 -timeout 60m -run '^TestModelVsEngineAndHTTP$$' -v ./difftest -args -diff.scripts=$(DIFF_SCRIPTS) \
	  >$(REPORT_DIR)/difftest.log 2>&1; rc=$$?; grep -E '^(--- |ok|FAIL)|diff_test' $(REPORT_DIR)/difftest.log; exit $$rc
