"""fastapi-pagination's three pages over SQLAlchemy (its `ext.sqlalchemy.paginate`, the
cursor page through sqlakeyset), served by uvicorn:

- `GET /fastapi/page/{dataset}`: `Page` (`page` from 1, `size` at most 100;
  `{items, total, page, size, pages}`)
- `GET /fastapi/limit-offset/{dataset}`: `LimitOffsetPage` (`limit` at most 100,
  `offset`; `{items, total, limit, offset}`)
- `GET /fastapi/cursor/{dataset}`: `CursorPage` (`cursor`, `size` at most 100;
  `{items, total, current_page, current_page_backwards, previous_page, next_page}`,
  `next_page` an opaque, URL-quoted token that goes back as `cursor`)

Its own generated document is FastAPI's `GET /openapi.json`; `GET /_truth/{dataset}` is
left out of it (`include_in_schema=False`, see ../common.py).
"""

import os
import sys
from typing import Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import common  # noqa: E402

args = common.setup()

from fastapi import Depends, FastAPI, Response  # noqa: E402
from fastapi_pagination import LimitOffsetPage, Page, add_pagination  # noqa: E402
from fastapi_pagination.cursor import CursorPage  # noqa: E402
from fastapi_pagination.ext.sqlalchemy import paginate  # noqa: E402
from pydantic import BaseModel, ConfigDict  # noqa: E402
from sqlalchemy import Integer, String, create_engine, select  # noqa: E402
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column  # noqa: E402

engine = create_engine(f"sqlite:///{args.db}", connect_args={"check_same_thread": False})


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
    note: Optional[str] = None


def session():
    with Session(engine) as s:
        yield s


def rows(dataset):
    return select(Item).where(Item.dataset == dataset).order_by(Item.id)


app = FastAPI(title="fastapi-pagination items", version="1.0.0")


@app.get("/fastapi/page/{dataset}", operation_id="fastapi_page_items")
def page_items(dataset: str, db: Session = Depends(session)) -> Page[ItemOut]:
    """Items of a set, by page."""
    return paginate(db, rows(dataset))


@app.get("/fastapi/limit-offset/{dataset}", operation_id="fastapi_limit_offset_items")
def limit_offset_items(dataset: str, db: Session = Depends(session)) -> LimitOffsetPage[ItemOut]:
    """Items of a set, by limit and offset."""
    return paginate(db, rows(dataset))


@app.get("/fastapi/cursor/{dataset}", operation_id="fastapi_cursor_items")
def cursor_items(dataset: str, db: Session = Depends(session)) -> CursorPage[ItemOut]:
    """Items of a set, by cursor."""
    return paginate(db, rows(dataset))


@app.get("/_truth/{dataset}", include_in_schema=False)
def truth(dataset: str):
    return Response(common.truth_json(args.db, dataset), media_type="application/json")


add_pagination(app)

if __name__ == "__main__":
    common.serve_asgi(app, args.port)
