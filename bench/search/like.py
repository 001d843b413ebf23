#!/usr/bin/env python3
"""like.py - the naive search on the same table: for each query of
queries.txt, `WHERE title LIKE '%word%'` for each of its words (newest 50,
joined with login as `search` is), CLIENTS clients in parallel for DURATION
seconds (each a long-lived `mariadb` client, going on past a failed
statement: `--force`, its error on stderr). Prints a JSON line with the
requests, the rate, the latencies (ms) and the clients that ended early."""
import json
import subprocess
import sys
import threading
import time
import urllib.parse

mysql, queries_file, clients, duration = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
queries = [urllib.parse.unquote_plus(line.strip()) for line in open(queries_file, encoding="utf-8") if line.strip()]


def sql(query: str) -> str:
    likes = " AND ".join("p.title LIKE '%" + word.replace("'", "''") + "%'" for word in query.split())
    return ("SELECT p.IdPhoto, p.title, l.IdUser, l.username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) "
            f"WHERE {likes} ORDER BY p.IdPhoto DESC LIMIT 50;\nSELECT '__END__';\n")


latencies = []
failures = 0
lock = threading.Lock()
deadline = time.monotonic() + duration


def client(number: int):
    global failures
    process = subprocess.Popen(mysql.split() + ["-N", "-B", "--unbuffered", "--force"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, encoding="latin-1")
    index = number
    while time.monotonic() < deadline:
        started = time.monotonic()
        process.stdin.write(sql(queries[index % len(queries)]).encode("utf-8").decode("latin-1"))
        process.stdin.flush()
        while (line := process.stdout.readline()) and line.strip() != "__END__":
            pass
        if not line:  # the client ended: this client stops (counted)
            with lock:
                failures += 1
            return
        with lock:
            latencies.append(time.monotonic() - started)
        index += 1
    process.stdin.close()
    process.wait(timeout=60)


started = time.monotonic()
threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = time.monotonic() - started
latencies.sort()


def percentile(p: float) -> float:
    return round(1000 * latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))], 2) if latencies else None


print(json.dumps({"name": "like", "requests": len(latencies), "seconds": round(elapsed, 2),
                  "rate": round(len(latencies) / elapsed, 2), "p50_ms": percentile(50), "p99_ms": percentile(99),
                  "clients_ended": failures}))
