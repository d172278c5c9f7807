//! Litestar's `OffsetPagination` (`{items, limit, offset, total}`), `CursorPagination`
//! (`{items, results_per_page, cursor}`: the id of the last row handed out, sent back
//! as `cursor`; the page size is `results_per_page`, a name no list holds) and
//! `ClassicPagination` (`current_page`, `page_size`, `{…, total_pages}`): P1, P5, P8,
//! P12 (evidence from the response schema).

use crate::frameworks::oracle::check;
use crate::frameworks::server::Framework;

static LITESTAR: Framework = Framework::new("litestar", "/schema/openapi.json");

#[tokio::test]
async fn litestar_offset_pagination_walks_exactly_its_database() {
    check(&LITESTAR, "litestar_offset_items").await;
}

#[tokio::test]
async fn litestar_cursor_pagination_walks_exactly_its_database() {
    check(&LITESTAR, "litestar_cursor_items").await;
}

#[tokio::test]
async fn litestar_classic_pagination_walks_exactly_its_database() {
    check(&LITESTAR, "litestar_classic_items").await;
}
