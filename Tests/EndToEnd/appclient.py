"""appclient.py - a raw-socket HTTP/1.1 client that talks to the iReporter API
the way the 2012 iPhone app did.

The app (Marin Todorov's 2012 raywenderlich.com tutorial) subclasses
AFNetworking 1.x's AFHTTPClient (`API.m`): base URL `http://host/`, path
`iReporter/`, `[self setDefaultHeader:@"Accept" value:@"application/json"]`,
and EVERY command goes through
`multipartFormRequestWithMethod:@"POST" path:kAPIPath parameters:params
constructingBodyWithBlock:` -- the text parameters become form-data parts, and
an upload adds `appendPartWithFileData:name:@"file" fileName:@"photo.jpg"
mimeType:@"image/jpeg"` LAST (inside the block, after the parameters). The
session cookie is kept by NSHTTPCookieStorage (here: `CookieJar`).

AFNetworking 1.x multipart body layout (AFHTTPClient.m, AFStreamingMultipartFormData
+ AFHTTPBodyPart, read for this comment, not copied). Constants:

    kAFMultipartFormBoundary = "Boundary+0xAbCdEfGbOuNdArY"   (fixed string in
                               0.x-1.1; 1.2+/2.x use "Boundary+%08X%08X" random)
    CRLF                     = "\\r\\n"
    AFMultipartFormInitialBoundary       = "--" B CRLF           (first part only)
    AFMultipartFormEncapsulationBoundary = CRLF "--" B CRLF      (every later part)
    AFMultipartFormFinalBoundary         = CRLF "--" B "--" CRLF (after last part)

Each AFHTTPBodyPart is read as: its boundary (initial or encapsulation), then
its headers, one `Name: value` CRLF per header, then one CRLF, then the body
bytes verbatim (NSString parameters are `dataUsingEncoding:NSUTF8StringEncoding`),
and the last part is followed by the final boundary. So on the wire:

    --Boundary+0xAbCdEfGbOuNdArY\\r\\n
    Content-Disposition: form-data; name="command"\\r\\n
    \\r\\n
    upload
    \\r\\n--Boundary+0xAbCdEfGbOuNdArY\\r\\n
    Content-Disposition: form-data; name="title"\\r\\n
    \\r\\n
    Sunset
    \\r\\n--Boundary+0xAbCdEfGbOuNdArY\\r\\n
    Content-Disposition: form-data; name="file"; filename="photo.jpg"\\r\\n
    Content-Type: image/jpeg\\r\\n
    \\r\\n
    <jpeg bytes>
    \\r\\n--Boundary+0xAbCdEfGbOuNdArY--\\r\\n

Text parts carry only Content-Disposition (no Content-Type). The request gets
`Content-Type: multipart/form-data; boundary=Boundary+0xAbCdEfGbOuNdArY` and
an explicit `Content-Length` (the body is a stream; AFNetworking computes the
length so NSURLConnection does not chunk it). With no part at all AFNetworking
returns the request unchanged (no body); `multipart_body([])` instead returns
`--B--\\r\\n`, which is what bench/smoke.py sent for GOLDEN.md case 22.

Things that are NOT byte-certain (see the report): the order of the two
headers of the file part and the order of the parameters both come from an
NSDictionary (`allKeys` / key enumeration); AFNetworking >= 1.1 sorts the
parameter keys case-insensitively (`AFQueryStringPairsFromDictionary`), which
is what `AppClient.call()` does with a dict. Request headers: AFNetworking 1.0
sets Accept-Language (`[NSLocale preferredLanguages]` joined by ", " plus
", en-us;q=0.8": on iOS 6 that is every language of the system) and User-Agent
(`bundleId/version (unknown, systemName systemVersion, model, Scale/%f)`); the
app adds Accept; CFNetwork adds Host, Accept-Encoding, Connection and Cookie.
Header ORDER on the wire was CFNetwork's choice; the order here is plausible,
not recorded.
"""
from __future__ import annotations

import gzip
import json
import re
import socket
import threading
import time
import urllib.parse
import zlib
from typing import Iterable, Optional, Sequence, Union

BOUNDARY = "Boundary+0xAbCdEfGbOuNdArY"
CRLF = b"\r\n"
DEFAULT_TIMEOUT = 10.0  # seconds, every socket operation

# What an iPhone (iOS 6, 2012) running the tutorial app sent.
APP_USER_AGENT = "com.touch-code-magic.iReporter/1.0 (unknown, iPhone OS 6.0.1, iPhone, Scale/2.000000)"
APP_ACCEPT_LANGUAGE = (
    "en, fr, de, ja, nl, it, es, pt, pt-PT, da, fi, nb, sv, ko, zh-Hans, zh-Hant, ru, pl, tr, uk, "
    "ar, hr, cs, el, he, ro, sk, th, id, ms, en-GB, ca, hu, vi, en-us;q=0.8"
)

Value = Union[str, bytes]


# --------------------------------------------------------------- request bodies

class FilePart:
    """A file part: appendPartWithFileData:name:fileName:mimeType:."""

    def __init__(self, data: bytes, name: str = "file", filename: str = "photo.jpg",
                 content_type: str = "image/jpeg", content_type_first: bool = False):
        self.data, self.name, self.filename, self.content_type = data, name, filename, content_type
        self.content_type_first = content_type_first  # NSDictionary order is not defined: both occur

    def headers(self):
        h = [("Content-Disposition", f'form-data; name="{self.name}"; filename="{self.filename}"'),
             ("Content-Type", self.content_type)]
        return h[::-1] if self.content_type_first else h


def _b(v: Value) -> bytes:
    return v if isinstance(v, bytes) else v.encode("utf-8")


def multipart_body(fields: Sequence[tuple[str, Value]], files: Iterable[FilePart] = (),
                   boundary: str = BOUNDARY) -> bytes:
    """The AFNetworking 1.x body: text parts in the given order, then the files."""
    parts = [([("Content-Disposition", f'form-data; name="{name}"')], _b(value)) for name, value in fields]
    parts += [(f.headers(), f.data) for f in files]
    b = boundary.encode()
    if not parts:
        return b"--" + b + b"--" + CRLF
    out = bytearray()
    for i, (headers, body) in enumerate(parts):
        out += (b"--" + b + CRLF) if i == 0 else (CRLF + b"--" + b + CRLF)
        for k, v in headers:
            out += _b(f"{k}: {v}") + CRLF
        out += CRLF
        out += body
    out += CRLF + b"--" + b + b"--" + CRLF
    return bytes(out)


def multipart_content_type(boundary: str = BOUNDARY) -> str:
    return f"multipart/form-data; boundary={boundary}"


def urlencoded_body(fields: Sequence[tuple[str, Value]]) -> bytes:
    return "&".join(f"{urllib.parse.quote_plus(k)}={urllib.parse.quote_plus(_b(v))}"
                    for k, v in fields).encode()


# -------------------------------------------------------------------- responses

class Response:
    """status, reason, ordered headers, body (dechunked, gunzipped), raw bytes."""

    def __init__(self, status_line: str, headers: list[tuple[str, str]], raw_body: bytes,
                 raw: bytes, body: bytes, chunked: bool, elapsed: float):
        self.status_line = status_line
        parts = status_line.split(" ", 2)
        self.version = parts[0]
        self.status = int(parts[1])
        self.reason = parts[2] if len(parts) > 2 else ""
        self.headers = headers
        self.raw_body = raw_body
        self.raw = raw
        self.body = body
        self.chunked = chunked
        self.elapsed = elapsed
        self.sent_cookie: Optional[str] = None  # the Cookie header of the request (AppClient only)

    def header(self, name: str) -> Optional[str]:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def headers_all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def set_cookies(self) -> list[str]:
        return self.headers_all("Set-Cookie")

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"<Response {self.status} {self.headers!r} body={self.body[:300]!r}>"


class HTTPError(Exception):
    pass


def _recv_until(sock, buf: bytearray, marker: bytes, limit: int = 1 << 20) -> int:
    while True:
        i = buf.find(marker)
        if i >= 0:
            return i
        if len(buf) > limit:
            raise HTTPError("response header too large")
        c = sock.recv(65536)
        if not c:
            raise HTTPError(f"connection closed before {marker!r} (got {bytes(buf[:200])!r})")
        buf += c


def _recv_exact(sock, buf: bytearray, n: int):
    while len(buf) < n:
        c = sock.recv(max(65536, n - len(buf)))
        if not c:
            raise HTTPError(f"connection closed after {len(buf)} of {n} body bytes")
        buf += c


def read_response(sock, method: str = "GET", t0: Optional[float] = None) -> tuple[Response, bool]:
    """Read one response framed by Content-Length / chunked / close.
    Returns (response, connection_reusable)."""
    t0 = time.monotonic() if t0 is None else t0
    buf = bytearray()
    while True:  # skip 1xx interim responses
        end = _recv_until(sock, buf, b"\r\n\r\n")
        head = bytes(buf[:end]).decode("latin-1")
        del buf[:end + 4]
        lines = head.split("\r\n")
        status_line = lines[0]
        code = int(status_line.split(" ")[1])
        headers = []
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers.append((k, v.strip(" \t")))
        if 100 <= code < 200:
            raw_head = head
            continue
        break
    raw_head = head
    hdr = {k.lower(): v for k, v in headers}
    te = hdr.get("transfer-encoding", "")
    chunked = "chunked" in te.lower()
    reusable = "close" not in hdr.get("connection", "").lower() and status_line.startswith("HTTP/1.1")
    if method == "HEAD" or code in (204, 304):
        raw_body = b""
        body = b""
    elif chunked:
        out = bytearray()
        pos = 0
        while True:
            i = _recv_until_from(sock, buf, b"\r\n", pos)
            size = int(bytes(buf[pos:i]).split(b";")[0].strip(), 16)
            pos = i + 2
            if size == 0:
                # trailers until an empty line
                while True:
                    j = _recv_until_from(sock, buf, b"\r\n", pos)
                    line = bytes(buf[pos:j])
                    pos = j + 2
                    if line == b"":
                        break
                break
            _recv_exact(sock, buf, pos + size + 2)
            out += buf[pos:pos + size]
            pos += size + 2
        raw_body = bytes(buf[:pos])
        body = bytes(out)
    elif "content-length" in hdr:
        n = int(hdr["content-length"])
        _recv_exact(sock, buf, n)
        raw_body = bytes(buf[:n])
        body = raw_body
    else:
        reusable = False
        while True:
            try:
                c = sock.recv(65536)
            except ConnectionResetError:
                break
            if not c:
                break
            buf += c
        raw_body = bytes(buf)
        body = raw_body
    enc = hdr.get("content-encoding", "").lower()
    if enc == "gzip":
        body = gzip.decompress(body)
    elif enc == "deflate":
        body = zlib.decompress(body)
    raw = raw_head.encode("latin-1") + b"\r\n\r\n" + raw_body
    return Response(status_line, headers, raw_body, raw, body, chunked, time.monotonic() - t0), reusable


def _recv_until_from(sock, buf: bytearray, marker: bytes, start: int) -> int:
    while True:
        i = buf.find(marker, start)
        if i >= 0:
            return i
        c = sock.recv(65536)
        if not c:
            raise HTTPError("connection closed inside a chunked body")
        buf += c


def send_raw(host: str, port: int, data: bytes, timeout: float = DEFAULT_TIMEOUT,
             method: str = "POST", shutdown_write: bool = False) -> Response:
    """Send arbitrary bytes on a fresh connection and read one response.
    Tolerates the server closing early (e.g. a 413 before the body is read)."""
    t0 = time.monotonic()
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        try:
            s.sendall(data)
            if shutdown_write:
                s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass
        resp, _ = read_response(s, method, t0)
        return resp
    finally:
        s.close()


# ------------------------------------------------------------------ cookie jar

class CookieJar:
    """NSHTTPCookieStorage, reduced to what matters here: name=value pairs,
    deleted by a Set-Cookie that expires them (Max-Age<=0 or a past Expires)."""

    def __init__(self):
        self.cookies: dict[str, str] = {}
        self.history: list[str] = []  # every Set-Cookie header seen, in order
        self.last_value: dict[str, str] = {}  # last non-deleted value per name (for "same cookie" cases)

    def update(self, set_cookie_headers: Iterable[str]):
        for sc in set_cookie_headers:
            self.history.append(sc)
            first, *attrs = [p.strip() for p in sc.split(";")]
            name, _, value = first.partition("=")
            expired = False
            for a in attrs:
                k, _, v = a.partition("=")
                k = k.strip().lower()
                if k == "max-age":
                    try:
                        expired = expired or int(v) <= 0
                    except ValueError:
                        pass
                elif k == "expires":
                    try:
                        from email.utils import parsedate_to_datetime
                        expired = expired or parsedate_to_datetime(v).timestamp() < time.time()
                    except (TypeError, ValueError):
                        pass
            if expired:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
                self.last_value[name] = value

    def header(self) -> Optional[str]:
        if not self.cookies:
            return None
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def get(self, name: str = "PHPSESSID") -> Optional[str]:
        return self.cookies.get(name)

    def clear(self):
        self.cookies.clear()


# ------------------------------------------------------------------ the client

class Endpoint:
    """Where the API lives: http://host:port/prefix/ ."""

    def __init__(self, base_url: str):
        u = urllib.parse.urlsplit(base_url)
        if u.scheme != "http":
            raise ValueError(f"only http:// base URLs are supported: {base_url!r}")
        self.base_url = base_url
        self.host = u.hostname
        self.port = u.port or 80
        self.prefix = u.path if u.path.endswith("/") else u.path + "/"
        self.host_header = u.netloc

    def path(self, rel: str = "") -> str:
        return self.prefix + rel


class AppClient:
    """One 'phone': its own cookie jar and (by default) one keep-alive connection."""

    def __init__(self, endpoint: Endpoint, keep_alive: bool = True, timeout: float = DEFAULT_TIMEOUT,
                 user_agent: str = APP_USER_AGENT, source: Optional[str] = None):
        """source: the local address to connect from (any 127.x.y.z reaches a
        loopback server: phones behind one NAT, or many addresses)."""
        self.ep = endpoint
        self.source = source
        self.jar = CookieJar()
        self.keep_alive = keep_alive
        self.timeout = timeout
        self.user_agent = user_agent
        self._sock = None
        self._lock = threading.Lock()
        self.last_request: bytes = b""
        self.last_cookie: Optional[str] = None  # the Cookie header of the last request (None: none sent)

    # -- connection handling
    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _connect(self):
        self._sock = socket.create_connection((self.ep.host, self.ep.port), timeout=self.timeout,
                                              source_address=(self.source, 0) if self.source else None)

    def build_request(self, method: str, path: str, body: bytes = b"", content_type: Optional[str] = None,
                      cookie: Union[str, None, bool] = True, extra_headers: Sequence[tuple[str, str]] = (),
                      ) -> bytes:
        """cookie=True: from the jar; None/False: no Cookie header; a str: that Cookie header."""
        h = [("Host", self.ep.host_header)]
        if method != "GET":
            h.append(("Content-Length", str(len(body))))
        h.append(("Accept", "application/json"))
        if content_type:
            h.append(("Content-Type", content_type))
        h.append(("Accept-Language", APP_ACCEPT_LANGUAGE))
        h.append(("Accept-Encoding", "gzip, deflate"))
        c = self.jar.header() if cookie is True else (cookie or None)
        self.last_cookie = c
        if c:
            h.append(("Cookie", c))
        h.append(("Connection", "keep-alive" if self.keep_alive else "close"))
        h.append(("User-Agent", self.user_agent))
        h.extend(extra_headers)
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h) + "\r\n"
        return head.encode("utf-8") + body

    def request(self, method: str, path: str, body: bytes = b"", content_type: Optional[str] = None,
                cookie: Union[str, None, bool] = True, extra_headers: Sequence[tuple[str, str]] = (),
                update_jar: bool = True) -> Response:
        data = self.build_request(method, path, body, content_type, cookie, extra_headers)
        self.last_request = data
        with self._lock:
            for attempt in (0, 1):
                fresh = self._sock is None
                if fresh:
                    self._connect()
                t0 = time.monotonic()
                try:
                    try:
                        self._sock.sendall(data)
                    except (BrokenPipeError, ConnectionResetError):
                        if not fresh and attempt == 0:
                            raise HTTPError("stale keep-alive connection")
                        # the server may have answered early (413) and closed: read what it said
                    resp, reusable = read_response(self._sock, method, t0)
                except (HTTPError, ConnectionResetError, BrokenPipeError) as e:
                    self.close()
                    # a keep-alive connection the server closed while idle: retry once on a new one
                    if not fresh and attempt == 0:
                        continue
                    raise HTTPError(f"{method} {path}: {e}") from e
                if not (self.keep_alive and reusable):
                    self.close()
                break
        resp.sent_cookie = self.last_cookie
        if update_jar:
            self.jar.update(resp.set_cookies)
        return resp

    # -- what the app does
    def call(self, params, file: Optional[Union[bytes, FilePart]] = None, files: Sequence[FilePart] = (),
             cookie: Union[str, None, bool] = True, boundary: str = BOUNDARY) -> Response:
        """API.commandWithParams: POST <prefix> as multipart/form-data.
        params: a dict (keys sorted case-insensitively, as AFNetworking >= 1.1 did)
        or a list of (name, value) pairs sent in that order."""
        if isinstance(params, dict):
            fields = sorted(params.items(), key=lambda kv: kv[0].lower())
        else:
            fields = list(params)
        fl = list(files)
        if file is not None:
            fl.append(file if isinstance(file, FilePart) else FilePart(file))
        body = multipart_body(fields, fl, boundary)
        return self.request("POST", self.ep.path(), body, multipart_content_type(boundary), cookie)

    def post_urlencoded(self, fields: Sequence[tuple[str, Value]], cookie: Union[str, None, bool] = True) -> Response:
        return self.request("POST", self.ep.path(), urlencoded_body(fields),
                            "application/x-www-form-urlencoded", cookie)

    def get(self, rel: str = "", cookie: Union[str, None, bool] = True, path: Optional[str] = None) -> Response:
        return self.request("GET", path if path is not None else self.ep.path(rel), b"", None, cookie)

    # convenience wrappers, named after the app's commands
    def register(self, username: Value, password: Value) -> Response:
        return self.call({"command": "register", "username": username, "password": password})

    def login(self, username: Value, password: Value) -> Response:
        return self.call({"command": "login", "username": username, "password": password})

    def logout(self) -> Response:
        return self.call({"command": "logout"})

    def upload(self, data: bytes, title: Value) -> Response:
        return self.call({"command": "upload", "title": title}, file=data)

    def stream(self, id_photo: Optional[Value] = None) -> Response:
        p = {"command": "stream"}
        if id_photo is not None:
            p["IdPhoto"] = id_photo
        return self.call(p)

    @property
    def session_id(self) -> Optional[str]:
        return self.jar.get("PHPSESSID")


# --------------------------------------------------------------- small helpers

def jpeg_size(data: bytes) -> Optional[tuple[int, int]]:
    """(width, height) from a JPEG's SOFn marker, without any image library."""
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    n = len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            i += 1
            continue
        m = data[i + 1]
        if m == 0xFF:
            i += 1
            continue
        if m in (0xD8, 0x01) or 0xD0 <= m <= 0xD7:
            i += 2
            continue
        if m in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if i + 9 > n:
                return None
            h = int.from_bytes(data[i + 5:i + 7], "big")
            w = int.from_bytes(data[i + 7:i + 9], "big")
            return w, h
        if m == 0xD9:
            return None
        seglen = int.from_bytes(data[i + 2:i + 4], "big")
        i += 2 + seglen
    return None


def php_json(obj) -> bytes:
    """json_encode() as PHP does it: compact, non-ASCII as \\uXXXX (surrogate
    pairs for astral characters, lower-case hex), '/' escaped as '\\/', DEL
    (0x7f) left as is (Python's ensure_ascii would escape it)."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    out = []
    for ch in s:  # non-ASCII and '/' can only occur inside strings
        o = ord(ch)
        if o < 0x80:
            out.append("\\/" if ch == "/" else ch)
        elif o < 0x10000:
            out.append("\\u%04x" % o)
        else:
            o -= 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF)))
    return "".join(out).encode()


def php_urldecode(s: Value) -> bytes:
    """PHP's urldecode(): '+' -> space, %XX -> byte (invalid escapes kept)."""
    b = _b(s).replace(b"+", b" ")
    return re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), b)
