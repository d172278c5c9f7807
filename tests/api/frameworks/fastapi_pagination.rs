//! fastapi-pagination's `Page` (`page`, `size`; `{items, total, page, size, pages}`),
//! `LimitOffsetPage` and `CursorPage` (`cursor`, `size`; the next token under
//! `next_page`, which its document describes as "Cursor for the next page"): P1, P5,
//! P8, P12 (a next token under a key no list names, read from the response schema).

use crate::frameworks::oracle::check;
use crate::frameworks::server::Framework;

static FASTAPI: Framework = Framework::new("fastapi_pagination", "/openapi.json");

#[tokio::test]
async fn fastapi_pagination_page_walks_exactly_its_database() {
    check(&FASTAPI, "fastapi_page_items").await;
}

#[tokio::test]
async fn fastapi_pagination_limit_offset_page_walks_exactly_its_database() {
    check(&FASTAPI, "fastapi_limit_offset_items").await;
}

#[tokio::test]
async fn fastapi_pagination_cursor_page_walks_exactly_its_database() {
    check(&FASTAPI, "fastapi_cursor_items").await;
}
