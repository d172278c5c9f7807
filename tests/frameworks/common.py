"""What every framework app here shares: its command line, the SQLite database it seeds
and serves, the side channel the Rust tests read the truth from, and its lifetime.

Each app is started by tests/api/frameworks (the Rust side) as
`python app.py --port PORT --db FILE --sets '{"zero": 0, "one": 1, ...}'`. It seeds one
table, `items`, with one row set per name (ids unique across sets, in set order), serves
its list endpoints through the framework's own paginator and the framework's own
generated OpenAPI document, and answers the undocumented `GET /_truth/{dataset}` with
the set's rows read straight from SQLite (never through the framework), in id order.
Every request is recorded (path and query string) and `GET /_requests` answers them,
by path, so a test can say which requests a walk sent; both `/_` routes stay outside
the document. It exits when its standard input closes, so a test binary that dies
leaves no server.
"""

import argparse
import json
import os
import sqlite3
import sys
import threading

COLUMNS = ("id", "name", "score", "note")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--sets", required=True, help='JSON object: {"set name": row count}')
    return p.parse_args()


def row(i, dataset, n):
    """Row `n` (0-based) of `dataset`: text with non-ASCII and quotes, a signed number,
    and a note that is sometimes null, so a row that is cut, re-typed or merged shows."""
    return {
        "name": f"{dataset} row {n} \u2013 caf\u00e9 \"q\" \u2713",
        "score": (n * 37) % 101 - 50,
        "note": None if n % 3 == 0 else f"note {i}",
    }


def seed(db, sets):
    """Creates `items` in a fresh SQLite file and fills every set."""
    if os.path.exists(db):
        os.remove(db)
    con = sqlite3.connect(db)
    con.execute(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, dataset TEXT NOT NULL,"
        " name TEXT NOT NULL, score INTEGER NOT NULL, note TEXT)"
    )
    con.execute("CREATE INDEX items_dataset ON items (dataset, id)")
    i = 0
    for dataset, count in sets.items():
        for n in range(int(count)):
            i += 1
            r = row(i, dataset, n)
            con.execute(
                "INSERT INTO items (id, dataset, name, score, note) VALUES (?, ?, ?, ?, ?)",
                (i, dataset, r["name"], r["score"], r["note"]),
            )
    con.commit()
    con.close()


def truth(db, dataset):
    """The set's rows as the database holds them, in id order."""
    con = sqlite3.connect(db)
    try:
        cur = con.execute(
            "SELECT id, name, score, note FROM items WHERE dataset = ? ORDER BY id",
            (dataset,),
        )
        return [dict(zip(COLUMNS, r)) for r in cur.fetchall()]
    finally:
        con.close()


def truth_json(db, dataset):
    return json.dumps(truth(db, dataset))


REQUESTS = {}
REQUESTS_LOCK = threading.Lock()


def record(path, query):
    with REQUESTS_LOCK:
        REQUESTS.setdefault(path, []).append(query)


def requests_json():
    with REQUESTS_LOCK:
        return json.dumps(REQUESTS).encode()


def recording_asgi(app):
    """`app` with every request recorded, and `GET /_requests` answered."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http":
            if scope["path"] == "/_requests":
                body = requests_json()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
            record(scope["path"], scope["query_string"].decode("latin-1"))
        await app(scope, receive, send)

    return wrapped


def recording_wsgi(app):
    """The WSGI twin of `recording_asgi`."""

    def wrapped(environ, start_response):
        if environ.get("PATH_INFO") == "/_requests":
            start_response("200 OK", [("Content-Type", "application/json")])
            return [requests_json()]
        record(environ.get("PATH_INFO", ""), environ.get("QUERY_STRING", ""))
        return app(environ, start_response)

    return wrapped


def exit_with_parent():
    """Ends the process when standard input closes (the test that started it is gone)."""

    def watch():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def setup():
    """Parses the command line, seeds the database, arms the exit watch."""
    args = parse_args()
    sets = json.loads(args.sets)
    seed(args.db, sets)
    exit_with_parent()
    return args


def serve_asgi(app, port):
    import uvicorn

    uvicorn.Server(
        uvicorn.Config(recording_asgi(app), host="127.0.0.1", port=port, log_level="warning", access_log=False)
    ).run()
