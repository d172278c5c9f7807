//! The offline data of the compile-time checked queries (`.sqlx/query-<hash>.json`, one
//! file per distinct SQL text of a `query!`, `query_as!` or `query_scalar!`) is what the
//! sources and the migrations make of it. Builds read only that data (`SQLX_OFFLINE`, set
//! in `.cargo/config.toml`), so without this check a migration could change a column's
//! type or nullability and every query would still compile against the old schema.
//!
//! After changing a query or a migration, regenerate the data and commit it:
//!
//! ```text
//! scripts/sqlx-prepare
//! ```
//!
//! (it brings up the project-local Postgres, migrates a fresh database, rebuilds the
//! crate with the macros online and `SQLX_OFFLINE_DIR` set, so each macro writes its own
//! file, and replaces `.sqlx/` with what they wrote; no sqlx-cli needed).
//!
//! The checks, in about a second: the files are exactly the queries in the sources (a
//! file's name and `hash` are the SHA-256 of its `query`, as sqlx names them, and every
//! macro's SQL literal has its file), and for each file a freshly migrated database
//! describes the query as the file does: parameter types, column names, types, origins and
//! nullability, compared in the form sqlx writes them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use sqlx::postgres::PgTypeInfo;
use sqlx::{Column, ColumnOrigin, Connection, Executor, PgConnection, SqlSafeStr};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The committed files: name → contents.
fn committed() -> BTreeMap<String, Value> {
    let dir = root().join(".sqlx");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("query-") && name.ends_with(".json")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let data: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: not JSON: {e}"));
        out.insert(name, data);
    }
    out
}

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The value of the string literal at the start of `s` (plain with the escapes Rust has,
/// or raw) and the rest after it; `None` when `s` does not start with one.
fn string_literal(s: &str) -> Option<(String, &str)> {
    if let Some(raw) = s.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let body = raw[hashes..].strip_prefix('"')?;
        let close = format!("\"{}", "#".repeat(hashes));
        let end = body.find(&close)?;
        return Some((body[..end].to_string(), &body[end + close.len()..]));
    }
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &body[i + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                '0' => out.push('\0'),
                '\\' => out.push('\\'),
                '"' => out.push('"'),
                '\'' => out.push('\''),
                // a line continuation: the newline and the whitespace after it go
                '\n' => {
                    let rest = &body[i + 2..];
                    let kept = rest.trim_start_matches([' ', '\t', '\n', '\r']);
                    for _ in 0..rest.len() - kept.len() {
                        chars.next();
                    }
                }
                other => panic!("escape \\{other} in a query literal: not handled by this check"),
            },
            c => out.push(c),
        }
    }
    None
}

/// The SQL of every query macro in the crate's sources, with where it is.
fn queries_in_sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches"] {
        rust_files(&root().join(dir), &mut files);
    }
    let this = Path::new(file!()).file_name().unwrap();
    let mut out = Vec::new();
    for path in files {
        if path.file_name() == Some(this) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let shown = path
            .strip_prefix(root())
            .unwrap_or(&path)
            .display()
            .to_string();
        let mut from = 0;
        while let Some(at) = text[from..].find("query") {
            let start = from + at;
            from = start + "query".len();
            let before = text[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
            if text[line_start..start].contains("//") {
                continue;
            }
            let after = &text[from..];
            let (kind, after) = ["_as", "_scalar", ""]
                .iter()
                .find_map(|k| after.strip_prefix(k).map(|a| (*k, a)))
                .unwrap_or(("", after));
            let after = after.strip_prefix("_unchecked").unwrap_or(after);
            let Some(args) = after.strip_prefix("!(") else {
                continue;
            };
            let line = text[..start].matches('\n').count() + 1;
            let place = format!("{shown}:{line}");
            // `query_as!(Type, "…", …)`: the SQL is the second argument
            let args = if kind == "_as" {
                &args[args.find(',').unwrap_or_else(|| panic!("{place}: no SQL")) + 1..]
            } else {
                args
            };
            let (sql, rest) = string_literal(args.trim_start())
                .unwrap_or_else(|| panic!("{place}: the SQL is not one string literal"));
            let next = rest.trim_start().chars().next();
            assert!(
                matches!(next, Some(',' | ')')),
                "{place}: the SQL is not one string literal (this check reads only that)"
            );
            out.push((place, sql));
        }
    }
    out
}

#[test]
fn every_query_in_the_sources_has_its_data_and_every_file_a_query() {
    let files = committed();
    let mut wanted: BTreeMap<String, String> = BTreeMap::new();
    for (place, sql) in queries_in_sources() {
        wanted.insert(format!("query-{}.json", sha256_hex(&sql)), place);
    }
    assert!(
        wanted.len() > 50,
        "found only {} queries: the source scan is broken",
        wanted.len()
    );
    let mut problems = Vec::new();
    for (name, data) in &files {
        let query = data["query"].as_str().unwrap_or_default();
        let hash = sha256_hex(query);
        if data["hash"] != hash.as_str() || *name != format!("query-{hash}.json") {
            problems.push(format!("{name}: its hash is not the SHA-256 of its query"));
        }
        if data["db_name"] != "PostgreSQL" {
            problems.push(format!("{name}: db_name is not PostgreSQL"));
        }
        if !wanted.contains_key(name) {
            problems.push(format!(
                "{name}: no query in the sources has this SQL (stale)"
            ));
        }
    }
    for (name, place) in &wanted {
        if !files.contains_key(name) {
            problems.push(format!("{place}: its query has no {name}"));
        }
    }
    assert!(
        problems.is_empty(),
        "the .sqlx data is out of date (regenerate it with scripts/sqlx-prepare):\n{}",
        problems.join("\n")
    );
}

/// A type as sqlx writes it: the name of its `PgType` variant (only the built-in types,
/// which are all this schema uses: a custom type would need its object form here).
fn type_json(t: &PgTypeInfo) -> Value {
    let shown = format!("{t:?}");
    match shown
        .strip_prefix("PgTypeInfo(")
        .and_then(|s| s.strip_suffix(')'))
    {
        Some(v) if v.chars().all(|c| c.is_ascii_alphanumeric()) => Value::String(v.into()),
        _ => panic!("{shown}: not a built-in type; teach type_json its form"),
    }
}

fn origin_json(origin: ColumnOrigin) -> Value {
    match origin {
        ColumnOrigin::Table(t) => json!({"Table": {"table": &*t.table, "name": &*t.name}}),
        ColumnOrigin::Expression => json!("Expression"),
        ColumnOrigin::Unknown => json!("Unknown"),
    }
}

/// A fresh database with the migrations run, on the test Postgres.
async fn migrated_database() -> Option<(String, String)> {
    let base = std::env::var("LOOPGATE_TEST_DATABASE_URL")
        .or_else(|_| std::env::var("DATABASE_URL"))
        .ok();
    let Some(base) = base else {
        crate::testing::missing("LOOPGATE_TEST_DATABASE_URL (the test Postgres)");
        return None;
    };
    let name = format!(
        "loopgate_test_{}",
        crate::crypto::random_token(12).to_lowercase()
    );
    let mut admin = PgConnection::connect(&base).await.unwrap();
    admin
        .execute(sqlx::AssertSqlSafe(format!(r#"CREATE DATABASE "{name}""#)))
        .await
        .unwrap();
    let (prefix, _) = base.rsplit_once('/').unwrap();
    let url = format!("{prefix}/{name}");
    let pool = super::connect(&url, 1).await.unwrap();
    super::migrate(&pool).await.unwrap();
    pool.close().await;
    Some((base, url))
}

#[tokio::test]
async fn the_committed_query_data_is_what_the_migrated_schema_describes() {
    let Some((base, url)) = migrated_database().await else {
        return;
    };
    let mut conn = PgConnection::connect(&url).await.unwrap();
    let files = committed();
    let mut problems = Vec::new();
    for (name, data) in &files {
        let query = data["query"].as_str().unwrap_or_default().to_string();
        let described = match conn
            .describe(sqlx::AssertSqlSafe(query.clone()).into_sql_str())
            .await
        {
            Ok(d) => d,
            Err(e) => {
                problems.push(format!("{name}: Postgres refuses it: {e}\n  {query}"));
                continue;
            }
        };
        let parameters = match &described.parameters {
            Some(sqlx::Either::Left(types)) => {
                json!({"Left": types.iter().map(type_json).collect::<Vec<_>>()})
            }
            Some(sqlx::Either::Right(n)) => json!({ "Right": n }),
            None => Value::Null,
        };
        let columns: Vec<Value> = described
            .columns
            .iter()
            .map(|c| {
                json!({
                    "ordinal": c.ordinal(),
                    "name": c.name(),
                    "type_info": type_json(c.type_info()),
                    "origin": origin_json(c.origin()),
                })
            })
            .collect();
        let live = json!({
            "columns": columns,
            "parameters": parameters,
            "nullable": described.nullable,
        });
        if live != data["describe"] {
            problems.push(format!(
                "{name}: the migrated schema describes it otherwise\n  query: {query}\n  \
                 committed: {}\n  migrated:  {live}",
                data["describe"]
            ));
        }
    }
    conn.close().await.ok();
    let name = url.rsplit_once('/').unwrap().1;
    if let Ok(mut admin) = PgConnection::connect(&base).await {
        let drop = format!(r#"DROP DATABASE IF EXISTS "{name}""#);
        admin.execute(sqlx::AssertSqlSafe(drop)).await.ok();
    }
    assert!(
        problems.is_empty(),
        "the .sqlx data does not match the migrations (regenerate it with \
         scripts/sqlx-prepare):\n{}",
        problems.join("\n")
    );
}
