//! What Postgres spends writing a call's record — a measurement, not a test (ignored; no
//! timing is asserted). Moved out of `call_records` to keep files small.

use serde_json::{json, Value};

use crate::support::upstream_server::{self, CONTACTS};

/// A pool of one connection to `database`, so one Postgres backend process does all the
/// work, and that backend's user + system CPU so far (from `/proc`, in clock ticks of
/// 1/100 s: the machine's other load does not count). For the cost measurements.
pub(crate) async fn one_backend(database: &str) -> (sqlx::PgPool, impl Fn() -> u64 + Copy) {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(database)
        .await
        .unwrap();
    let backend: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&pool)
        .await
        .unwrap();
    let cpu = move || {
        let stat = std::fs::read_to_string(format!("/proc/{backend}/stat")).unwrap();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    };
    (pool, cpu)
}

/// What Postgres spends writing a record's result, by the result column's type and
/// compression: the CPU time of the Postgres backend process (from `/proc`, so the load
/// on the machine does not count) per row of `INSERT … SELECT FROM UNNEST` (the record
/// writer's shape), one row at a time and 32 at once, the best of three runs. A
/// measurement, not a test (no timing is asserted):
/// `cargo test --test api record_write_cost -- --ignored --nocapture`.
#[tokio::test]
#[ignore]
async fn record_write_cost() {
    let database = crate::support::helpers::fresh_database().await;
    let (pool, cpu) = one_backend(&database).await;
    // a looping result as the bench's cache hit returns it: 334 projected rows
    let rows: Vec<Value> = (0..334)
        .map(|i| {
            let c = upstream_server::contact(i % CONTACTS);
            json!({"id": i, "name": c["name"], "company": {"name": c["company"]["name"]}, "tags": c["tags"]})
        })
        .collect();
    let large = json!({"items": rows, "_itemCount": 334, "_pagingComplete": true, "_likelyMoreRows": false,
        "_stoppedBy": "end", "_note": "All 334 rows.", "_resultId": "res_0123456789abcdef0123456789abcdef"})
    .to_string();
    let small = json!({"id": 7, "name": "Contact 7", "email": "c7@example.com"}).to_string();
    let n = 1024;
    for (ty, compression) in [
        ("jsonb", "pglz"),
        ("jsonb", "lz4"),
        ("json", "pglz"),
        ("json", "lz4"),
    ] {
        let table = format!("r_{ty}_{compression}");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "CREATE TABLE {table} (id text PRIMARY KEY, result {ty} COMPRESSION {compression})"
        )))
        .execute(&pool)
        .await
        .unwrap();
        let insert = format!(
            "INSERT INTO {table} (id, result) SELECT n.id, n.result::{ty} \
             FROM UNNEST($1::text[], $2::text[]) AS n(id, result)"
        );
        for (size, text) in [(large.len(), &large), (small.len(), &small)] {
            let best = best_of_three(|batch: usize| {
                let (pool, insert, text) = (&pool, &insert, text);
                async move {
                    let before = cpu();
                    for _ in 0..n / batch {
                        let ids: Vec<String> = (0..batch)
                            .map(|_| loopgate::crypto::random_token(20))
                            .collect();
                        sqlx::query(sqlx::AssertSqlSafe(insert.clone()))
                            .bind(&ids)
                            .bind(vec![text.as_str(); batch])
                            .execute(pool)
                            .await
                            .unwrap();
                    }
                    cpu() - before
                }
            })
            .await;
            // ticks are 10 ms: per row in ms
            let per = |ticks: u64| ticks as f64 * 10.0 / n as f64;
            eprintln!(
                "{ty} {compression}, result {size} bytes: Postgres CPU {:.3} ms per row one at a time, {:.3} ms per row 32 at once",
                per(best.0),
                per(best.1),
            );
        }
    }
    // a cache hit's record as written now: a reference to its body (stored once, known to
    // be in Postgres: the writer does not carry it) and the `_resultId` it was filled with,
    // the result column left NULL, with the body index a record has
    sqlx::query(
        "CREATE TABLE r_ref (id text PRIMARY KEY, result json COMPRESSION lz4, body_id text, body_fill text)",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("CREATE INDEX ON r_ref (body_id) WHERE body_id IS NOT NULL")
        .execute(&pool)
        .await
        .unwrap();
    let body_id = hex::encode(loopgate::crypto::sha256(large.as_bytes()));
    // small rows: 4x as many, for the 10 ms ticks to resolve them
    let n = 4 * n;
    let best = best_of_three(|batch: usize| {
        let (pool, body_id) = (&pool, &body_id);
        async move {
            let before = cpu();
            for _ in 0..n / batch {
                let ids: Vec<String> = (0..batch)
                    .map(|_| loopgate::crypto::random_token(20))
                    .collect();
                let fills: Vec<String> = (0..batch)
                    .map(|_| format!("res_{}", loopgate::crypto::random_token(32)))
                    .collect();
                sqlx::query(
                    "INSERT INTO r_ref (id, result, body_id, body_fill) \
                         SELECT n.id, n.result::json, n.body_id, n.body_fill \
                         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) \
                         AS n(id, result, body_id, body_fill)",
                )
                .bind(&ids)
                .bind(vec![None::<&str>; batch])
                .bind(vec![body_id.as_str(); batch])
                .bind(&fills)
                .execute(pool)
                .await
                .unwrap();
            }
            cpu() - before
        }
    })
    .await;
    let per = |ticks: u64| ticks as f64 * 10.0 / n as f64;
    eprintln!(
        "a hit's reference (body {} bytes stored once): Postgres CPU {:.3} ms per row one at a time, {:.3} ms per row 32 at once",
        large.len(),
        per(best.0),
        per(best.1),
    );
}

/// The fewest CPU ticks `run(batch)` took over three rounds, one row per statement and 32
/// per statement (rounds alternate the two, so both see the same machine).
async fn best_of_three<F, Fut>(run: F) -> (u64, u64)
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    let mut best = (u64::MAX, u64::MAX);
    for _ in 0..3 {
        let one = run(1).await;
        let batched = run(32).await;
        best = (best.0.min(one), best.1.min(batched));
    }
    best
}
