-- common.lua - shared by the iReporter wrk scripts (dofile'd by each one;
-- also usable alone for a GET: wrk -s common.lua URL).
--
-- Every response is checked (unless CHECK=0): HTTP 200 and a body starting
-- with EXPECT (each script sets a default; the environment variable EXPECT
-- overrides it). The API answers its errors with HTTP 200 and a JSON
-- {"error":...} body, so the status alone would count a refused upload or
-- a failed login as a success.
--
-- done() prints one machine-readable line that bench/wrkrun.py parses:
--   WRKJSON {...}   latencies in microseconds, p50/p75/p90/p99/p99.9,
--                   bad_status / bad_body: responses that failed the check,
--                   bad_sample: the start of the first bad body.
BENCH_DIR = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
BOUNDARY = "Boundary+0xAbCdEfGbOuNdArY"   -- what AFNetworking 1.x used
EXPECT = os.getenv("EXPECT") or ""

function read_file(path)
  local f = assert(io.open(path, "rb"), "cannot open " .. tostring(path))
  local d = f:read("*a"); f:close(); return d
end

function read_lines(path)
  local t = {}
  for line in io.lines(path) do if line ~= "" then t[#t + 1] = line end end
  return t
end

-- Each request POSTs `form` followed by the next query of QUERIES (a file,
-- one urlencoded value a line; default bench/search/queries.txt), in turn.
function post_queries(form)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  local queries = read_lines(os.getenv("QUERIES") or (BENCH_DIR .. "../search/queries.txt"))
  local next_query = 0
  request = function()
    next_query = next_query % #queries + 1
    return wrk.format(nil, nil, nil, form .. queries[next_query])
  end
end

-- setup() runs in the main Lua state, once per thread: remember the threads
-- so that done() can add up their counters.
local threads = {}
function setup(thread)
  thread:set("thread_no", #threads)
  threads[#threads + 1] = thread
end

-- per-thread counters (globals of each thread's Lua state)
bad_status, bad_body, bad_sample = 0, 0, ""

if os.getenv("CHECK") ~= "0" then
  function response(status, headers, body)
    if status ~= 200 then
      bad_status = bad_status + 1
      if bad_sample == "" then bad_sample = "HTTP " .. status .. " " .. body:sub(1, 120) end
    elseif EXPECT ~= "" and body:find(EXPECT, 1, true) ~= 1 then
      bad_body = bad_body + 1
      if bad_sample == "" then bad_sample = body:sub(1, 160) end
    end
  end
end

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
end

function done(summary, latency, requests)
  local bs, bb, sample = 0, 0, ""
  for _, t in ipairs(threads) do
    bs = bs + (t:get("bad_status") or 0)
    bb = bb + (t:get("bad_body") or 0)
    local s = t:get("bad_sample") or ""
    if sample == "" and s ~= "" then sample = s end
  end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"err_connect":%d,"err_read":%d,' ..
    '"err_write":%d,"err_status":%d,"err_timeout":%d,"lat_mean_us":%.1f,"lat_stdev_us":%.1f,' ..
    '"lat_min_us":%d,"lat_max_us":%d,"p50_us":%d,"p75_us":%d,"p90_us":%d,"p99_us":%d,"p999_us":%d,' ..
    '"checked":%s,"expect":%s,"bad_status":%d,"bad_body":%d,"bad_sample":%s}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency.mean, latency.stdev, latency.min, latency.max,
    latency:percentile(50), latency:percentile(75), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9),
    os.getenv("CHECK") ~= "0" and "true" or "false", json_string(EXPECT), bs, bb, json_string(sample)))
end
