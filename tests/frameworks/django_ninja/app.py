"""django-ninja's three paginators over a Django model, served by uvicorn (ASGI):

- `GET /api/page/{dataset}`: `PageNumberPagination` (`page`, `page_size`; `{items, count}`)
- `GET /api/offset/{dataset}`: `LimitOffsetPagination` (`limit`, `offset`; `{items, count}`)
- `GET /api/cursor/{dataset}`: `CursorPagination` (`cursor`, `page_size`;
  `{results, next, previous}`, `next` an absolute URL)

Its own generated document is `GET /api/openapi.json`; `GET /_truth/{dataset}` is plain
Django, outside the ninja API and so outside the document (see ../common.py).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import common  # noqa: E402

args = common.setup()

import django  # noqa: E402
from django.conf import settings  # noqa: E402

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["*"],
    ROOT_URLCONF=__name__,
    SECRET_KEY="frameworks-test-only",
    INSTALLED_APPS=[],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": args.db}},
    USE_TZ=True,
)
django.setup()

from typing import List, Optional  # noqa: E402

from django.db import models  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.urls import path  # noqa: E402
from ninja import NinjaAPI, Schema  # noqa: E402
from ninja.pagination import (  # noqa: E402
    CursorPagination,
    LimitOffsetPagination,
    PageNumberPagination,
    paginate,
)


class Item(models.Model):
    id = models.IntegerField(primary_key=True)
    dataset = models.TextField()
    name = models.TextField()
    score = models.IntegerField()
    note = models.TextField(null=True)

    class Meta:
        app_label = "frameworks"
        db_table = "items"
        managed = False


class ItemOut(Schema):
    id: int
    name: str
    score: int
    note: Optional[str] = None


api = NinjaAPI(title="django-ninja items", version="1.0.0")


def rows(dataset):
    return Item.objects.filter(dataset=dataset).order_by("id")


@api.get("/page/{dataset}", response=List[ItemOut], operation_id="ninja_page_items")
@paginate(PageNumberPagination)
def page_items(request, dataset: str):
    """Items of a set, by page number."""
    return rows(dataset)


@api.get("/offset/{dataset}", response=List[ItemOut], operation_id="ninja_offset_items")
@paginate(LimitOffsetPagination)
def offset_items(request, dataset: str):
    """Items of a set, by limit and offset."""
    return rows(dataset)


@api.get("/cursor/{dataset}", response=List[ItemOut], operation_id="ninja_cursor_items")
@paginate(CursorPagination, ordering=("id",))
def cursor_items(request, dataset: str):
    """Items of a set, by cursor."""
    return rows(dataset)


def truth(request, dataset):
    return HttpResponse(common.truth_json(args.db, dataset), content_type="application/json")


urlpatterns = [path("api/", api.urls), path("_truth/<str:dataset>", truth)]

if __name__ == "__main__":
    from django.core.asgi import get_asgi_application

    common.serve_asgi(get_asgi_application(), args.port)
