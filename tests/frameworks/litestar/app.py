"""Litestar's three paginators (litestar.pagination) over SQLite, served by uvicorn:

- `GET /litestar/offset/{dataset}`: `OffsetPagination` (`limit`, `offset`;
  `{items, limit, offset, total}`)
- `GET /litestar/cursor/{dataset}`: `CursorPagination` (`cursor`, `results_per_page`;
  `{items, results_per_page, cursor}`, `cursor` the id of the last row handed out, as
  Litestar's `AbstractSyncCursorPaginator` defines it)
- `GET /litestar/classic/{dataset}`: `ClassicPagination` (`current_page`, `page_size`;
  `{items, page_size, current_page, total_pages}`)

The handlers' parameters are the ones Litestar's pagination guide uses. Its own
generated document is `GET /schema/openapi.json`; `GET /_truth/{dataset}` is left out of
it (`include_in_schema=False`, see ../common.py).
"""

import os
import sqlite3
import sys
from dataclasses import dataclass
from typing import List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import common  # noqa: E402

args = common.setup()

from litestar import Litestar, MediaType, Response, get  # noqa: E402
from litestar.openapi import OpenAPIConfig  # noqa: E402
from litestar.pagination import (  # noqa: E402
    AbstractSyncClassicPaginator,
    AbstractSyncCursorPaginator,
    AbstractSyncOffsetPaginator,
    ClassicPagination,
    CursorPagination,
    OffsetPagination,
)
from litestar.params import Parameter  # noqa: E402


@dataclass
class Item:
    id: int
    name: str
    score: int
    note: Optional[str]


def query(sql, params):
    con = sqlite3.connect(args.db)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def items(rows):
    return [Item(*r) for r in rows]


COLS = "SELECT id, name, score, note FROM items WHERE dataset = ?"


class OffsetPaginator(AbstractSyncOffsetPaginator[Item]):
    def __init__(self, dataset):
        self.dataset = dataset

    def get_total(self) -> int:
        return query("SELECT count(*) FROM items WHERE dataset = ?", (self.dataset,))[0][0]

    def get_items(self, limit: int, offset: int) -> List[Item]:
        return items(query(f"{COLS} ORDER BY id LIMIT ? OFFSET ?", (self.dataset, limit, offset)))


class CursorPaginator(AbstractSyncCursorPaginator[int, Item]):
    def __init__(self, dataset):
        self.dataset = dataset

    def get_items(self, cursor: Optional[int], results_per_page: int) -> Tuple[List[Item], Optional[int]]:
        rows = items(
            query(
                f"{COLS} AND id > ? ORDER BY id LIMIT ?",
                (self.dataset, cursor or 0, results_per_page),
            )
        )
        return rows, (rows[-1].id if rows else None)


class ClassicPaginator(AbstractSyncClassicPaginator[Item]):
    def __init__(self, dataset):
        self.dataset = dataset

    def get_total(self, page_size: int) -> int:
        n = query("SELECT count(*) FROM items WHERE dataset = ?", (self.dataset,))[0][0]
        return (n + page_size - 1) // page_size

    def get_items(self, page_size: int, current_page: int) -> List[Item]:
        offset = (current_page - 1) * page_size
        return items(query(f"{COLS} ORDER BY id LIMIT ? OFFSET ?", (self.dataset, page_size, offset)))


@get("/litestar/offset/{dataset:str}", operation_id="litestar_offset_items", sync_to_thread=False)
def offset_items(
    dataset: str,
    limit: int = Parameter(ge=1, le=100, default=100),
    offset: int = Parameter(ge=0, default=0),
) -> OffsetPagination[Item]:
    """Items of a set, by limit and offset."""
    return OffsetPaginator(dataset)(limit=limit, offset=offset)


@get("/litestar/cursor/{dataset:str}", operation_id="litestar_cursor_items", sync_to_thread=False)
def cursor_items(
    dataset: str,
    cursor: Optional[int] = None,
    results_per_page: int = Parameter(ge=1, le=100, default=100),
) -> CursorPagination[int, Item]:
    """Items of a set, after a cursor."""
    return CursorPaginator(dataset)(cursor=cursor, results_per_page=results_per_page)


@get("/litestar/classic/{dataset:str}", operation_id="litestar_classic_items", sync_to_thread=False)
def classic_items(
    dataset: str,
    current_page: int = Parameter(ge=1, default=1),
    page_size: int = Parameter(ge=1, le=100, default=100),
) -> ClassicPagination[Item]:
    """Items of a set, by page."""
    return ClassicPaginator(dataset)(page_size=page_size, current_page=current_page)


@get("/_truth/{dataset:str}", include_in_schema=False, sync_to_thread=False)
def truth(dataset: str) -> Response:
    return Response(common.truth_json(args.db, dataset), media_type=MediaType.JSON)


app = Litestar(
    route_handlers=[offset_items, cursor_items, classic_items, truth],
    openapi_config=OpenAPIConfig(title="Litestar items", version="1.0.0"),
)

if __name__ == "__main__":
    common.serve_asgi(app, args.port)
