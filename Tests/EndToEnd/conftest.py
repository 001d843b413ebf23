"""Fixtures of the end-to-end suite (python3 -m pytest -q Tests/EndToEnd).

Environment (set by scripts/test.sh):
  IREPORTER_BASE_URL       required, e.g. http://127.0.0.1:8090/iReporter/ (nginx in front)
  IREPORTER_UPLOAD_DIR     the server's upload dir (files checked when set)
  IREPORTER_SESSION_DIR    the server's session dir (session files checked when set)
  IREPORTER_RUN_DIR        the stack's run dir (unused except for reporting)
  IREPORTER_MYSQL_ROOT     shell command prefix running SQL as root on the server's DB
  IREPORTER_REFERENCE_DIR  the PHP original (enables test_differential.py)
  IREPORTER_FLAVOUR        'ours' (default) or 'php': see e2e.py
"""
from __future__ import annotations

import os
import struct
import subprocess
import zlib
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import e2e
import servers
from appclient import AppClient, Endpoint, jpeg_size


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: sends 20+ MiB bodies")
    if not os.environ.get("IREPORTER_BASE_URL"):
        # Fail loudly: a suite that silently skips everything proves nothing.
        raise pytest.UsageError(
            "IREPORTER_BASE_URL is not set (e.g. http://127.0.0.1:8090/iReporter/): "
            "the end-to-end suite needs a running server behind nginx")


def pytest_report_header(config):
    return [f"iReporter e2e: {os.environ.get('IREPORTER_BASE_URL')} flavour={e2e.FLAVOUR}"]


# ------------------------------------------------------------------ basics

@pytest.fixture(scope="session")
def env() -> e2e.Env:
    return e2e.Env()


@pytest.fixture(scope="session")
def endpoint(env) -> Endpoint:
    return Endpoint(env.base_url)


@pytest.fixture(scope="session")
def base_url(env) -> str:
    return env.base_url


@pytest.fixture(scope="session")
def web_site(env) -> str:
    """The web client's address: the stack's nginx at / (the API is below it)."""
    parts = urlsplit(env.base_url)
    return f"{parts.scheme}://{parts.netloc}/"


@pytest.fixture(scope="session")
def upload_dir(env):
    return env.upload_dir


@pytest.fixture(scope="session")
def session_dir(env):
    return env.session_dir


@pytest.fixture(scope="session")
def db(env) -> e2e.DB:
    return e2e.DB(env.mysql_root)


def reset_state(env: e2e.Env, db: e2e.DB):
    """Empty database as installed (IdUser from 1, IdPhoto from 2), no
    uploaded files, no session files."""
    db.reset(env.schema_sql())
    e2e.clear_dir(env.upload_dir)
    e2e.clear_dir(env.session_dir, r"(sess_|ireporter-sessions-).*")


@pytest.fixture(scope="module")
def fresh_db(env, db):
    """Once per test module: a fresh database, upload dir and session dir."""
    reset_state(env, db)
    yield


@pytest.fixture
def client(endpoint):
    """A new 'phone' (own cookie jar, own keep-alive connection)."""
    made = []

    def make(**kw) -> AppClient:
        c = AppClient(endpoint, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


# ------------------------------------------------------------------ images

def png_bytes(w=4, h=4) -> bytes:
    """A tiny valid PNG (bench/smoke.py's), for the 'not a JPEG' cases."""
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * w for _ in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class Images:
    def __init__(self, d: Path):
        self.dir = d
        self.convert = servers.convert_binary()
        # 640x640 ~62 KB, the reference's small.jpg recipe (bench/make_images.sh)
        self.photo = self._make("photo.jpg", ["-seed", "42", "-size", "640x640", "plasma:fractal",
                                              "-sampling-factor", "4:2:0", "-quality", "82"])
        # 360x180: red | green | blue stripes of 90, 180, 90 px: a centre crop is all green,
        # squashing the whole photo would keep red and blue at the sides.
        self.stripes = self._make("stripes.jpg", ["-size", "90x180", "xc:#ff0000", "-size", "180x180",
                                                  "xc:#00ff00", "-size", "90x180", "xc:#0000ff", "+append",
                                                  "-quality", "95"])
        # a portrait one, 120x300, to check the crop in the other direction
        self.portrait = self._make("portrait.jpg", ["-size", "120x90", "xc:#ff0000", "-size", "120x120",
                                                    "xc:#00ff00", "-size", "120x90", "xc:#0000ff", "-append",
                                                    "-quality", "95"])
        self.png = png_bytes()
        self.text = b"This is not a photo.\nJust some text.\n"
        self.truncated = self.photo[: len(self.photo) // 2]
        self.empty = b""
        assert jpeg_size(self.photo) == (640, 640)
        assert jpeg_size(self.stripes) == (360, 180)
        assert jpeg_size(self.portrait) == (120, 300)

    def _make(self, name, args) -> bytes:
        out = self.dir / name
        subprocess.run([self.convert, *args, str(out)], check=True, capture_output=True, timeout=60)
        return out.read_bytes()

    @property
    def camera(self) -> bytes:
        """2448x3264, an iPhone 4S portrait photo's size (made on first use)."""
        if not hasattr(self, "_camera"):
            self._camera = self._make("camera.jpg", ["-size", "2448x3264", "gradient:#3060c0-#f0a040",
                                                     "-sampling-factor", "4:2:0", "-quality", "85"])
        return self._camera

    def padded_jpeg(self, total: int) -> bytes:
        """A real JPEG followed by filler up to `total` bytes: only its size is wrong."""
        return self.photo + b"\0" * (total - len(self.photo))

    def rgb_pixels(self, jpeg: bytes) -> tuple[int, int, bytes]:
        """Decode with ImageMagick: (w, h, raw RGB bytes)."""
        w, h = jpeg_size(jpeg)
        p = subprocess.run([self.convert, "jpeg:-", "-depth", "8", "rgb:-"], input=jpeg,
                           capture_output=True, check=True, timeout=60)
        assert len(p.stdout) == w * h * 3
        return w, h, p.stdout


@pytest.fixture(scope="session")
def images(tmp_path_factory) -> Images:
    return Images(tmp_path_factory.mktemp("images"))


# ------------------------------------------------------- failure diagnostics

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, show the end of the stack's logs (IREPORTER_RUN_DIR)."""
    outcome = yield
    rep = outcome.get_result()
    run_dir = os.environ.get("IREPORTER_RUN_DIR")
    if rep.when != "call" or not rep.failed or not run_dir:
        return
    for name in ("ireporter.log", "nginx/error.log"):
        p = Path(run_dir) / name
        try:
            lines = p.read_text(errors="replace").splitlines()[-15:]
        except OSError:
            continue
        if lines:
            rep.sections.append((f"last lines of {p}", "\n".join(lines)))
