//! Where the secrets test looks for a secret, and in which forms: every text the run
//! produced (logs, responses, every row of every table, every Redis key and value, the
//! OpenAPI document), searched for each secret raw, URL-encoded (both ways) and
//! JSON-escaped (with and without `\/` for `/`).

use sqlx::{Connection, PgConnection};

use crate::support::helpers::{scan_keys, Res};

/// The forms a secret could be written in.
fn forms(secret: &str) -> Vec<String> {
    let mut out = vec![secret.to_string()];
    out.push(url::form_urlencoded::byte_serialize(secret.as_bytes()).collect());
    out.push(
        secret
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect(),
    );
    let quoted = serde_json::to_string(secret).unwrap();
    out.push(quoted[1..quoted.len() - 1].to_string());
    out.push(quoted[1..quoted.len() - 1].replace('/', "\\/"));
    out.sort();
    out.dedup();
    out
}

/// Every text the run produced that a secret must stay out of: `(where, text)`, and the
/// names of the secrets that text may legitimately hold (a minted token in its own
/// minting response).
#[derive(Default)]
pub struct Haystacks(Vec<(String, String, Vec<&'static str>)>);

impl Haystacks {
    pub fn add(&mut self, place: impl Into<String>, text: impl Into<String>) {
        self.0.push((place.into(), text.into(), Vec::new()));
    }
    pub fn response(&mut self, place: &str, r: &Res) {
        self.response_allowing(place, r, &[]);
    }
    pub fn response_allowing(&mut self, place: &str, r: &Res, allowed: &[&'static str]) {
        let headers: String = r
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {}\n", String::from_utf8_lossy(v.as_bytes())))
            .collect();
        self.0.push((
            place.to_string(),
            format!("{headers}\n{}", r.text),
            allowed.to_vec(),
        ));
    }

    /// `secret name: form found in place: …context…` for every leak.
    pub fn leaks(&self, secrets: &[(&'static str, String)]) -> Vec<String> {
        let mut out = Vec::new();
        for (place, text, allowed) in &self.0 {
            for (name, secret) in secrets {
                if allowed.contains(name) {
                    continue;
                }
                for form in forms(secret) {
                    if let Some(at) = text.find(&form) {
                        let from = text.floor_char_boundary(at.saturating_sub(120));
                        let to = text.ceil_char_boundary((at + form.len() + 60).min(text.len()));
                        out.push(format!("{name} in {place}: …{}…", &text[from..to]));
                    }
                }
            }
        }
        out
    }
}

/// Every row of every table of the database as JSON text, one table per entry.
pub async fn database_text(db: &str) -> Vec<(String, String)> {
    let mut conn = PgConnection::connect(db).await.unwrap();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(tables.len() > 5, "{tables:?}");
    let mut out = Vec::new();
    for table in tables {
        let sql = format!(
            r#"SELECT coalesce(string_agg(row_to_json(t)::text, E'\n'), '') FROM "{table}" t"#
        );
        let text: String = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(&mut conn)
            .await
            .unwrap();
        out.push((table, text));
    }
    out
}

/// Every key of the Redis the binary used, with its value whatever its type.
pub async fn redis_text(url: &str) -> Vec<(String, String)> {
    use deadpool_redis::redis;
    let pool = deadpool_redis::Config::from_url(url)
        .create_pool(Some(deadpool_redis::Runtime::Tokio1))
        .unwrap();
    let mut c = pool.get().await.unwrap();
    let keys: Vec<Vec<u8>> = scan_keys(&mut c).await;
    let mut out = Vec::new();
    for key in keys {
        let kind: String = redis::cmd("TYPE")
            .arg(&key)
            .query_async(&mut c)
            .await
            .unwrap();
        let cmd = match kind.as_str() {
            "string" => redis::cmd("GET").arg(&key).clone(),
            "hash" => redis::cmd("HGETALL").arg(&key).clone(),
            "list" => redis::cmd("LRANGE").arg(&key).arg(0).arg(-1).clone(),
            "set" => redis::cmd("SMEMBERS").arg(&key).clone(),
            "zset" => redis::cmd("ZRANGE").arg(&key).arg(0).arg(-1).clone(),
            "stream" => redis::cmd("XRANGE").arg(&key).arg("-").arg("+").clone(),
            _ => continue, // expired meanwhile
        };
        let value: redis::Value = cmd.query_async(&mut c).await.unwrap_or(redis::Value::Nil);
        out.push((
            String::from_utf8_lossy(&key).into_owned(),
            format!("{value:?}"),
        ));
    }
    out
}
