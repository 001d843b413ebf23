"""Differential test: the golden transcript's requests (golden.STEPS) sent to
the PHP original AND to our server, step by step, comparing status + body.

Runs only when IREPORTER_REFERENCE_DIR is set: brings the reference up with
its up.sh (idempotent; it copes with a read-only directory), resets it with
bench/reset_db.sh, resets our database too, and stops the reference with its
down.sh at the end of the session (only if this session started it).

The allowed differences are exactly DIFFERENCES below: for a step, a
transform from the PHP answer to the answer we must give. Any other
difference fails. (Cookies and headers are not compared here; test_golden.py
checks ours.)
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path
from typing import Callable, Optional

import pytest

import e2e
from appclient import Endpoint, jpeg_size, php_json, send_raw
from conftest import reset_state
from e2e import AUTH_FAILED, AUTH_REQUIRED, NOT_JPEG, REG_FAILED, SUCCESS, TOO_LARGE, UPLOAD_MALFUNCTION
from golden import STEPS, Runner

REF_URL_DEFAULT = "http://127.0.0.1:8081/iReporter/"



# ------------------------------------------------- the allowed differences

Answer = tuple[int, bytes]
Transform = Callable[[int, bytes], "Answer | Callable[[int, bytes], None] | None"]


def replace_body(php_body: bytes, ours_body: bytes) -> Transform:
    """PHP answers php_body (HTTP 200); we answer ours_body."""
    def t(status, body):
        return (200, ours_body) if (status, body) == (200, php_body) else None
    return t


def stream_36(status, body) -> Optional[Answer]:
    """The stream after the edge-case uploads, as we must return it:
    - the PNG (28), no-file (29) and empty-file (30) uploads are refused by us,
      so those rows do not exist and the later ids are 3 lower;
    - titles are stored as sent: 'a bA' (PHP's second urldecode of 'a+b%41')
      is 'a+b%41';
    - the 99 x + 'é' title is cut at the character boundary: 99 x, not null."""
    if status != 200:
        return None
    rows = json.loads(body)["result"]
    refused = {"not a jpeg", "no file", "empty"}
    kept = sorted((r for r in rows if r["title"] not in refused), key=lambda r: int(r["IdPhoto"]))
    retitle = {"a bA": "a+b%41", None: "x" * 99}
    out = []
    for new_id, r in enumerate(kept, start=2):
        out.append(dict(r, IdPhoto=str(new_id), title=retitle.get(r["title"], r["title"])))
    return 200, php_json({"result": list(reversed(out))})


def thumbnail(status, body):
    """Ours is a centre crop, PHP's the whole photo squashed: bytes differ,
    both are 180x180 JPEGs."""
    if status != 200 or jpeg_size(body) != (180, 180):
        return None

    def check(s, b):
        assert s == 200 and jpeg_size(b) == (180, 180), (s, jpeg_size(b))
    return check


def too_large(status, body):
    """21 MiB: nginx's HTML 413 page -> HTTP 200 with our JSON error."""
    return (200, TOO_LARGE) if status == 413 else None


def nginx_page(status, body):
    """nginx's own 301 page: same status, same page up to the nginx version
    string (server_tokens / build)."""
    norm = re.sub(rb"nginx/[0-9.]+", b"nginx", body)

    def check(s, b):
        assert s == status and re.sub(rb"nginx/[0-9.]+", b"nginx", b) == norm, (s, b)
    return check


R_U45 = b'{"result":[{"IdUser":"4","username":"' + b"u" * 45 + b'"}]}'

DIFFERENCES: dict[int, tuple[str, Transform]] = {
    6: ("thumbnail is a 180x180 centre crop, not the squashed photo", thumbnail),
    18: ("username over 45 bytes: Registration failed, nothing inserted", replace_body(AUTH_FAILED, REG_FAILED)),
    19: ("username over 45 bytes: Registration failed, nothing inserted", replace_body(AUTH_FAILED, REG_FAILED)),
    20: ("no truncated 45-character user exists (nothing was inserted at 18/19)", replace_body(R_U45, AUTH_FAILED)),
    21: ("`delete` is a command now (the tutorial's next steps): without a session it needs one",
         replace_body(b"", AUTH_REQUIRED)),
    24: ("nginx's redirect page, version string aside", nginx_page),
    28: ("uploads are checked: a PNG is refused", replace_body(SUCCESS, NOT_JPEG)),
    29: ("no file part: Upload malfunction, no orphan row",
         replace_body(b'{"error":"Upload on server problem"}', UPLOAD_MALFUNCTION)),
    30: ("uploads are checked: an empty file is refused", replace_body(SUCCESS, NOT_JPEG)),
    36: ("no rows for refused uploads, titles as sent, cut at a character boundary", stream_36),
    37: ("over-size upload: JSON error with HTTP 200 instead of nginx's 413 page", too_large),
}


def expected_ours(n: int, php: Answer):
    """What we must answer at step n given PHP's answer: an (status, body)
    pair or a checking function."""
    if n not in DIFFERENCES:
        return php
    _, transform = DIFFERENCES[n]
    t = transform(*php)
    assert t is not None, (f"step {n}: the PHP reference did not answer as GOLDEN.md says, so the allowed "
                           f"difference does not apply: {php[0]} {php[1][:300]!r}")
    return t


# ------------------------------------------------------------ the reference

def _alive(url: str) -> bool:
    try:
        req = urllib.request.Request(url, data=b"command=stream", method="POST")
        with urllib.request.urlopen(req, timeout=3) as r:
            return r.status == 200
    except Exception:
        return False


@pytest.fixture(scope="session")
def reference():
    if not os.environ.get("IREPORTER_REFERENCE_DIR"):
        pytest.skip("IREPORTER_REFERENCE_DIR is not set (no PHP reference to compare with)")
    ref_dir = Path(os.environ["IREPORTER_REFERENCE_DIR"])
    was_running = _alive(REF_URL_DEFAULT)
    p = subprocess.run([str(ref_dir / "up.sh")], capture_output=True, text=True, timeout=1200)
    if p.returncode != 0:
        pytest.fail(f"reference up.sh failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    urls = [line for line in p.stdout.splitlines() if line.startswith("http://")]
    url = urls[-1].strip() if urls else REF_URL_DEFAULT
    yield {"dir": ref_dir, "endpoint": Endpoint(url)}
    if not was_running:
        subprocess.run([str(ref_dir / "down.sh")], capture_output=True, timeout=300)


def reset_reference(reference):
    """The reference back to its just-installed state (its bench/reset_db.sh),
    without the photos' tree our server makes in the PHP site's upload
    folder during the swap-in (reset_db.sh clears files, not folders)."""
    shutil.rmtree("/tmp/ref-php/app/upload/photos", ignore_errors=True)
    subprocess.run([str(reference["dir"] / "bench" / "reset_db.sh")], check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def both(reference, endpoint, env, db, images):
    if e2e.PHP:
        pytest.skip("IREPORTER_FLAVOUR=php: the differential test compares ours with PHP")
    ref_ep = reference["endpoint"]
    if (ref_ep.host, ref_ep.port) == (endpoint.host, endpoint.port):
        pytest.skip("IREPORTER_BASE_URL is the reference itself")
    reset_reference(reference)
    reset_state(env, db)
    php, ours = Runner(ref_ep, images), Runner(endpoint, images)
    yield php, ours
    php.close()
    ours.close()


@pytest.mark.parametrize("n", [s.n for s in STEPS], ids=[f"{s.n:02d}" for s in STEPS])
def test_same_answer_as_php(both, n):
    php_runner, ours_runner = both
    rp = php_runner.run(n)
    ro = ours_runner.run(n)
    exp = expected_ours(n, (rp.status, rp.body))
    if callable(exp):
        exp(ro.status, ro.body)
    else:
        assert (ro.status, ro.body) == exp, (
            f"step {n} ({STEPS[n - 1].title}) differs from PHP"
            + (f" beyond the allowed difference '{DIFFERENCES[n][0]}'" if n in DIFFERENCES else "")
            + f":\n  php : {rp.status} {rp.body[:400]!r}\n  ours: {ro.status} {ro.body[:400]!r}"
            + f"\n  want: {exp[0]} {exp[1][:400]!r}")


def lf_multipart(endpoint: Endpoint, parts: list[tuple[str, str]], boundary: str = "lf-only") -> bytes:
    """A hand-made client's form: every line ended by LF alone, and a
    Content-Disposition folded onto a second line."""
    body = "".join(f"--{boundary}\nContent-Disposition: form-data;\n\tname=\"{name}\"\n\n{value}\n"
                   for name, value in parts) + f"--{boundary}--\n"
    return (f"POST {endpoint.path()} HTTP/1.1\r\nHost: {endpoint.host_header}\r\nConnection: close\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(body)}\r\n\r\n{body}").encode()


def test_a_form_of_bare_line_feeds_and_folded_headers_as_php(both):
    """PHP reads a multipart body whose lines end in LF alone, and part
    headers folded onto several lines: so do we (a PHP-era client built
    its forms by hand)."""
    php_runner, ours_runner = both
    answers = []
    for runner in (php_runner, ours_runner):
        endpoint = runner.ep
        request = lf_multipart(endpoint, [("command", "login"), ("username", "nobody-lf"), ("password", "x")])
        response = send_raw(endpoint.host, endpoint.port, request)
        answers.append((response.status, response.body))
    assert answers[0] == (200, AUTH_FAILED), answers
    assert answers[1] == answers[0], "ours read the form as PHP did"


def test_differences_table_matches_test_golden():
    """The table above, applied to GOLDEN.md's PHP bodies, gives exactly the
    bodies test_golden.py expects from us (two encodings of one list)."""
    import test_golden as tg
    assert stream_36(200, tg.STREAM_36_PHP) == (200, tg.STREAM_36_OURS)
    assert expected_ours(18, (200, AUTH_FAILED)) == (200, REG_FAILED)
    assert expected_ours(20, (200, R_U45)) == (200, AUTH_FAILED)
    assert expected_ours(28, (200, SUCCESS)) == (200, NOT_JPEG)
    assert expected_ours(37, (413, b"<html>")) == (200, TOO_LARGE)
    assert expected_ours(21, (200, b"")) == (200, AUTH_REQUIRED)
