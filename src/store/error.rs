//! `StoreError`: what the store layer can fail with, with database constraint
//! violations translated into conflicts and invalid references.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Invalid(String),
    #[error("database error")]
    Database(#[source] sqlx::Error),
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
                Some("23514") => {
                    return StoreError::Invalid(format!("a value is out of range ({constraint})"))
                }
                _ => {}
            }
        }
        StoreError::Database(e)
    }
}
