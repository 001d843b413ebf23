-- flickr_search.lua - POST flickr.photos.search (JSON, nojsoncallback, 50 a
-- page: the native search's page) to the Flickr REST endpoint, the queries of
-- QUERIES (default bench/search/queries.txt) in turn; the URL is the endpoint.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '{"photos":{' end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
local queries = read_lines(os.getenv("QUERIES") or (BENCH_DIR .. "../search/queries.txt"))
local next_query = 0
function request()
  next_query = next_query % #queries + 1
  return wrk.format(nil, nil, nil,
    "method=flickr.photos.search&format=json&nojsoncallback=1&per_page=50&text=" .. queries[next_query])
end
