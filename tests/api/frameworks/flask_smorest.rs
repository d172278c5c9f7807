//! Flask-smorest's `Blueprint.paginate`: `page` (from 1) and `page_size`, a bare array
//! as the body, and the page metadata (`total`, `next_page`, …) only in the JSON
//! `X-Pagination` header its document describes: P2, P11, P12 (totals in headers).

use crate::frameworks::oracle::check;
use crate::frameworks::server::Framework;

static SMOREST: Framework = Framework::new("flask_smorest", "/api-spec/openapi.json");

#[tokio::test]
async fn flask_smorest_x_pagination_walks_exactly_its_database() {
    // the operation has no operationId: the importer names it from method and path
    check(&SMOREST, "get_smorest_items_dataset").await;
}
