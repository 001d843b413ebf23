-- flickr_search.lua - POST flickr.photos.search (JSON, nojsoncallback, 50 a
-- page: the native search's page) to the Flickr REST endpoint, the queries of
-- QUERIES (default bench/search/queries.txt) in turn; the URL is the endpoint.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
if EXPECT == "" then EXPECT = '{"photos":{' end
post_queries("method=flickr.photos.search&format=json&nojsoncallback=1&per_page=50&text=")
