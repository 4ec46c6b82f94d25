#!/usr/bin/env bash
# Runs the upstream suite against $DS_BASE_URL and prints its tally. Extra args go to vitest
# (e.g. -t "Fork"). Env: PEER_DIR, UPSTREAM_JSON (write vitest's JSON report there),
# UPSTREAM_ALLOW_FAIL (a regex of test names whose failures are tolerated: none by default),
# UPSTREAM_TEST_TIMEOUT_MS (each test's time limit, default 30000: vitest's 5 s is client CPU
# on a loaded machine, e.g. "chunk-size pagination" checks its 100 KiB with 102,400 expect()
# calls, about 1 s of node's CPU on an idle core, while dsd answers its four requests in
# about 10 ms; a limit only turns slowness into failure, so more headroom hides no bug).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEER_DIR="${PEER_DIR:-$ROOT/.peers}"
JSON="${UPSTREAM_JSON:-}"
if [ -z "$JSON" ]; then
  JSON="$(mktemp "${TMPDIR:-/tmp}/upstream.XXXXXX.json")"
  trap 'rm -f "$JSON" "$JSON.log"' EXIT
fi
cd "$PEER_DIR" || exit 2
npx --no-install vitest run suite.test.mjs --testTimeout="${UPSTREAM_TEST_TIMEOUT_MS:-30000}" --reporter=dot --reporter=json --outputFile.json="$JSON" "$@" >"$JSON.log" 2>&1
rc=$?
node -e '
const r = require(process.argv[1]);
const fails = [], skips = [];
let passed = 0, failed = 0, skipped = 0;
for (const f of r.testResults) for (const t of f.assertionResults) {
  if (t.status === "passed") passed++;
  else if (t.status === "failed") { failed++; fails.push(t.fullName + "\n    " + (t.failureMessages[0] || "").split("\n")[0]); }
  else { skipped++; skips.push(t.status + " " + t.fullName); }
}
// The suite gates tests on its options; without DS_SUBSCRIPTIONS=1 the harness runs it with
// subscriptions: false, so those are the skips.
for (const s of skips) {
  const name = s.slice(s.indexOf(" ") + 1);
  const why = name.startsWith("Reserved subscription APIs") ? "its subscriptions option is off" : "gated by the suite runIf/skipIf options";
  console.log("SKIP (" + s.split(" ")[0] + " by the suite: " + why + ") " + name);
}
for (const f of fails) console.log("FAIL " + f);
console.log(`upstream suite: ${passed} passed, ${failed} failed, ${skipped} skipped`);
' "$JSON" || { tail -50 "$JSON.log"; exit 2; }
exit $rc
