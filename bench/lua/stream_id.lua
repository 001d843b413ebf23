-- stream_id.lua - POST command=stream&IdPhoto=N: one photo by id, N cycling
-- through ID_MIN..ID_MAX (default 2..10001, the seeded range), each thread
-- starting at its own offset.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '{"result":[{"IdPhoto":' end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
local lo = tonumber(os.getenv("ID_MIN") or "2")
local hi = tonumber(os.getenv("ID_MAX") or "10001")
local n = 0
function init(args) n = (thread_no or 0) * 4999 end
function request()
  n = n + 1
  return wrk.format(nil, nil, nil, "command=stream&IdPhoto=" .. (lo + n % (hi - lo + 1)))
end
