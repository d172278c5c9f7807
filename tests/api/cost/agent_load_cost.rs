//! What Postgres spends on the agent statement (`store::agent_load`) that a warm call no
//! longer runs when its replica remembers the agent (`call::agent_memory`) — a
//! measurement, not a test (ignored; no timing is asserted):
//! `cargo test --test api agent_load_cost -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use serde_json::json;

use loopgate::store::agent_load::{self, ThreadLookup};
use loopgate::store::OrgId;

use crate::support::helpers::{spawn_app, TestApp};
use crate::support::rig::{tool_defs, Rig};
use crate::support::upstream_server;

/// An agent with `tools` bound tools and a thread `th` of user u1.
async fn agent_with(app: &TestApp, base: &str, tools: usize) -> Rig {
    let mut defs = tool_defs();
    defs.retain(|d| d.0 == "get_contact");
    for i in 1..tools {
        let name: &'static str = Box::leak(format!("filler_{i}").into_boxed_str());
        defs.push((
            name,
            "GET",
            "/contacts/{id}",
            json!({"type": "object", "properties": {"id": {"type": "integer"}}}),
        ));
    }
    let rig = Rig::with_tools(app, base, defs, false).await;
    let token = rig.token(app, "u1", json!({})).await;
    rig.call(app, &token, "th", "get_contact", json!({"id": 7}))
        .await
        .ok(200);
    rig
}

/// The CPU time of the one Postgres backend running the agent statement (from `/proc`,
/// so the machine's other load does not count) and the wall time, per statement, for an
/// agent with 2 and with 33 tools, with its thread; the best of three runs of 1,000.
#[tokio::test]
#[ignore]
async fn agent_load_cost() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let (pool, cpu) = crate::cost::record_write_cost::one_backend(&app.database_url).await;
    const N: u32 = 1000;
    for tools in [2, 33] {
        let rig = agent_with(&app, &up.base, tools).await;
        let org = OrgId::trusted(rig.t.org.clone());
        let caller: String = sqlx::query_scalar("SELECT caller FROM threads WHERE org_id = $1")
            .bind(org.as_str())
            .fetch_one(&pool)
            .await
            .unwrap();
        let lookup = ThreadLookup {
            caller: &caller,
            key: "th",
            fresh_within: Duration::from_secs(60),
        };
        let (mut best_cpu, mut best_wall) = (u64::MAX, Duration::MAX);
        for _ in 0..3 {
            let (c0, t0) = (cpu(), Instant::now());
            for _ in 0..N {
                let agent = agent_load::load(&pool, &org, &rig.agent, Some(lookup), Some("u1"))
                    .await
                    .unwrap();
                assert!(agent.thread.is_some_and(|t| t.fresh));
            }
            best_wall = best_wall.min(t0.elapsed());
            best_cpu = best_cpu.min(cpu() - c0);
        }
        eprintln!(
            "agent statement, {tools} tools: Postgres backend CPU {:.3} ms, wall {:.3} ms per statement (best of 3 x {N})",
            best_cpu as f64 * 10.0 / f64::from(N),
            best_wall.as_secs_f64() * 1e3 / f64::from(N)
        );
    }
}
