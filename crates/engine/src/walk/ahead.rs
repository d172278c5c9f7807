//! P9: upstream requests started before the walk needs them. The walk stays the one
//! sequential decision-maker: it says which requests it expects next (the later pages of a
//! collection whose first page announced a total or linked its last page, the first request
//! of later `_for_each` values), this keeps up to `concurrency` requests in flight (the walk's own included), and
//! the walk takes each answer at the point where a sequential walk would have made that
//! request. Budgets are counted there, so rows, budgets and verdict are the sequential
//! walk's. A guess that turns out wrong (a short page moved the offsets, a bound stopped the
//! walk) is dropped unused; its request is never counted and never merged.
//!
//! The request budget holds for the requests really sent (P3), not only for those the walk
//! took: every request is reserved before it is sent, and one the walk asks for when the
//! budget is spent on requests started ahead is refused (the walk stops, `requests`). So
//! that this never happens to an API that tells the truth, a request starts ahead only if
//! the sequential walk reaches it within the budget even in the worst case: every request
//! before it retried as often as allowed, every later value started ahead walking all the
//! pages it may. When the API misleads the guesses (a lying total or last-page link, a
//! page shorter than the first, a page failing or empty before the end), what was sent
//! ahead and not taken still counts, and the walk may stop up to that many requests before
//! a sequential walk would, with the same rows up to there and an honest verdict.
//!
//! Only futures are polled together here: nothing is spawned, so the engine stays free of
//! any runtime, and the provider's rate limiter inside the `Upstream` spaces every request.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::FutureExt;
use serde_json::{Map, Value};

use crate::limits::Limits;
use crate::ports::{Upstream, UpstreamFailure, UpstreamRequest, UpstreamResponse};

type Answer = Result<UpstreamResponse, UpstreamFailure>;
type Running<'a> = Pin<Box<dyn Future<Output = (u64, Answer)> + Send + 'a>>;

/// A request the walk expects to make, and which collection (`_for_each` value index) it
/// belongs to.
struct Expected {
    owner: usize,
    args: Map<String, Value>,
    next_url: Option<String>,
}

/// A request started ahead and not yet taken by the walk.
struct Started {
    id: u64,
    owner: usize,
    /// A later page of the collection being walked, not a later value's first request.
    page: bool,
    args: Map<String, Value>,
    next_url: Option<String>,
    answer: Option<Answer>,
}

impl Started {
    fn is(&self, req: &UpstreamRequest) -> bool {
        self.next_url == req.next_url && self.args == req.args
    }
}

pub struct Ahead<'a, U> {
    upstream: &'a U,
    concurrency: usize,
    running: FuturesUnordered<Running<'a>>,
    started: Vec<Started>,
    /// Later pages of the collection being walked: wanted before `values`.
    pages: VecDeque<Expected>,
    /// First requests of later `_for_each` values, in walk order.
    values: VecDeque<Expected>,
    next_id: u64,
    /// Every request the collection being walked will still make is expected (one request
    /// per value, or a total announced): only then may later values start, so that a
    /// request started ahead is one the walk reaches unless the data ends early.
    known: bool,
    /// Requests started ahead that the walk passed by. They count, with the ones in
    /// flight, against the request budget before anything more starts ahead, so the
    /// requests really sent stay within it.
    wasted: u32,
    /// The most requests one later value may take (1 without `_all_pages`, else the page
    /// bound), before retries: what starting its first request ahead reserves of the budget.
    value_cost: u32,
    /// Retries one request may take after its first attempt (P3).
    retries: u32,
    /// Requests really sent (taken by the walk, in flight ahead, or wasted): never above
    /// `budget`.
    sent: u32,
    /// The call's request budget (P3).
    budget: u32,
}

/// The walk asked for a request the budget no longer holds: requests started ahead that it
/// never took used the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused;

impl<'a, U: Upstream + Sync> Ahead<'a, U> {
    /// `limits.concurrency` ≤ 1 makes every request on demand, one at a time.
    pub fn new(upstream: &'a U, limits: &Limits, value_cost: u32) -> Self {
        Self {
            upstream,
            concurrency: limits.concurrency.max(1),
            running: FuturesUnordered::new(),
            started: Vec::new(),
            pages: VecDeque::new(),
            values: VecDeque::new(),
            next_id: 0,
            known: false,
            wasted: 0,
            value_cost: value_cost.max(1),
            retries: limits.retries,
            sent: 0,
            budget: limits.requests,
        }
    }

    pub fn upstream(&self) -> &'a U {
        self.upstream
    }

    pub fn parallel(&self) -> bool {
        self.concurrency > 1
    }

    /// The walk expects to request `args` (or `next_url`) for collection `owner`; a later
    /// page of the collection being walked when `page`, else a later value's first request.
    pub fn expect(
        &mut self,
        owner: usize,
        page: bool,
        args: Map<String, Value>,
        next_url: Option<String>,
    ) {
        if !self.parallel() {
            return;
        }
        let e = Expected {
            owner,
            args,
            next_url,
        };
        if page {
            self.pages.push_back(e);
        } else {
            self.values.push_back(e);
        }
    }

    /// Whether every request the collection being walked will still make is expected.
    pub fn known(&mut self, known: bool) {
        self.known = known;
    }

    /// Collection `owner` is done: nothing more is started for it, and what was started
    /// and not taken is dropped when it comes back.
    pub fn forget(&mut self, owner: usize) {
        self.pages.retain(|e| e.owner != owner);
        self.values.retain(|e| e.owner != owner);
        self.waste(|s| s.owner == owner);
    }

    /// Collection `owner` left the positions its later pages were expected at (a page
    /// held another number of rows than the first, so the offsets moved): its guesses are
    /// dropped, and until it ends nothing more is expected of it.
    pub fn drop_pages(&mut self, owner: usize) {
        self.pages.retain(|e| e.owner != owner);
        self.waste(|s| s.owner == owner && s.page);
        self.known = false;
    }

    /// Requests started ahead that the walk will not take: dropped when they come back,
    /// and counted as sent.
    fn waste(&mut self, drop: impl Fn(&Started) -> bool) {
        let before = self.started.len();
        self.started.retain(|s| !drop(s));
        self.wasted += u32::try_from(before - self.started.len()).unwrap_or(u32::MAX);
    }

    /// The answer to `req`: the one started ahead when there is one, else `req` made now
    /// (refused when the budget is spent). While waiting, up to `concurrency` requests are
    /// in flight: the expected ones, each only if the walk reaches it within `room` (the
    /// request budget left after `req`) in the worst case.
    pub async fn call(
        &mut self,
        owner: usize,
        req: UpstreamRequest,
        room: u32,
    ) -> Result<Answer, Refused> {
        // answers that came while the walk was busy free their places first
        self.settle_ready();
        let id = match self.started.iter().position(|s| s.is(&req)) {
            Some(i) => self.started[i].id,
            None => {
                // reserved before it is sent: nothing goes out past the budget
                if self.sent >= self.budget {
                    return Err(Refused);
                }
                self.make_room().await;
                self.start(owner, true, req.clone())
            }
        };
        // what was expected up to this request: the walk has passed it
        let is_req = |e: &Expected| e.args == req.args && e.next_url == req.next_url;
        if let Some(at) = self.pages.iter().position(is_req) {
            self.pages.drain(..=at);
        }
        self.values.retain(|e| !is_req(e));
        // What is already spoken for, in the worst case: requests wasted, the retries of
        // `req`, and for each request started ahead its attempts (a page's one, a value's
        // whole walk), retries included. A request starts ahead only if the walk reaches
        // it within `room` even so; what it speaks for is then counted for the next.
        let attempts = 1 + self.retries;
        let ahead = |page: bool| {
            let n = self.started.iter().filter(|s| s.id != id && s.page == page);
            u32::try_from(n.count()).unwrap_or(u32::MAX)
        };
        let mut reserved = self.wasted.saturating_add(self.retries).saturating_add(
            (ahead(true).saturating_add(ahead(false).saturating_mul(self.value_cost)))
                .saturating_mul(attempts),
        );
        while self.running.len() < self.concurrency {
            let (page, cost) = match (self.pages.is_empty(), self.known) {
                (false, _) => (true, 1),
                (true, true) if !self.values.is_empty() => (false, self.value_cost),
                _ => break,
            };
            if reserved.saturating_add(1) > room || self.sent >= self.budget {
                break;
            }
            let queue = if page {
                &mut self.pages
            } else {
                &mut self.values
            };
            let Some(e) = queue.pop_front() else {
                break;
            };
            let req = UpstreamRequest {
                args: e.args,
                next_url: e.next_url,
                timeout: req.timeout,
                page: 0,
                attempt: 1,
            };
            self.start(e.owner, page, req);
            reserved = reserved.saturating_add(cost.saturating_mul(attempts));
        }
        loop {
            if let Some(i) = self
                .started
                .iter()
                .position(|s| s.id == id && s.answer.is_some())
            {
                let s = self.started.remove(i);
                if let Some(answer) = s.answer {
                    return Ok(answer);
                }
            }
            match self.running.next().await {
                Some((done, answer)) => self.settle(done, answer),
                // cannot happen: `id` is running until it settles
                None => return Ok(self.upstream.call(req).await),
            }
        }
    }

    fn start(&mut self, owner: usize, page: bool, req: UpstreamRequest) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.sent = self.sent.saturating_add(1);
        self.started.push(Started {
            id,
            owner,
            page,
            args: req.args.clone(),
            next_url: req.next_url.clone(),
            answer: None,
        });
        let upstream = self.upstream;
        self.running
            .push(Box::pin(async move { (id, upstream.call(req).await) }));
        id
    }

    /// Takes every answer already in, without waiting: a request whose answer came is no
    /// longer in flight.
    fn settle_ready(&mut self) {
        while let Some(Some((id, answer))) = self.running.next().now_or_never() {
            self.settle(id, answer);
        }
    }

    /// Waits until one more request may be in flight.
    async fn make_room(&mut self) {
        while self.running.len() >= self.concurrency {
            match self.running.next().await {
                Some((done, answer)) => self.settle(done, answer),
                None => return,
            }
        }
    }

    fn settle(&mut self, id: u64, answer: Answer) {
        // a forgotten request's answer is dropped here
        if let Some(s) = self.started.iter_mut().find(|s| s.id == id) {
            s.answer = Some(answer);
        }
    }
}
