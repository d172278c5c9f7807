//! Real frameworks as the oracle (G7, P1–P12): list endpoints built on django-ninja,
//! Django REST framework,
//! Litestar, Flask-smorest, fastapi-pagination and FastAPI serving three shapes of public
//! APIs (lists left out of protobuf-style JSON, a silently capped page size, paging only
//! through response links) (`tests/frameworks/`, installed pinned
//! from PyPI by `scripts/setup-frameworks`), each paginated by the framework's own
//! paginator and imported through the framework's own generated OpenAPI document,
//! unmodified; and json-server (npm, `npm ci` by the same script, run by node), whose
//! `_page`/`_limit` and `_start`/`_limit` paging with `X-Total-Count` and `Link` headers
//! is described by a hand-written, silent document, as json-server generates none. Every paginator is walked at 0, 1, a page, three pages, three pages and
//! one row, and a set that needs `_continue`, and the rows are compared one by one with
//! the framework's SQLite database (read through a route its document does not list).
//! A "complete" verdict must be exact; a walk that ends partial fails too, since every
//! set is within what a walk and its resumptions fetch. One server per framework serves
//! every set to every test of this binary.

mod django_ninja;
mod django_rest_framework;
mod fastapi_pagination;
mod fastapi_shapes;
mod flask_smorest;
mod json_server;
mod litestar;
pub mod oracle;
pub mod server;
