//! In-memory upstreams, a virtual clock and a tiny executor for the engine's tests.

use crate::ports::{
    next_page_on_origin, status_is_transient, Clock, Progress, ProgressSink, Upstream,
    UpstreamFailure, UpstreamRequest, UpstreamResponse,
};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Polls a future to completion; the test doubles never pend for real.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

/// Virtual time shared by the clock and the fake API (which may take time per call).
#[derive(Clone, Default)]
pub struct FakeClock(pub Arc<AtomicU64>);

impl FakeClock {
    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send {
        self.advance(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        std::future::ready(())
    }
}

type Handler =
    dyn Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure> + Send + Sync;

/// An API answering from a closure `(request, call index)`, logging every request.
pub struct FakeApi {
    pub handler: Box<Handler>,
    /// The provider's base URL: next-page links are followed on its origin only (P5).
    pub base_url: String,
    pub log: Mutex<Vec<UpstreamRequest>>,
    pub clock: FakeClock,
    pub latency_ms: u64,
}

impl FakeApi {
    pub fn new(
        clock: &FakeClock,
        f: impl Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        Self {
            handler: Box::new(f),
            base_url: "https://api.example.com".to_owned(),
            log: Mutex::new(Vec::new()),
            clock: clock.clone(),
            latency_ms: 0,
        }
    }

    pub fn requests(&self) -> Vec<UpstreamRequest> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Upstream for FakeApi {
    fn call(
        &self,
        req: UpstreamRequest,
    ) -> impl Future<Output = Result<UpstreamResponse, UpstreamFailure>> + Send {
        let n = {
            let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
            log.push(req.clone());
            log.len() - 1
        };
        self.clock.advance(self.latency_ms);
        std::future::ready((self.handler)(&req, n))
    }

    fn follow(&self, next: &str) -> Option<String> {
        let base = url::Url::parse(self.base_url.trim()).ok()?;
        next_page_on_origin(&base, next).ok().map(String::from)
    }
}

pub fn ok(v: Value) -> Result<UpstreamResponse, UpstreamFailure> {
    Ok(UpstreamResponse {
        status: 200,
        headers: Vec::new(),
        body: serde_json::to_vec(&v).unwrap_or_default(),
    })
}

/// An error answer to a GET, classified by the upstream layer's own rule (the one the
/// runtime uses), so the engine's tests see what production sees.
pub fn status(code: u16, body: &str) -> Result<UpstreamResponse, UpstreamFailure> {
    Err(UpstreamFailure {
        transient: status_is_transient(code, true),
        status: Some(code),
        retry_after: None,
        message: format!("the upstream answered {code}: {body}"),
        tool_error: false,
    })
}

/// Rows `{"id": i, "name": "row i"}`.
pub fn rows(range: std::ops::Range<usize>) -> Vec<Value> {
    range
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect()
}

pub fn arg_u64(req: &UpstreamRequest, name: &str) -> Option<u64> {
    let v = req
        .args
        .get(name)
        .or_else(|| req.args.get("body").and_then(|b| b.get(name)))?;
    v.as_u64().or_else(|| v.as_str()?.parse().ok())
}

/// `name=value` from a URL's query.
pub fn query(url: &str, name: &str) -> Option<String> {
    url.split_once('?')?.1.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| v.to_owned())
    })
}

pub fn arg_str(req: &UpstreamRequest, name: &str) -> Option<String> {
    let v = req
        .args
        .get(name)
        .or_else(|| req.args.get("body").and_then(|b| b.get(name)))?;
    v.as_str().map(str::to_owned)
}

pub fn with_header(
    body: Value,
    name: &str,
    value: String,
) -> Result<UpstreamResponse, UpstreamFailure> {
    Ok(UpstreamResponse {
        status: 200,
        headers: vec![(name.to_owned(), value)],
        body: serde_json::to_vec(&body).unwrap_or_default(),
    })
}

#[derive(Default)]
pub struct ProgressLog(pub Mutex<Vec<Progress>>);

impl ProgressSink for ProgressLog {
    fn progress(&self, p: &Progress) {
        if let Ok(mut l) = self.0.lock() {
            l.push(p.clone());
        }
    }
}

impl ProgressLog {
    pub fn all(&self) -> Vec<Progress> {
        self.0.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

/// Every merged row's id, in order; a row without one (a phantom envelope) shows as
/// `u64::MAX`, so it cannot hide.
pub fn row_ids(o: &crate::Outcome) -> Vec<u64> {
    o.items
        .iter()
        .map(|i| i.to_value()["id"].as_u64().unwrap_or(u64::MAX))
        .collect()
}

/// A property test's config: `PROPTEST_CASES`, when set, is its number of cases (as it is
/// for the property tests on proptest's default config), else `cases`, its own count for
/// a quick `cargo test`. `scripts/test` sets 3000: cases that took thousands to find
/// (the busy page under a short time limit of `tests::parallel`) are found again.
pub fn prop_config(cases: u32) -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(cases);
    proptest::test_runner::Config::with_cases(cases)
}
