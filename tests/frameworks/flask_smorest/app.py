"""Flask-smorest's pagination (`Blueprint.paginate`, pagination in the resource as its
guide shows) over SQLite, served by werkzeug's threaded server:

- `GET /smorest/items/{dataset}`: `page` (from 1) and `page_size` (at most 100); the
  body is a bare array and the page metadata is the JSON `X-Pagination` header
  (`total`, `total_pages`, `first_page`, `last_page`, `page`, `previous_page`,
  `next_page`), which the document describes as a response header.

Its own generated document is `GET /api-spec/openapi.json`; `GET /_truth/{dataset}` is a
plain Flask route, outside every blueprint and so outside the document (../common.py).
"""

import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import common  # noqa: E402

args = common.setup()

import marshmallow as ma  # noqa: E402
from flask import Flask, Response  # noqa: E402
from flask.views import MethodView  # noqa: E402
from flask_smorest import Api, Blueprint  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

app = Flask("smorest_items")
app.config.update(
    API_TITLE="Flask-smorest items",
    API_VERSION="1.0.0",
    OPENAPI_VERSION="3.0.3",
    OPENAPI_URL_PREFIX="/api-spec",
    OPENAPI_JSON_PATH="openapi.json",
)
api = Api(app)
blp = Blueprint("items", "items", url_prefix="/smorest", description="Items of a set")


class ItemSchema(ma.Schema):
    id = ma.fields.Integer(required=True)
    name = ma.fields.String(required=True)
    score = ma.fields.Integer(required=True)
    note = ma.fields.String(allow_none=True)


def query(sql, params):
    con = sqlite3.connect(args.db)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql, params).fetchall()]
    finally:
        con.close()


@blp.route("/items/<dataset>")
class Items(MethodView):
    @blp.response(200, ItemSchema(many=True))
    @blp.paginate()
    def get(self, dataset, pagination_parameters):
        """Items of a set, by page"""
        pagination_parameters.item_count = query(
            "SELECT count(*) AS n FROM items WHERE dataset = ?", (dataset,)
        )[0]["n"]
        return query(
            "SELECT id, name, score, note FROM items WHERE dataset = ? ORDER BY id LIMIT ? OFFSET ?",
            (dataset, pagination_parameters.page_size, pagination_parameters.first_item),
        )


api.register_blueprint(blp)


@app.route("/_truth/<dataset>")
def truth(dataset):
    return Response(common.truth_json(args.db, dataset), mimetype="application/json")


if __name__ == "__main__":
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app.wsgi_app = common.recording_wsgi(app.wsgi_app)
    make_server("127.0.0.1", args.port, app, threaded=True).serve_forever()
