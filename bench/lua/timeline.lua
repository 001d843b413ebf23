-- timeline.lua - GET TIMELINE (a Mastodon-compatible API path, default
-- /api/v1/timelines/home) as each of the viewers of TOKENS (a file, one
-- access token a line) in turn: each request is another person's.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '[{"id":"' end
local tokens = read_lines(assert(os.getenv("TOKENS"), "TOKENS: the viewers' access tokens, one a line"))
local path = os.getenv("TIMELINE") or "/api/v1/timelines/home"
local next_viewer = 0
request = function()
  next_viewer = next_viewer % #tokens + 1
  return wrk.format("GET", path, {Authorization = "Bearer " .. tokens[next_viewer]})
end
