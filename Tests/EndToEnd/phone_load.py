"""A bounded load of phones for the fault tests: each phone its own user,
looping over upload, stream and login, its requests going to each of
`urls` in turn (one keep-alive connection to each), while a fault happens.
The figures: requests, their answers (only successes and clear JSON errors
are acceptable), acknowledged uploads, when failures came.

A login answered with an error may still have run: its answer cut on the
way (the host's nginx worker gone: Nchan 1.3.6, which keeps the live channel
in Redis, takes some down with signal 11 when Redis restarts) after the
host started the new session and ended the one the phone sent. The phone, told that its login failed, then holds a
session that is gone, as a real phone would: its requests until its next
login answered "Authorization required" are counted apart ("signed out by
a login that failed"), not among the answers."""
from __future__ import annotations

import threading
import time

import servers
from appclient import AppClient, Endpoint


class PhoneLoad:
    # The server takes `upload_rate_limit` (120) uploads a user an hour, and a
    # fast machine's load makes more than that in one fault: a phone goes on
    # as a new user of its own after this many, so the load never meets the
    # limit, which no fault test is about.
    UPLOADS_PER_USER = 100

    def __init__(self, urls: list[str], tag: str, clients: int = 4, limit: float = 60):
        self.urls, self.tag, self.clients, self.limit = urls, tag, clients, limit
        self.users = []
        for n in range(clients):
            user = servers.unique_name(f"{tag}{n}")
            with AppClient(Endpoint(urls[0]), timeout=30) as phone:
                assert phone.register(user, servers.app_password("pw")).json()["result"][0]["username"] == user
            self.users.append(user)
        self.acknowledged: list[str] = []
        self.answers: dict[str, int] = {}
        self.bad: list[str] = []
        self.failed_at: list[float] = []
        self.errors: list[tuple[float, str, str]] = []  # (start, "op: error", user)
        self.signed_out_by_failed_login = 0
        self.succeeded_at: list[float] = []
        self.longest = (0.0, 0.0, "")  # seconds, start, what
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.start = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self.start

    def note(self, op: str, r, started: float, user: str, after_failed_login: bool) -> bool:
        """Counts the answer; whether it is a success."""
        took = self.now() - started
        try:
            body = r.json()
        except ValueError:
            body = None
        with self.lock:
            self.longest = max(self.longest, (took, started, op))
            if r.status != 200 or not isinstance(body, (dict, list)):
                self.bad.append(f"{op} at {started:.2f}s: HTTP {r.status} {r.body[:120]!r}")
                self.failed_at.append(started)
                return False
            key = "error: " + body["error"] if isinstance(body, dict) and "error" in body else "ok"
            if after_failed_login and key == "error: Authorization required":
                self.signed_out_by_failed_login += 1
                self.failed_at.append(started)
                return False
            self.answers[f"{op}: {key}"] = self.answers.get(f"{op}: {key}", 0) + 1
            (self.succeeded_at if key == "ok" else self.failed_at).append(started)
            if key != "ok":
                self.errors.append((started, f"{op}: {key}", user))
            return key == "ok"

    def next_user(self, phone: AppClient, password: str) -> str | None:
        """A new user, registered (and so signed in) through `phone`; None
        when the registration is not answered now (a fault): the phone then
        goes on as it was and tries again at its next login."""
        user = servers.unique_name(f"{self.tag}u")
        try:
            body = phone.register(user, password).json()
        except (OSError, ValueError):
            return None
        return user if isinstance(body, dict) and "result" in body else None

    def phone(self, n: int):
        user, password, count = self.users[n], servers.app_password("pw"), 0
        uploads = 0  # by `user`
        phones = [AppClient(Endpoint(url), timeout=30) for url in self.urls]
        # each connection's cookie jar: its last login not answered with a success
        failed_login = [False] * len(phones)
        try:
            for phone in phones:
                phone.login(user, password)
            while not self.stop.is_set() and self.now() < self.limit:
                which = count % len(phones)
                phone = phones[which]
                op = ("upload", "stream", "login")[count % 3]
                started = self.now()
                try:
                    if op == "upload":
                        title = f"{user} #{count}"
                        r = phone.upload(servers.small_photo(), title)
                        uploads += 1
                        if r.status == 200 and r.body == servers.SUCCESS:
                            with self.lock:
                                self.acknowledged.append(title)
                    elif op == "stream":
                        r = phone.stream()
                    else:
                        if uploads >= self.UPLOADS_PER_USER and (new := self.next_user(phone, password)):
                            # (each of the phone's other connections signs in as it at its own login)
                            user, uploads = new, 0
                        r = phone.login(user, password)
                    ok = self.note(op, r, started, user, failed_login[which])
                    if op == "login":
                        failed_login[which] = not ok
                except OSError as e:
                    with self.lock:
                        self.bad.append(f"{op} at {started:.2f}s: {type(e).__name__} {e}")
                        self.failed_at.append(started)
                    phone.close()
                    failed_login[which] = failed_login[which] or op == "login"
                count += 1
        finally:
            for phone in phones:
                phone.close()

    def run(self, fault, before: float = 2.0, after: float = 3.0) -> dict:
        """Load; `fault()` after `before` s returns {figure: value}; `after` s more."""
        threads = [threading.Thread(target=self.phone, args=(n,)) for n in range(self.clients)]
        for t in threads:
            t.start()
        try:
            time.sleep(before)
            fault_at = self.now()
            figures = fault()
            fault_done = self.now()
            time.sleep(after)
        finally:
            self.stop.set()
            for t in threads:
                t.join(self.limit + 40)
        assert all(not t.is_alive() for t in threads), "a load phone hung"
        next_success = min((t for t in self.succeeded_at if t > fault_at), default=None)
        return {"requests": sum(self.answers.values()) + len(self.bad), "seconds": round(self.now(), 1),
                "fault at": round(fault_at, 2), "fault's commands took": round(fault_done - fault_at, 2),
                "answers": self.answers, "not clear JSON": self.bad,
                # the start of the first failed request and of the last, from the fault's start
                "failed requests from/to (s)":
                    None if not self.failed_at else [round(min(self.failed_at) - fault_at, 2),
                                                     round(max(self.failed_at) - fault_at, 2)],
                "longest request (s, its start from the fault's, what)":
                    [round(self.longest[0], 2), round(self.longest[1] - fault_at, 2), self.longest[2]],
                "seconds from the fault to the next success":
                    None if next_success is None else round(next_success - fault_at, 2),
                "acknowledged uploads": len(self.acknowledged),
                "signed out by a login that failed": self.signed_out_by_failed_login,
                # the first error answers: each one's start from the fault's, what, whose
                "first errors": [[round(t - fault_at, 2), what, user] for t, what, user in sorted(self.errors)[:20]],
                **figures}
