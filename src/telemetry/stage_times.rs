//! Time per stage of a call, from spans timed under load: the stages of the request path
//! (authentication, the rate limit, loading the agent, the cache lookup, the upstream walk,
//! presentation and the size guard, the result store, the record) open a span of target
//! [`TARGET`] at TRACE level. Off by default — the filter (`RUST_LOG`) leaves them out, and
//! a disabled span costs one check of its call site. `RUST_LOG=warn,loopgate::stage=trace`
//! turns them on: [`StageTimes`] then adds each one's wall time (from its creation to its
//! close, waits included) to a total per stage, which `/metrics` shows as
//! `loopgate_stage_microseconds{stage}` and `loopgate_stage_spans{stage}`.
//! `scripts/bench-load` reads them around each run (docs/performance.md, "Where a call's
//! time goes").

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The target of every stage span.
pub const TARGET: &str = "loopgate::stage";

/// Spans closed and microseconds spent, per stage.
static TOTALS: Mutex<BTreeMap<&'static str, (u64, u64)>> = Mutex::new(BTreeMap::new());

/// The layer that times stage spans (installed with the others, `telemetry::init`).
pub struct StageTimes;

struct Opened(Instant);

impl<S> Layer<S> for StageTimes
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().target() != TARGET {
            return;
        }
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Opened(Instant::now()));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        if span.metadata().target() != TARGET {
            return;
        }
        let Some(opened) = span.extensions().get::<Opened>().map(|o| o.0) else {
            return;
        };
        let micros = opened.elapsed().as_micros() as u64;
        let mut totals = TOTALS.lock().unwrap_or_else(|p| p.into_inner());
        let t = totals.entry(span.metadata().name()).or_default();
        t.0 += 1;
        t.1 += micros;
    }
}

/// `(stage, spans closed, microseconds)` so far, by stage name.
pub fn totals() -> Vec<(&'static str, u64, u64)> {
    let totals = TOTALS.lock().unwrap_or_else(|p| p.into_inner());
    totals.iter().map(|(k, (n, us))| (*k, *n, *us)).collect()
}

/// A stage span (see the module header): `stage!("agent_load")`.
#[macro_export]
macro_rules! stage {
    ($name:literal) => {
        tracing::trace_span!(target: "loopgate::stage", $name)
    };
}
