-- search.lua - POST command=search, the queries of QUERIES (a file, one
-- urlencoded q= value a line; default bench/search/queries.txt) in turn.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '{"result":[' end
post_queries("command=search&q=")
