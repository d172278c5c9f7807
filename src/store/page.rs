//! Keyset pagination shared by every list: newest first on `(created_at, id)`, the id
//! breaking ties between rows created in one transaction (which share `now()`). The
//! cursor is the last row's key, base64url-encoded, so rows inserted while a client
//! walks the pages never make it skip or repeat one.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{FromRow, PgPool, Postgres, QueryBuilder};

use super::StoreError;

pub const DEFAULT_LIMIT: i64 = 50;
pub const MAX_LIMIT: i64 = 200;

#[derive(Debug, Clone)]
pub struct PageRequest {
    pub limit: i64,
    pub after: Option<(DateTime<Utc>, String)>,
}

impl PageRequest {
    /// Validates `limit` (1..=200, default 50) and decodes `cursor`.
    pub fn parse(limit: Option<i64>, cursor: Option<&str>) -> Result<Self, StoreError> {
        let limit = limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(StoreError::Invalid(format!(
                "limit must be between 1 and {MAX_LIMIT}"
            )));
        }
        let after = match cursor.filter(|c| !c.is_empty()) {
            None => None,
            Some(c) => Some(decode(c).ok_or_else(|| {
                StoreError::Invalid(
                    "cursor is not valid: pass back the `cursor` of the previous page unchanged"
                        .into(),
                )
            })?),
        };
        Ok(Self { limit, after })
    }
}

fn encode(at: &DateTime<Utc>, id: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{}|{id}", at.timestamp_micros()))
}

fn decode(cursor: &str) -> Option<(DateTime<Utc>, String)> {
    let raw = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
    let (micros, id) = raw.split_once('|')?;
    let at = DateTime::from_timestamp_micros(micros.parse().ok()?)?;
    (!id.is_empty()).then(|| (at, id.to_string()))
}

/// Rows that can be listed: they expose their sort key.
pub trait Keyed {
    fn key(&self) -> (&DateTime<Utc>, &str);
}

#[derive(Debug)]
pub struct ListPage<T> {
    pub items: Vec<T>,
    pub has_more: bool,
    pub cursor: Option<String>,
    /// Only on the first page: counting again on every page is wasted work.
    pub total: Option<i64>,
}

impl<T> ListPage<T> {
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> ListPage<U> {
        ListPage {
            items: self.items.into_iter().map(f).collect(),
            has_more: self.has_more,
            cursor: self.cursor,
            total: self.total,
        }
    }
}

/// One list query: `SELECT {columns} FROM {from} WHERE {filters…}`; `from`, `columns`
/// and filter column names are static SQL written in this crate, values are bound.
pub struct ListQuery<'a> {
    pub from: &'static str,
    pub columns: &'static str,
    pub filters: Vec<(&'static str, &'a str)>,
}

fn push_filters(
    qb: &mut QueryBuilder<Postgres>,
    filters: &[(&'static str, &str)],
    any_of: &[(&'static str, &str)],
) {
    qb.push(" WHERE TRUE");
    for (column, value) in filters {
        qb.push(" AND ")
            .push(*column)
            .push(" = ")
            .push_bind(value.to_string());
    }
    if !any_of.is_empty() {
        qb.push(" AND (FALSE");
        for (column, value) in any_of {
            qb.push(" OR ")
                .push(*column)
                .push(" = ")
                .push_bind(value.to_string());
        }
        qb.push(")");
    }
}

pub async fn list<T>(
    pool: &PgPool,
    q: ListQuery<'_>,
    req: &PageRequest,
) -> Result<ListPage<T>, StoreError>
where
    T: for<'r> FromRow<'r, PgRow> + Send + Unpin + Keyed,
{
    list_any(pool, q, &[], req).await
}

/// [`list`] with one more condition: at least one of `any_of` (`column = value`) holds
/// (none given: no condition).
pub async fn list_any<T>(
    pool: &PgPool,
    q: ListQuery<'_>,
    any_of: &[(&'static str, &str)],
    req: &PageRequest,
) -> Result<ListPage<T>, StoreError>
where
    T: for<'r> FromRow<'r, PgRow> + Send + Unpin + Keyed,
{
    let mut qb = QueryBuilder::<Postgres>::new("SELECT ");
    qb.push(q.columns).push(" FROM ").push(q.from);
    push_filters(&mut qb, &q.filters, any_of);
    if let Some((at, id)) = &req.after {
        qb.push(" AND (created_at, id) < (")
            .push_bind(*at)
            .push(", ")
            .push_bind(id.clone())
            .push(")");
    }
    qb.push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .push_bind(req.limit + 1);
    let mut items: Vec<T> = qb.build_query_as().fetch_all(pool).await?;
    let has_more = items.len() as i64 > req.limit;
    items.truncate(req.limit as usize);
    let cursor = match items.last() {
        Some(last) if has_more => {
            let (at, id) = last.key();
            Some(encode(at, id))
        }
        _ => None,
    };
    let total = if req.after.is_none() {
        let mut count = QueryBuilder::<Postgres>::new("SELECT count(*) FROM ");
        count.push(q.from);
        push_filters(&mut count, &q.filters, any_of);
        Some(count.build_query_scalar::<i64>().fetch_one(pool).await?)
    } else {
        None
    };
    Ok(ListPage {
        items,
        has_more,
        cursor,
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_roundtrip_and_rejects_garbage() {
        let at = DateTime::from_timestamp_micros(1_764_500_000_123_456).unwrap();
        let c = encode(&at, "org_abc");
        assert!(c
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_'));
        assert_eq!(decode(&c), Some((at, "org_abc".to_string())));
        assert!(PageRequest::parse(None, Some("!!!")).is_err());
        assert!(PageRequest::parse(Some(0), None).is_err());
        assert!(PageRequest::parse(Some(201), None).is_err());
        assert_eq!(PageRequest::parse(None, None).unwrap().limit, 50);
    }
}
