"""Django REST framework's three paginators on generic list views, with DRF's own
settings left at their defaults but for the page size (`PAGE_SIZE = 100`), served by
uvicorn (ASGI):

- `GET /drf/{dataset}/page/`: `PageNumberPagination` — `page` only (DRF offers no
  page-size parameter unless configured); `{count, next, previous, results}`, `next`
  an absolute URL, and a page past the end is a 404 ("Invalid page.")
- `GET /drf/{dataset}/offset/`: `LimitOffsetPagination` (`limit`, `offset`)
- `GET /drf/{dataset}/cursor/`: `CursorPagination` (`cursor` only; `{next, previous,
  results}`), ordered by id

Its own generated document is DRF's `SchemaGenerator` (`rest_framework.schemas.openapi`)
at `GET /openapi.json`; `GET /_truth/{dataset}` is a plain Django view that the
generator does not list (see ../common.py).
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
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "rest_framework"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": args.db}},
    USE_TZ=True,
    REST_FRAMEWORK={
        "PAGE_SIZE": 100,
        "DEFAULT_AUTHENTICATION_CLASSES": [],
        "DEFAULT_PERMISSION_CLASSES": [],
        "UNAUTHENTICATED_USER": None,
    },
)
django.setup()

from django.db import models  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.urls import path  # noqa: E402
from rest_framework import generics, pagination, serializers  # noqa: E402
from rest_framework.renderers import JSONOpenAPIRenderer  # noqa: E402
from rest_framework.schemas import get_schema_view  # noqa: E402
from rest_framework.schemas.openapi import AutoSchema  # noqa: E402


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


class ItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = ["id", "name", "score", "note"]


class ByPosition(pagination.CursorPagination):
    ordering = "id"


class Items(generics.ListAPIView):
    serializer_class = ItemSerializer

    def get_queryset(self):
        return Item.objects.filter(dataset=self.kwargs["dataset"]).order_by("id")


class PageItems(Items):
    """Items of a set, by page number."""

    pagination_class = pagination.PageNumberPagination
    schema = AutoSchema(operation_id_base="DrfPageItems")


class OffsetItems(Items):
    """Items of a set, by limit and offset."""

    pagination_class = pagination.LimitOffsetPagination
    schema = AutoSchema(operation_id_base="DrfOffsetItems")


class CursorItems(Items):
    """Items of a set, by cursor."""

    pagination_class = ByPosition
    schema = AutoSchema(operation_id_base="DrfCursorItems")


def truth(request, dataset):
    return HttpResponse(common.truth_json(args.db, dataset), content_type="application/json")


urlpatterns = [
    path("drf/<str:dataset>/page/", PageItems.as_view()),
    path("drf/<str:dataset>/offset/", OffsetItems.as_view()),
    path("drf/<str:dataset>/cursor/", CursorItems.as_view()),
    path(
        "openapi.json",
        get_schema_view(
            title="DRF items",
            version="1.0.0",
            renderer_classes=[JSONOpenAPIRenderer],
            patterns=[
                path("drf/<str:dataset>/page/", PageItems.as_view()),
                path("drf/<str:dataset>/offset/", OffsetItems.as_view()),
                path("drf/<str:dataset>/cursor/", CursorItems.as_view()),
            ],
        ),
    ),
    path("_truth/<str:dataset>", truth),
]

if __name__ == "__main__":
    from django.core.asgi import get_asgi_application

    common.serve_asgi(get_asgi_application(), args.port)
