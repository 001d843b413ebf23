-- search.lua - POST command=search, the queries of QUERIES (a file, one
-- urlencoded q= value a line; default bench/search/queries.txt) in turn.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '{"result":[' end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
local queries = read_lines(os.getenv("QUERIES") or (BENCH_DIR .. "../search/queries.txt"))
local next_query = 0
function request()
  next_query = next_query % #queries + 1
  return wrk.format(nil, nil, nil, "command=search&q=" .. queries[next_query])
end
