-- login.lua - POST command=login with correct credentials, cycling through
-- the users of USERS_FILE (lines "username password", from bench/seed.py).
-- No cookie is sent: every login makes a new session, as a fresh client.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '{"result":[{"IdUser":' end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
local bodies = {}
local n = 0
function init(args)
  for _, line in ipairs(read_lines(assert(os.getenv("USERS_FILE"), "set USERS_FILE"))) do
    local u, p = line:match("^(%S+) (%S+)$")
    bodies[#bodies + 1] = "command=login&username=" .. u .. "&password=" .. p
  end
  n = (thread_no or 0) * 500
end
function request()
  n = n + 1
  return wrk.format(nil, nil, nil, bodies[n % #bodies + 1])
end
