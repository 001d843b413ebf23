"""golden.py - the requests of GOLDEN.md's transcript (bench/smoke.py --reset),
case by case, so test_golden.py (against one server) and test_differential.py
(against ours and the PHP original) send exactly the same sequence.

`jar` names a client (a 'phone' with its own cookie jar, as in smoke.py);
None = a fresh client without cookie. File parts name an attribute of the
`images` fixture ('photo', 'png', 'empty', ...) or 'huge21' (21 MiB).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from appclient import AppClient, Endpoint, FilePart, Response, multipart_body, multipart_content_type, \
    urlencoded_body
from e2e import ALICE_PASS

MiB = 1024 * 1024


@dataclass
class Step:
    n: int
    title: str
    fields: list = field(default_factory=list)
    files: list = field(default_factory=list)  # image names
    jar: Optional[str] = None
    enc: str = "multipart"  # or "urlencoded"
    method: str = "POST"
    rel: Optional[str] = ""  # path relative to the prefix; None = the prefix without its slash
    stale_cookie: bool = False  # send the jar's last cookie even if the server deleted it


P = ALICE_PASS
STEPS = [
    Step(1, "register (new user)", [("command", "register"), ("username", "alice"), ("password", P)], jar="A"),
    Step(2, "login (correct credentials, fresh client)",
         [("command", "login"), ("username", "alice"), ("password", P)], jar="B"),
    Step(3, "upload (logged in)", [("command", "upload"), ("title", "Sunset at the pier")], ["photo"], jar="B"),
    Step(4, "stream (all, no cookie, form-urlencoded)", [("command", "stream")], jar="C", enc="urlencoded"),
    Step(5, "stream with IdPhoto", [("command", "stream"), ("IdPhoto", "2")], jar="B"),
    Step(6, "fetch the thumbnail", method="GET", rel="upload/2-thumb.jpg"),
    Step(7, "logout", [("command", "logout")], jar="B"),
    Step(8, "upload after logout (same cookie)", [("command", "upload"), ("title", "again")], ["photo"], jar="B",
         stale_cookie=True),
    Step(9, "upload with no session at all", [("command", "upload"), ("title", "anon")], ["photo"], jar="D"),
    Step(10, "register an existing username", [("command", "register"), ("username", "alice"), ("password", "x")],
         jar="E"),
    Step(11, "register the same name in upper case",
         [("command", "register"), ("username", "ALICE"), ("password", "x")], jar="E"),
    Step(12, "login with a wrong password", [("command", "login"), ("username", "alice"), ("password", "wrong")],
         jar="E"),
    Step(13, "login with the username and password hash in other case + trailing space",
         [("command", "login"), ("username", "Alice "), ("password", P.upper())], jar="E"),
    Step(14, "login without a password field", [("command", "login"), ("username", "alice")], jar="E"),
    Step(15, "register without a password field", [("command", "register"), ("username", "bob")], jar="F"),
    Step(16, "login with an empty password", [("command", "login"), ("username", "bob"), ("password", "")],
         jar="F"),
    Step(17, "register: '+' and %-escapes are decoded a second time",
         [("command", "register"), ("username", "c+d%21"), ("password", "p+w")], jar="G"),
    Step(18, "register a 50-character username", [("command", "register"), ("username", "u" * 50),
                                                  ("password", "pw")], jar="H"),
    Step(19, "register the same 50-character username again",
         [("command", "register"), ("username", "u" * 50), ("password", "pw")], jar="H"),
    Step(20, "login with the truncated 45-character name",
         [("command", "login"), ("username", "u" * 45), ("password", "pw")], jar="H"),
    # (`delete` until issue 15 made it a command: docs/COMPATIBILITY.md)
    Step(21, "unknown command", [("command", "delete")], jar="I"),
    Step(22, "POST without any command", [], jar="I"),
    Step(23, "GET /iReporter/", method="GET", rel=""),
    Step(24, "GET /iReporter (no slash)", method="GET", rel=None),
    Step(25, "stream with an IdPhoto that does not exist", [("command", "stream"), ("IdPhoto", "999")], jar="I"),
    Step(26, "stream with IdPhoto=abc", [("command", "stream"), ("IdPhoto", "abc")], jar="I"),
    Step(27, "login (for the upload edge cases)", [("command", "login"), ("username", "alice"), ("password", P)],
         jar="U"),
    Step(28, "upload a PNG named photo.jpg", [("command", "upload"), ("title", "not a jpeg")], ["png"], jar="U"),
    Step(29, "upload without a file field", [("command", "upload"), ("title", "no file")], jar="U"),
    Step(30, "upload an empty (0-byte) file", [("command", "upload"), ("title", "empty")], ["empty"], jar="U"),
    Step(31, "upload with a UTF-8 + emoji title", [("command", "upload"), ("title", "Café ☕ 🌅")], ["photo"],
         jar="U"),
    Step(32, "upload with quotes / SQL in the title",
         [("command", "upload"), ("title", "It's \"cheese\" \\o/ '); DROP TABLE photos;--")], ["photo"], jar="U"),
    Step(33, "upload with '+' and %41 in the title", [("command", "upload"), ("title", "a+b%41")], ["photo"],
         jar="U"),
    Step(34, "upload with a 120-character title", [("command", "upload"), ("title", "T" * 120)], ["photo"],
         jar="U"),
    Step(35, "upload with a title cut inside a UTF-8 character", [("command", "upload"), ("title", "x" * 99 + "é")],
         ["photo"], jar="U"),
    Step(36, "stream after the edge-case uploads", [("command", "stream")], jar="U", enc="urlencoded"),
    Step(37, "upload bigger than client_max_body_size (21 MiB)", [("command", "upload"), ("title", "huge")],
         ["huge21"], jar="U"),
]
BY_N = {s.n: s for s in STEPS}
assert [s.n for s in STEPS] == list(range(1, 38))


def file_bytes(images, name: str) -> bytes:
    if name == "huge21":
        return images.padded_jpeg(21 * MiB)
    return getattr(images, name)


class Runner:
    """Sends the golden steps to one server, one 'phone' per jar."""

    def __init__(self, endpoint: Endpoint, images):
        self.ep = endpoint
        self.images = images
        self.clients: dict[str, AppClient] = {}
        self.last_client: Optional[AppClient] = None

    def client(self, jar: Optional[str]) -> AppClient:
        if jar is None:
            return AppClient(self.ep)
        if jar not in self.clients:
            self.clients[jar] = AppClient(self.ep)
        return self.clients[jar]

    def run(self, n: int) -> Response:
        s = BY_N[n]
        c = self.client(s.jar)
        self.last_client = c
        if s.stale_cookie:
            v = c.jar.last_value.get("PHPSESSID")
            cookie = f"PHPSESSID={v}" if v else None
        else:
            cookie = True
        try:
            if s.method == "GET":
                path = self.ep.prefix + s.rel if s.rel is not None else self.ep.prefix.rstrip("/")
                return c.request("GET", path, cookie=cookie)
            if s.enc == "urlencoded":
                return c.request("POST", self.ep.prefix, urlencoded_body(s.fields),
                                 "application/x-www-form-urlencoded", cookie)
            files = [FilePart(file_bytes(self.images, f)) for f in s.files]
            return c.request("POST", self.ep.prefix, multipart_body(s.fields, files), multipart_content_type(),
                             cookie)
        finally:
            if s.jar is None:
                c.close()

    def close(self):
        for c in self.clients.values():
            c.close()
