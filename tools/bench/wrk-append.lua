-- wrk script for tools/bench/wrk-append.sh: closed-loop POSTs of a fixed-size text/plain body,
-- each connection's requests rotating over the streams "<prefix>-0" .. "<prefix>-(N-1)".
-- Env: WRK_PREFIX (URL path prefix of the streams), WRK_STREAMS (N), WRK_SIZE (body bytes).
-- done() prints one line in dsbench's RESULT format (latencies in ms).
local prefix = os.getenv("WRK_PREFIX")
local nstreams = tonumber(os.getenv("WRK_STREAMS") or "1")
local size = tonumber(os.getenv("WRK_SIZE") or "100")
local body = string.rep("x", size - 1) .. "\n"
local headers = { ["Content-Type"] = "text/plain" }
local threads = {}
local next_stream = 0

function setup(thread)
  -- Spread the threads' starting streams so that they do not walk the streams in lockstep.
  thread:set("first", #threads * 7)
  threads[#threads + 1] = thread
end

function init(args)
  next_stream = tonumber(first) or 0
end

function request()
  local path = prefix .. "-" .. (next_stream % nstreams)
  next_stream = next_stream + 1
  return wrk.format("POST", path, headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  local ms = function(us) return us / 1000 end
  io.write(string.format(
    "RESULT workload=wrk-append streams=%d size=%d reqs=%d dur_s=%.3f rps=%.3f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f errors=%d status_non2xx=%d status_neterr=%d\n",
    nstreams, size, summary.requests, secs, summary.requests / secs,
    ms(latency:percentile(50)), ms(latency:percentile(90)), ms(latency:percentile(99)), ms(latency.max),
    e.status + e.connect + e.read + e.write + e.timeout, e.status, e.connect + e.read + e.write + e.timeout))
end
