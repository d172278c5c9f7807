//! Django REST framework's `PageNumberPagination` (`page` only: DRF documents no page
//! size unless configured; `{count, next, previous, results}`, and a page past the end
//! is a 404), `LimitOffsetPagination` and `CursorPagination` (`cursor` only, next URL):
//! P1, P2, P5, P8, P12 (DRF's generator describes the paginated response).

use crate::frameworks::oracle::check;
use crate::frameworks::server::Framework;

static DRF: Framework = Framework::new("django_rest_framework", "/openapi.json");

#[tokio::test]
async fn drf_page_numbers_walk_exactly_its_database() {
    check(&DRF, "listDrfPageItems").await;
}

#[tokio::test]
async fn drf_limit_offset_walks_exactly_its_database() {
    check(&DRF, "listDrfOffsetItems").await;
}

#[tokio::test]
async fn drf_cursor_next_urls_walk_exactly_its_database() {
    check(&DRF, "listDrfCursorItems").await;
}
