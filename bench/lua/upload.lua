-- upload.lua - POST command=upload as multipart/form-data, like the app:
-- fields command, title and file (filename photo.jpg, image/jpeg).
--   UPLOAD_FILE   the JPEG to send (required)
--   COOKIE        "PHPSESSID=..." of a logged-in session: every request uses it
--   COOKIES_FILE  or one "PHPSESSID=..." per line: requests cycle through them
--                 (many logged-in clients instead of one)
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '{"successful":1}' end
local data = read_file(assert(os.getenv("UPLOAD_FILE"), "set UPLOAD_FILE"))
local body = "--" .. BOUNDARY .. "\r\nContent-Disposition: form-data; name=\"command\"\r\n\r\nupload\r\n" ..
             "--" .. BOUNDARY .. "\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nwrk upload\r\n" ..
             "--" .. BOUNDARY .. "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\n" ..
             "Content-Type: image/jpeg\r\n\r\n" .. data .. "\r\n--" .. BOUNDARY .. "--\r\n"
wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "multipart/form-data; boundary=" .. BOUNDARY
local cookie = os.getenv("COOKIE")
if cookie and cookie ~= "" then wrk.headers["Cookie"] = cookie end

local cookies_file = os.getenv("COOKIES_FILE")
if cookies_file and cookies_file ~= "" then
  local cookies, n = {}, 0
  function init(args)
    cookies = read_lines(cookies_file)
    n = (thread_no or 0) * 7
  end
  function request()
    n = n + 1
    return wrk.format(nil, nil, {["Content-Type"] = wrk.headers["Content-Type"],
                                 ["Cookie"] = cookies[n % #cookies + 1]}, body)
  end
end
