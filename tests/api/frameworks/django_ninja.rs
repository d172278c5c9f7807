//! django-ninja's `PageNumberPagination` (`{items, count}`, pages from 1),
//! `LimitOffsetPagination` (`{items, count}`) and `CursorPagination` (`{results, next,
//! previous}`, `next` an absolute URL carrying an opaque `cursor`): P1, P2, P5, P8, P9.

use crate::frameworks::oracle::check;
use crate::frameworks::server::Framework;

static NINJA: Framework = Framework::new("django_ninja", "/api/openapi.json");

#[tokio::test]
async fn django_ninja_page_numbers_walk_exactly_its_database() {
    check(&NINJA, "ninja_page_items").await;
}

#[tokio::test]
async fn django_ninja_limit_offset_walks_exactly_its_database() {
    check(&NINJA, "ninja_offset_items").await;
}

#[tokio::test]
async fn django_ninja_cursor_next_urls_walk_exactly_its_database() {
    check(&NINJA, "ninja_cursor_items").await;
}
