//! Three list shapes of public APIs on FastAPI (`tests/frameworks/fastapi_shapes`), each
//! imported from FastAPI's own document: protobuf-style JSON that leaves an empty list, an
//! empty token and a zero count out of the body (G7), an offset API that gives 35 rows a
//! page whatever `limit` asks (P14), and a Salesforce-style query that pages only through
//! a relative `nextRecordsUrl` (P15).

use crate::frameworks::oracle::check;
use crate::frameworks::server::Framework;

static SHAPES: Framework = Framework::new("fastapi_shapes", "/openapi.json");

#[tokio::test]
async fn fastapi_protobuf_style_lists_that_omit_empty_lists_walk_exactly() {
    check(&SHAPES, "shapes_proto_items").await;
}

#[tokio::test]
async fn fastapi_a_silently_capped_page_size_walks_exactly() {
    check(&SHAPES, "shapes_capped_items").await;
}

#[tokio::test]
async fn fastapi_paging_only_through_response_links_walks_exactly() {
    check(&SHAPES, "shapes_query_items").await;
}
