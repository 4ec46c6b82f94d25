#!/usr/bin/env bash
# Regenerates main-a45b08c.db.gz and main-a45b08c.expect: a data file written over HTTP by the
# dsd of main at a45b08c (before the storage seam), and what that dsd served from it.
# Usage: gen-fixture.sh OLD_DSD_BINARY   (run from this directory)
set -euo pipefail
DSD="${1:?usage: gen-fixture.sh OLD_DSD_BINARY}"
OUT="$(pwd)"
WORK="$(mktemp -d)"
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$DSD" --addr 127.0.0.1:0 --data-dir "$WORK/data" >"$WORK/log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do
  U="$(grep -o 'listening on http://[0-9.:]*' "$WORK/log" | sed 's/^listening on //' || true)"
  [ -n "$U" ] && break; sleep 0.1
done
c() { curl -sS -o /dev/null -w '%{http_code}\n' "$@"; }
tok() { printf '0000000000000000_%016d' "$1"; }
c -X PUT "$U/fixt"
c -X PUT "$U/other"
# text, appended three times, with a Stream-Seq
c -X PUT -H 'Content-Type: text/plain' --data 'hello ' "$U/fixt/text"
c -X POST -H 'Content-Type: text/plain' -H 'Stream-Seq: 0001' --data 'world' "$U/fixt/text"
c -X POST -H 'Content-Type: text/plain' --data '!' "$U/fixt/text"
# JSON with records, producers (two appends, then a retry of seq 1)
c -X PUT -H 'Content-Type: application/json' --data '[{"a":1},{"b":2}]' "$U/fixt/json"
for s in 0 1 1; do
  c -X POST -H 'Content-Type: application/json' -H 'Producer-Id: p1' -H 'Producer-Epoch: 3' \
    -H "Producer-Seq: $s" --data "[{\"p\":$s},{\"q\": [1, 2]}]" "$U/fixt/json"
done
# binary, closed by a producer
head -c 3000 /dev/urandom >"$WORK/bin"
c -X PUT -H 'Content-Type: application/octet-stream' --data-binary @"$WORK/bin" "$U/fixt/bin"
c -X POST -H 'Content-Type: application/octet-stream' -H 'Producer-Id: w' -H 'Producer-Epoch: 0' \
  -H 'Producer-Seq: 0' -H 'Stream-Closed: true' --data-binary 'tail' "$U/fixt/bin"
# closed at creation, with attributes and a TTL
c -X PUT -H 'Content-Type: text/plain' -H 'Stream-Closed: true' -H 'Stream-TTL: 86400' \
  -H 'Stream-Attrs: {"title":"closed one","metadata":{"n":"1"}}' --data 'final' "$U/fixt/closed"
# snapshot and retention
c -X PUT -H 'Content-Type: text/plain' --data 'aaaa' "$U/fixt/snap"
c -X POST -H 'Content-Type: text/plain' --data 'bbbb' "$U/fixt/snap"
c -X POST -H 'Content-Type: text/plain' --data 'cccc' "$U/fixt/snap"
c -X PUT -H 'Content-Type: application/x-state' --data 'STATE@8' "$U/fixt/snap/snapshot/$(tok 8)"
c -X PUT "$U/fixt/snap/retention/$(tok 4)"
# fork of text at offset 6 with a sub-offset and its own append; the source then deleted (soft)
c -X PUT -H "Stream-Forked-From: /fixt/text" -H "Stream-Fork-Offset: $(tok 6)" \
  -H 'Stream-Fork-Sub-Offset: 2' "$U/fixt/fork"
c -X POST -H 'Content-Type: text/plain' --data '+fork' "$U/fixt/fork"
c -X PUT -H 'Content-Type: text/plain' --data 'src' "$U/fixt/src"
c -X PUT -H "Stream-Forked-From: /fixt/src" "$U/fixt/fork2"
c -X DELETE "$U/fixt/src"
# a deleted and re-created stream, a stream in the other bucket, the flat surface
c -X PUT -H 'Content-Type: text/plain' --data 'one' "$U/fixt/re"
c -X DELETE "$U/fixt/re"
c -X PUT -H 'Content-Type: text/plain' --data 'two' "$U/fixt/re"
c -X PUT -H 'Content-Type: text/plain' --data 'elsewhere' "$U/other/s"
c -X PUT -H 'Content-Type: text/plain' --data 'flat' "$U/v1/stream/flat"
c -X PUT -H 'Content-Type: application/json' --data '{"title":"Text","metadata":{"k":"v"}}' "$U/fixt/text/attrs"
# What the old dsd serves: per stream, the status, the stream headers and the body.
: >"$OUT/main-a45b08c.expect"
for p in fixt/text fixt/json fixt/bin fixt/closed fixt/snap fixt/fork fixt/fork2 fixt/src fixt/re other/s default/flat; do
  curl -sS -D "$WORK/h" -o "$WORK/b" "$U/$p?offset=-1"
  curl -sS -I "$U/$p" >"$WORK/hh"
  {
    echo "stream $p"
    head -1 "$WORK/h" | awk '{print "status", $2}'
    grep -i '^stream-\|^content-type\|^etag' "$WORK/h" | grep -iv 'stream-cursor' | tr -d '\r' | sort -f || true
    grep -i '^stream-' "$WORK/hh" | tr -d '\r' | sort -f | sed 's/^/head /' || true
    echo "body $(base64 -w0 <"$WORK/b")"
  } >>"$OUT/main-a45b08c.expect"
done
for p in fixt/json fixt/snap; do
  curl -sS -L -D "$WORK/h" -o "$WORK/b" "$U/$p/snapshot"
  echo "snapshot $p $(grep '^HTTP' "$WORK/h" | tail -1 | awk '{print $2}') $(grep -i '^stream-snapshot\|^content-type' "$WORK/h" | tr -d '\r' | sort -f | tr '\n' ' ')$(base64 -w0 <"$WORK/b")" >>"$OUT/main-a45b08c.expect"
done
for p in fixt/text fixt/closed; do echo "attrs $p $(curl -sS "$U/$p/attrs")" >>"$OUT/main-a45b08c.expect"; done
echo "list fixt $(curl -sS "$U/fixt/streams" | tr -d '\n')" >>"$OUT/main-a45b08c.expect"
echo "bucket other $(curl -sS "$U/other" | tr -d '\n')" >>"$OUT/main-a45b08c.expect"
kill -TERM "$PID"; wait "$PID" || true
gzip -9 <"$WORK/data/dsd.db" >"$OUT/main-a45b08c.db.gz"
