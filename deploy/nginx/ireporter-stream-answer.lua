-- nginx's Lua module (Debian's libnginx-mod-http-lua) for
-- ireporter-stream-answer.conf: answers the 2012 app's plain `stream` (the
-- body is `command=stream` and nothing else, urlencoded or as the app's one
-- multipart part) from the file the server keeps (`stream_answer_file`),
-- without a FastCGI round trip; every other request, and a stream while
-- the file is missing or ended, goes to the server (@ireporter_api).
--
-- The file's first line is when it ends (Unix milliseconds), then the
-- answer. The server removes it before it answers any change of the
-- stream, and counts each removal in `<file>.epoch` (8 bytes). Each nginx
-- worker keeps the answer it read in memory and answers from it while the
-- count is what it was before the file was read and the answer has not
-- ended: the file is read once per answer and worker, not per request.
local ffi = require("ffi")

-- Own names for the C functions (asm labels): other Lua code in this
-- nginx may declare them too, and LuaJIT refuses a second declaration
-- (this file's own, if it is ever run twice in one worker: pcall).
pcall(ffi.cdef, [[
int ireporter_open(const char *path, int flags, ...) __asm__("open");
int ireporter_close(int fd) __asm__("close");
int64_t ireporter_lseek(int fd, int64_t offset, int whence) __asm__("lseek");
void *ireporter_mmap(void *address, size_t length, int protection, int flags, int fd, int64_t offset) __asm__("mmap");
int ireporter_munmap(void *address, size_t length) __asm__("munmap");
]])
local C = ffi.C
local O_RDONLY, O_CLOEXEC, SEEK_END, PROT_READ, MAP_SHARED = 0, 0x80000, 2, 1, 1
local MAP_FAILED = ffi.cast("void *", -1)

local FORM = "application/x-www-form-urlencoded"
local MULTIPART = [[^multipart/form-data\s*;\s*boundary=(?:"([^"]+)"|([^\s";]+))\s*$]]

-- Per file path: the mapped count, and the answer kept with the count and end it was read under.
local files = {}

-- After ngx.req.read_body().
local function is_plain_stream()
    if ngx.req.get_method() ~= "POST" or ngx.var.args then return false end
    local body = ngx.req.get_body_data()
    if not body then return false end -- not in memory (nginx wrote it to a file): not answered here
    local type = ngx.var.content_type or ""
    if type:match("^[^;]*"):lower():match("^%s*(.-)%s*$") == FORM then return body == "command=stream" end
    local multipart = ngx.re.match(type, MULTIPART, "ijo")
    if not multipart then return false end
    local boundary = multipart[1] or multipart[2]
    return body == "--" .. boundary .. '\r\nContent-Disposition: form-data; name="command"\r\n\r\nstream\r\n--'
        .. boundary .. "--\r\n"
end

-- The count's word, mapped anew (the server makes the file once; mapping it
-- again each second follows one made again), or nil without one.
local function map_epoch(file, path, now)
    file.remap_at = now + 1000
    if file.mapping then C.ireporter_munmap(file.mapping, 8) end
    file.mapping, file.epoch = nil, nil
    local fd = C.ireporter_open(path .. ".epoch", O_RDONLY + O_CLOEXEC)
    if fd < 0 then return end
    -- Never a shorter file: reading past its end would kill the worker.
    if C.ireporter_lseek(fd, 0, SEEK_END) >= 8 then
        local memory = C.ireporter_mmap(nil, 8, PROT_READ, MAP_SHARED, fd, 0)
        if memory ~= MAP_FAILED then file.mapping, file.epoch = memory, ffi.cast("const volatile int64_t *", memory) end
    end
    C.ireporter_close(fd)
end

-- The answer read from the file, kept while the count stays; nil when there is none or it has ended.
local function read_answer(file, path, now)
    if not file.epoch or now >= file.remap_at then map_epoch(file, path, now) end
    file.answer = nil
    -- The count first: a removal after it shows as another count at the next request.
    local count = file.epoch and file.epoch[0]
    local handle = io.open(path, "rb")
    if not handle then return nil end
    local content = handle:read("*a")
    handle:close()
    local newline = content and content:find("\n", 1, true)
    local ends = newline and tonumber(content:sub(1, newline - 1))
    if not ends or ends <= now then return nil end
    local answer = content:sub(newline + 1)
    if count then file.answer, file.count, file.ends = answer, count, ends end
    return answer
end

local function kept_answer(path)
    local file = files[path]
    if not file then
        file = {}
        files[path] = file
    end
    local now = ngx.now() * 1000
    if file.answer and file.ends > now and file.epoch[0] == file.count then return file.answer end
    return read_answer(file, path, now)
end

local function plain_stream_answer(path)
    return is_plain_stream() and kept_answer(path)
end

local function answer(path)
    ngx.req.read_body()
    -- Whatever goes wrong here (an error is a bug), the server answers.
    local ok, kept = pcall(plain_stream_answer, path)
    if not ok then ngx.log(ngx.ERR, "ireporter-stream-answer.lua: ", kept) end
    if not ok or not kept then return ngx.exec("@ireporter_api") end
    -- The server's own headers for this answer (those of the PHP original's session_start()).
    local headers = ngx.header
    headers["Content-Type"] = "application/json"
    headers["Content-Length"] = #kept
    headers["Expires"] = "Thu, 19 Nov 1981 08:52:00 GMT"
    headers["Cache-Control"] = "no-store, no-cache, must-revalidate"
    headers["Pragma"] = "no-cache"
    headers["X-Request-Id"] = ngx.var.request_id
    ngx.print(kept)
end

local module = { answer = answer }
package.loaded.ireporter_stream_answer = module
return module
