-- feed.lua - POST command=feed (form-urlencoded) as each of the signed-in
-- viewers of COOKIES (a file, one "PHPSESSID=..." a line) in turn: each
-- request is another person's home. FORM adds fields (e.g. "&extras=likes").
-- With COMMAND=stream the same requests ask for the public stream instead.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '{"result":[{' end
local cookies = read_lines(assert(os.getenv("COOKIES"), "COOKIES: the viewers' session cookies, one a line"))
local body = "command=" .. (os.getenv("COMMAND") or "feed") .. (os.getenv("FORM") or "")
local next_viewer = 0
request = function()
  next_viewer = next_viewer % #cookies + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/x-www-form-urlencoded", Cookie = cookies[next_viewer]}, body)
end
