-- wrk script for the ModelService admission webhook benchmark (bench/run.sh).
--
-- Environment:
--   BENCH_BODY    path of the AdmissionReview JSON file to POST (required)
--   BENCH_EXPECT  a plain substring every response body must contain,
--                 e.g. '"allowed":true' (optional)
--   BENCH_METHOD  HTTP method (default POST; the transport baseline uses GET)
--   BENCH_STATUS  the expected status (default 200; the baseline expects 405)
--
-- Each wrk thread counts responses whose status is not the expected one and
-- responses whose body lacks BENCH_EXPECT; done() prints one machine-readable
-- line (non200 = responses with an unexpected status):
--   RESULT requests=N duration_us=N rps=F p50_us=N p99_us=N p999_us=N
--          mean_us=F max_us=N non200=N mismatch=N connect=N read=N write=N timeout=N
-- Keep-alive is wrk's default (HTTP/1.1, one request at a time per connection).

local body_path = os.getenv("BENCH_BODY")
if not body_path then error("set BENCH_BODY to the AdmissionReview file") end
local f = assert(io.open(body_path, "rb"))
local body = f:read("*a"):gsub("%s+$", "")
f:close()
local expect = os.getenv("BENCH_EXPECT") or ""
local want_status = tonumber(os.getenv("BENCH_STATUS") or "200")

wrk.method = os.getenv("BENCH_METHOD") or "POST"
if wrk.method == "POST" then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end

-- Main state: keep every thread to read its counters in done().
local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

-- Thread state.
non200 = 0
mismatch = 0
first_bad = ""

function response(status, headers, resp_body)
  if status ~= want_status then
    non200 = non200 + 1
    if first_bad == "" then first_bad = "status " .. status .. ": " .. string.sub(resp_body or "", 1, 200) end
  elseif expect ~= "" and not string.find(resp_body or "", expect, 1, true) then
    mismatch = mismatch + 1
    if first_bad == "" then first_bad = "body: " .. string.sub(resp_body or "", 1, 200) end
  end
end

function done(summary, latency, requests)
  local n200, nmis, bad = 0, 0, ""
  for _, t in ipairs(threads) do
    n200 = n200 + t:get("non200")
    nmis = nmis + t:get("mismatch")
    local fb = t:get("first_bad")
    if bad == "" and fb and fb ~= "" then bad = fb end
  end
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d duration_us=%d rps=%.1f p50_us=%d p99_us=%d p999_us=%d mean_us=%.1f max_us=%d " ..
    "non200=%d mismatch=%d connect=%d read=%d write=%d timeout=%d\n",
    summary.requests, summary.duration, summary.requests / secs,
    latency:percentile(50.0), latency:percentile(99.0), latency:percentile(99.9),
    latency.mean, latency.max, n200, nmis, e.connect, e.read, e.write, e.timeout))
  if bad ~= "" then io.write("FIRST_BAD " .. bad:gsub("\n", " ") .. "\n") end
end
