# Browser tests (chromedp driving headless Chromium): the console (cmd/dsd) and the kit's
# HTML report (cmd/dsconform). They run under `make unit`; screenshots go to
# .reports/screens/.
#
#   make browser          install Debian's chromium when missing (as root, apt-get)

.PHONY: browser

## browser: make sure a Chromium is there for the browser tests (installs Debian's chromium
## as root when missing); without one those tests skip, saying why.
browser:
	@if [ -n "$$CHROMIUM" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
	  exit 0; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "browser: installing Debian's chromium for the browser tests"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } \
	    || echo "browser: apt-get could not install chromium: the browser tests will skip"; \
	else \
	  echo "browser: no Chromium and not root with apt-get: the browser tests will skip (install chromium, or set CHROMIUM=path)"; \
	fi
