"""Three list shapes public APIs use that the other apps here do not, served by FastAPI
(its own serializer and generated document) over SQLAlchemy, served by uvicorn:

- `GET /shapes/proto/{dataset}` (`page_size` at most 100, `page_token`): protobuf-style
  JSON, as gRPC-gateway and Google APIs send it: the response model's defaults are left
  out (`response_model_exclude_defaults`), so an empty `items` list, an empty
  `next_page_token` and a zero `total_size` are absent from the body (G7).
- `GET /shapes/capped/{dataset}` (`limit` documented up to 100, `offset`): the server
  gives at most 35 rows whatever `limit` says, without saying so; `{items, total}` (P14).
- `GET /shapes/query/{dataset}` (no paging parameter): Salesforce's query, `{totalSize,
  done, nextRecordsUrl, records}`, 100 records a batch, the next batch only through the
  relative `nextRecordsUrl` (`GET /shapes/query/{dataset}/more/{offset}`) (P15).

`GET /_truth/{dataset}` is left out of the document (see ../common.py).
"""

import os
import sys
from typing import List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import common  # noqa: E402

args = common.setup()

from fastapi import FastAPI, Query, Response  # noqa: E402
from pydantic import BaseModel, ConfigDict  # noqa: E402
from sqlalchemy import Integer, String, create_engine, func, select  # noqa: E402
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column  # noqa: E402

engine = create_engine(f"sqlite:///{args.db}", connect_args={"check_same_thread": False})

CAP = 35
BATCH = 100


class Base(DeclarativeBase):
    pass


class Item(Base):
    __tablename__ = "items"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset: Mapped[str] = mapped_column(String)
    name: Mapped[str] = mapped_column(String)
    score: Mapped[int] = mapped_column(Integer)
    note: Mapped[Optional[str]] = mapped_column(String, nullable=True)


class ItemOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    name: str
    score: int
    # required, so leaving defaults out never drops a row's null note
    note: Optional[str]


class ListItemsResponse(BaseModel):
    items: List[ItemOut] = []
    next_page_token: str = ""
    total_size: int = 0


class CappedPage(BaseModel):
    items: List[ItemOut]
    total: int


class QueryResult(BaseModel):
    totalSize: int
    done: bool
    nextRecordsUrl: Optional[str] = None
    records: List[ItemOut]


def fetch(dataset, offset, limit):
    with Session(engine) as s:
        q = select(Item).where(Item.dataset == dataset).order_by(Item.id)
        rows = s.scalars(q.offset(offset).limit(limit)).all()
        total = s.scalar(select(func.count()).select_from(Item).where(Item.dataset == dataset))
        return [ItemOut.model_validate(r) for r in rows], total


app = FastAPI(title="list shapes", version="1.0.0")


@app.get(
    "/shapes/proto/{dataset}",
    operation_id="shapes_proto_items",
    response_model=ListItemsResponse,
    response_model_exclude_defaults=True,
)
def proto_items(
    dataset: str,
    page_size: int = Query(100, ge=1, le=100),
    page_token: str = "",
):
    """Items of a set, protobuf-style."""
    offset = int(page_token) if page_token.isdigit() else 0
    rows, total = fetch(dataset, offset, page_size)
    end = offset + len(rows)
    return ListItemsResponse(
        items=rows, next_page_token=str(end) if end < total else "", total_size=total
    )


@app.get("/shapes/capped/{dataset}", operation_id="shapes_capped_items")
def capped_items(
    dataset: str, limit: int = Query(100, ge=1, le=100), offset: int = Query(0, ge=0)
) -> CappedPage:
    """Items of a set, by limit and offset."""
    rows, total = fetch(dataset, offset, min(limit, CAP))
    return CappedPage(items=rows, total=total)


def query_page(dataset, offset):
    rows, total = fetch(dataset, offset, BATCH)
    end = offset + len(rows)
    more = f"/shapes/query/{dataset}/more/{end}" if end < total else None
    return QueryResult(totalSize=total, done=more is None, nextRecordsUrl=more, records=rows)


@app.get("/shapes/query/{dataset}", operation_id="shapes_query_items")
def query_items(dataset: str) -> QueryResult:
    """A query over a set, its later batches through `nextRecordsUrl`."""
    return query_page(dataset, 0)


@app.get("/shapes/query/{dataset}/more/{offset}", operation_id="shapes_query_more")
def query_more(dataset: str, offset: int) -> QueryResult:
    """The next batch of a query."""
    return query_page(dataset, offset)


@app.get("/_truth/{dataset}", include_in_schema=False)
def truth(dataset: str):
    return Response(common.truth_json(args.db, dataset), media_type="application/json")


if __name__ == "__main__":
    common.serve_asgi(app, args.port)
