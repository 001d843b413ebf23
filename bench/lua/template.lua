-- template.lua - POST a body made from TEMPLATE: each "{n}" becomes a
-- number in LO..HI (RANDOM=1: random, else counting up from each thread's
-- own offset; every "{n}" of one body gets the next one). CTYPE sets the
-- Content-Type (default urlencoded), COOKIES the Cookie headers, URL_PATH the
-- path (default the URL's). Used by bench/reactions.py.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
wrk.method = "POST"
wrk.headers["Content-Type"] = os.getenv("CTYPE") or "application/x-www-form-urlencoded"
-- COOKIES: space-separated Cookie values, one per request in turn (several
-- sessions: one session's file lock would serialise the requests).
local cookies = {}
for cookie in (os.getenv("COOKIES") or ""):gmatch("%S+") do cookies[#cookies + 1] = cookie end
local template = assert(os.getenv("TEMPLATE"), "TEMPLATE is not set")
local lo = tonumber(os.getenv("LO") or "2")
local hi = tonumber(os.getenv("HI") or "2")
local random = os.getenv("RANDOM") == "1"
local n = 0
-- Requests made by this thread: the cookies are taken in turn by request
-- (not by "{n}", which a template without one never advances).
local requests = 0
function init(args)
  n = (thread_no or 0) * 104729
  math.randomseed(1000 + (thread_no or 0))
end
function request()
  local body = template:gsub("{n}", function()
    n = n + 1
    if random then return tostring(math.random(lo, hi)) end
    return tostring(lo + n % (hi - lo + 1))
  end)
  local headers = nil
  if #cookies > 0 then
    headers = {}
    for k, v in pairs(wrk.headers) do headers[k] = v end
    requests = requests + 1
    headers["Cookie"] = cookies[1 + requests % #cookies]
  end
  return wrk.format(nil, os.getenv("URL_PATH"), headers, body)
end
