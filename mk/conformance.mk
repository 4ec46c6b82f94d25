# Conformance kit (conformance/, cmd/dsconform; see conformance/doc.go).
#
#   make conformance                  dsd, fresh, both surfaces, mode full, with dsd's extensions;
#                                     then the mutants test (the kit must fail broken servers)
#   make conformance BASE_URL=URL [SURFACE=flat|bucketed] [MODE=...] [LABEL_FILTER=...] [DS_LONGPOLL_MS=500]
#                    [SPEC_TIMEOUT=60s] [COMPAT_BUCKET=default] [KIT_ARGS='...']
#                                     any running server (COMPAT_BUCKET: dsd's flat surface,
#                                     whose extension sub-resources live in that bucket;
#                                     SPEC_TIMEOUT: each spec's budget, 60s for 20 s long-polls;
#                                     KIT_ARGS: any further dsconform flags)
#   make conformance-node             the Node reference server (flat surface)
#   make conformance-list             regenerate conformance/testdata/specs.txt
#   make conformance-matrix           dsd (both surfaces) + Node, then CONFORMANCE.md's table
#   make conformance-matrix CADDY_BIN=path/to/caddy
#                                     also the upstream Caddy server, whose results are kept in
#                                     $(CADDY_RESULTS) (committed: CI does not build Caddy, the
#                                     column shows the last run by hand)
#   make conformance-caddy CADDY_BIN=...  the kit against the upstream Caddy server
#
# Reports go to $(REPORT_DIR)/conformance/<run>/{junit.xml,report.json}.

DSCONFORM      := $(BIN)/dsconform
CONF_REPORTS   := $(REPORT_DIR)/conformance
MODE           ?= full
LABEL_FILTER   ?=
# Each spec's budget (dsconform --spec-timeout; empty: the kit's 20s). A server with 20 s
# long-polls needs 60s.
SPEC_TIMEOUT   ?=
# Further dsconform flags, passed as they are (make conformance KIT_ARGS='--stream-path /s/').
KIT_ARGS       ?=
SURFACE        ?= flat
BASE_URL       ?=
EXTENSIONS     ?= auto
# The extensions dsd implements, named explicitly so that a regression fails instead of
# being skipped by auto-detection (buckets is implied on the bucketed surface).
DSD_EXTENSIONS ?= fork,json-record-coordinates-v1,snapshot,bootstrap,append-batch,attrs,subscriptions
# dsd serves subscriptions with webhooks and the loopback exception (the kit's receivers are on
# 127.0.0.1).
DSD_SUBS_FLAGS ?= --webhooks --webhook-allow-loopback

CONF_FLAGS = --mode $(MODE) --long-poll-timeout $${DS_LONGPOLL_MS:-500}ms \
             $(if $(LABEL_FILTER),--label-filter '$(LABEL_FILTER)') \
             $(if $(SPEC_TIMEOUT),--spec-timeout $(SPEC_TIMEOUT)) $(KIT_ARGS)
DSD_CONF   = $(DSCONFORM) $(CONF_FLAGS) --extensions $(DSD_EXTENSIONS) --profiles dsd --compat-bucket default
# The upstream Caddy server (packages/caddy-plugin of the upstream repository, built with
# `go build ./cmd/caddy`): optional, never vendored.
CADDY_BIN     ?=
CADDY_RESULTS := conformance/testdata/runs/caddy.json

.PHONY: conformance conformance-node conformance-caddy conformance-list conformance-matrix

## conformance: the kit against a fresh dsd on both surfaces (or against BASE_URL).
conformance: build
ifeq ($(BASE_URL),)
	@rc=0; \
	DSD_FLAGS="$(DSD_SUBS_FLAGS)" tools/with-server.sh dsd $(DSD_CONF) --surface bucketed --report-dir $(CONF_REPORTS)/dsd-bucketed || rc=1; \
	DSD_FLAGS="$(DSD_SUBS_FLAGS)" tools/with-server.sh dsd $(DSD_CONF) --surface flat --report-dir $(CONF_REPORTS)/dsd-flat || rc=1; \
	DSD_MUTANTS=1 $(GO) test -count=1 -run TestMutants ./cmd/dsconform || rc=1; \
	exit $$rc
else
	$(DSCONFORM) $(CONF_FLAGS) --base-url $(BASE_URL) --surface $(SURFACE) --extensions $(EXTENSIONS) \
	  $(if $(COMPAT_BUCKET),--compat-bucket $(COMPAT_BUCKET)) \
	  --report-dir $(CONF_REPORTS)/custom
endif

## conformance-node: the kit against the Node reference server (flat surface).
conformance-node: build peers-install
	DS_WEBHOOKS=1 tools/with-server.sh node $(DSCONFORM) $(CONF_FLAGS) --surface flat --report-dir $(CONF_REPORTS)/node

## conformance-caddy: the kit against the upstream Caddy server $(CADDY_BIN) (flat surface).
conformance-caddy: build
	@[ -n "$(CADDY_BIN)" ] || { echo "conformance-caddy: set CADDY_BIN to the upstream Caddy server binary" >&2; exit 2; }
	CADDY_BIN=$(CADDY_BIN) tools/with-server.sh caddy $(DSCONFORM) $(CONF_FLAGS) --surface flat --report-dir $(CONF_REPORTS)/caddy

## conformance-list: regenerate the golden spec inventory (checked by go test ./cmd/dsconform).
conformance-list:
	$(GO) run ./cmd/dsconform list --out conformance/testdata/specs.txt

## conformance-matrix: run dsd (both surfaces) and Node in mode full, then regenerate the
## requirements section of CONFORMANCE.md. Failing runs are recorded, not fatal.
conformance-matrix: build peers-install
	-DSD_FLAGS="$(DSD_SUBS_FLAGS)" tools/with-server.sh dsd $(DSCONFORM) --mode full --extensions $(DSD_EXTENSIONS) --profiles dsd \
	  --surface bucketed --report-dir $(CONF_REPORTS)/dsd-bucketed
	-DSD_FLAGS="$(DSD_SUBS_FLAGS)" tools/with-server.sh dsd $(DSCONFORM) --mode full --extensions $(DSD_EXTENSIONS) --profiles dsd \
	  --surface flat --compat-bucket default --report-dir $(CONF_REPORTS)/dsd-flat
	-DS_WEBHOOKS=1 tools/with-server.sh node $(DSCONFORM) --mode full --surface flat --report-dir $(CONF_REPORTS)/node
ifneq ($(CADDY_BIN),)
	-CADDY_BIN=$(CADDY_BIN) tools/with-server.sh caddy $(DSCONFORM) --mode full --surface flat --report-dir $(CONF_REPORTS)/caddy
	@mkdir -p $(dir $(CADDY_RESULTS))
	$(DSCONFORM) results --in $(CONF_REPORTS)/caddy --out $(CADDY_RESULTS) \
	  --server "upstream Caddy server (packages/caddy-plugin), run $$(date -u +%Y-%m-%d) against kit $$(git rev-parse --short HEAD)"
endif
	$(DSCONFORM) matrix --out CONFORMANCE.md \
	  --run "dsd (bucketed)=$(CONF_REPORTS)/dsd-bucketed" \
	  --run "dsd (flat)=$(CONF_REPORTS)/dsd-flat" \
	  --run "node (flat)=$(CONF_REPORTS)/node" \
	  --run "caddy (flat)=$(CADDY_RESULTS)"
