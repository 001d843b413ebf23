-- stream.lua - POST command=stream (form-urlencoded): the newest 50 photos.
-- Also used for the ceilings (same request to the fixed FastCGI responder).
-- Env COOKIE="PHPSESSID=..." sends a fixed session cookie (default: none).
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '{"result":[' end
wrk.method = "POST"
wrk.body = "command=stream"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
local cookie = os.getenv("COOKIE")
if cookie and cookie ~= "" then wrk.headers["Cookie"] = cookie end
