//! `StoreError`: what the store layer can fail with, with database constraint
//! violations translated into conflicts and invalid references, and a database that
//! cannot be reached (down, restarting, pool exhausted) told apart from a broken query.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Invalid(String),
    /// Postgres cannot be reached or is not accepting connections: worth a retry
    /// once it is back (503 with `Retry-After`), never a bug.
    #[error("the database is unavailable")]
    Unavailable(#[source] sqlx::Error),
    #[error("database error")]
    Database(#[source] sqlx::Error),
}

/// Errors that say the database is out of reach rather than that the query is wrong:
/// no connection in time, a broken connection, or a server shutting down or starting up
/// (SQLSTATE class 08 connection exceptions, 57P01–57P03).
fn unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|c| c.starts_with("08") || matches!(&*c, "57P01" | "57P02" | "57P03")),
        _ => false,
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        if let sqlx::Error::RowNotFound = e {
            return StoreError::NotFound;
        }
        if let Some(db) = e.as_database_error() {
            let constraint = db.constraint().unwrap_or("").to_string();
            match db.code().as_deref() {
                Some("23505") => {
                    return StoreError::Conflict(format!(
                        "an object with the same unique value already exists ({constraint})"
                    ))
                }
                Some("23503") => {
                    return StoreError::Invalid(format!(
                        "a referenced object does not exist or is still in use ({constraint})"
                    ))
                }
                // text or jsonb holding U+0000, which Postgres cannot store
                Some("22021") | Some("22P05") => {
                    return StoreError::Invalid(
                        "text must not contain NUL (\\u0000) characters".into(),
                    )
                }
                Some("23514") => {
                    return StoreError::Invalid(format!("a value is out of range ({constraint})"))
                }
                _ => {}
            }
        }
        if unreachable(&e) {
            return StoreError::Unavailable(e);
        }
        StoreError::Database(e)
    }
}
