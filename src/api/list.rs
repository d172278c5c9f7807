//! The list protocol shared by every collection: `?limit=&cursor=` in,
//! `{data, has_more, cursor, total}` out (`total` on the first page only).

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::error::ApiError;
use crate::store::{ListPage, PageRequest};

/// Paging parameters of every list endpoint.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Page size, 1–200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<i64>,
    /// The `cursor` of the previous page, passed back unchanged to continue.
    pub cursor: Option<String>,
}

impl ListParams {
    pub fn page(&self) -> Result<PageRequest, ApiError> {
        Ok(PageRequest::parse(self.limit, self.cursor.as_deref())?)
    }
}

/// One page of a list, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct ListResponse<T> {
    pub data: Vec<T>,
    /// `true` when more rows follow: pass `cursor` back to get them.
    pub has_more: bool,
    /// Opaque, URL-safe; `null` on the last page.
    pub cursor: Option<String>,
    /// How many rows the whole list holds; only on the first page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<i64>,
}

impl<T> From<ListPage<T>> for ListResponse<T> {
    fn from(p: ListPage<T>) -> Self {
        ListResponse {
            data: p.items,
            has_more: p.has_more,
            cursor: p.cursor,
            total: p.total,
        }
    }
}
