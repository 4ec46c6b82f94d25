# dsd: a Durable Streams server, its conformance kit and its checks.
# The two README commands: `make run` and `make test`. Area targets live in mk/*.mk.

GO            ?= go
BIN           := $(CURDIR)/bin
REPORT_DIR    ?= $(CURDIR)/.reports
PEER_DIR      ?= $(CURDIR)/.peers
ADDR          ?= 127.0.0.1:4437
ADMIN_ADDR    ?= 127.0.0.1:9437
DATA_DIR      ?= ./data
TIMEOUT       ?= 20m
ENABLE_RACE   ?= 1
EXTRA_TESTFLAGS ?=

# A Node fetched by peers-install (mk/peers.mk) takes precedence over an older system one.
export PATH := $(PEER_DIR)/node20/bin:$(PATH)

ifeq ($(ENABLE_RACE),1)
RACE_FLAG := -race
endif

.PHONY: all build run test unit lint docs clean
all: build

# The revision `dsd --version` prints when the toolchain's VCS stamp is missing.
LDFLAGS ?= -X main.buildRevision=$(shell git describe --always --dirty 2>/dev/null)

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

## run: start dsd on $(ADDR), its admin listener on $(ADMIN_ADDR), data under $(DATA_DIR)
## (SIGTERM or Ctrl-C stops it).
run:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/dsd ./cmd/dsd
	exec $(BIN)/dsd --addr $(ADDR) --admin-addr $(ADMIN_ADDR) --data-dir $(DATA_DIR)

## test: everything CI runs.
test: lint browser unit full-disk-if-root peer-conformance conformance linearizability cluster-check
	@echo "make test: all passed"

## unit: go test over every package (replays fuzz corpora, runs model and engine tests),
## then the engine, difftest and linearizability tests again on the in-memory backend, and
## the engine's tests on JetStream (engine/jsstore on a 3-node in-process cluster).
unit:
	$(GO) test $(RACE_FLAG) -timeout $(TIMEOUT) $(EXTRA_TESTFLAGS) ./...
	DSD_TEST_BACKEND=memory $(GO) test $(RACE_FLAG) -timeout $(TIMEOUT) $(EXTRA_TESTFLAGS) ./engine/ ./difftest/ ./linearizability/
	DSD_TEST_BACKEND=jetstream $(GO) test $(RACE_FLAG) -timeout $(TIMEOUT) $(EXTRA_TESTFLAGS) ./engine/

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files --others --exclude-standard '*.go' 2>/dev/null)); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## docs: regenerate the generated tables in CONFORMANCE.md that come from the code.
docs:
	UPDATE_DOCS=1 $(GO) test -count=1 -run 'TestConformanceDoc' ./httpd/

clean:
	rm -rf $(BIN) $(REPORT_DIR)

include $(wildcard mk/*.mk)
