//! Tools' sentence vectors (D5), kept with the tool: one row per tool and model, valid
//! for the text it was computed from (`text_sha256`); a tool's deletion takes it along.
//! Vectors are little-endian `f32`s; a row of another width is ignored by its reader.

use sqlx::PgPool;

use super::{OrgId, StoreError};

/// Ids read per statement (a bound on one statement's size, not on the caller's list).
const READ_CHUNK: usize = 1000;

/// A stored vector: the tool, the hash of the text it embeds, its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredVector {
    pub tool_id: String,
    pub text_sha256: Vec<u8>,
    pub vector: Vec<u8>,
}

/// The stored vectors of `tool_ids` under `model` (any text; the caller checks the hash).
pub async fn read(
    pool: &PgPool,
    org: &OrgId,
    model: &str,
    tool_ids: &[String],
) -> Result<Vec<StoredVector>, StoreError> {
    let mut out = Vec::new();
    for ids in tool_ids.chunks(READ_CHUNK) {
        let rows = sqlx::query_as!(
            StoredVector,
            "SELECT tool_id, text_sha256, vector FROM tool_vectors \
             WHERE org_id = $1 AND model = $2 AND tool_id = ANY($3::TEXT[])",
            org.as_str(),
            model,
            ids,
        )
        .fetch_all(pool)
        .await?;
        out.extend(rows);
    }
    Ok(out)
}

/// Keeps `vectors` under `model`, replacing a tool's vector of another text; a tool
/// deleted meanwhile is skipped (its vector has nothing to be kept with).
pub async fn write(
    pool: &PgPool,
    org: &OrgId,
    model: &str,
    vectors: &[StoredVector],
) -> Result<(), StoreError> {
    for chunk in vectors.chunks(READ_CHUNK) {
        let ids: Vec<&str> = chunk.iter().map(|v| v.tool_id.as_str()).collect();
        let hashes: Vec<&[u8]> = chunk.iter().map(|v| v.text_sha256.as_slice()).collect();
        let bytes: Vec<&[u8]> = chunk.iter().map(|v| v.vector.as_slice()).collect();
        sqlx::query!(
            "INSERT INTO tool_vectors (org_id, tool_id, model, text_sha256, vector) \
             SELECT $1, v.tool_id, $2, v.text_sha256, v.vector \
             FROM unnest($3::TEXT[], $4::BYTEA[], $5::BYTEA[]) AS v(tool_id, text_sha256, vector) \
             JOIN tools t ON t.org_id = $1 AND t.id = v.tool_id \
             ON CONFLICT (org_id, tool_id, model) DO UPDATE \
             SET text_sha256 = EXCLUDED.text_sha256, vector = EXCLUDED.vector, created_at = now() \
             WHERE tool_vectors.text_sha256 IS DISTINCT FROM EXCLUDED.text_sha256",
            org.as_str(),
            model,
            &ids as &[&str],
            &hashes as &[&[u8]],
            &bytes as &[&[u8]],
        )
        .execute(pool)
        .await?;
    }
    Ok(())
}
