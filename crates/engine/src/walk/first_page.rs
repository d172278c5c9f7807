//! P11: a page-numbered walk starts at the API's first page, established from evidence.
//! Page numbers start at 0 (Twilio, Spring Data, HAL) or at 1 (most others), and asking a
//! 0-based API for page 1 first loses its first page without a sign. So the walk's first
//! answers are judged here before their rows are merged, and the walk is told to merge a
//! page (and which page number it is), drop it (its rows are merged already, or it is not
//! a page of the walk), or keep it aside while it asks for an earlier one. A page kept
//! aside is used when the walk asks for it again: it is never requested twice.
//!
//! # Evidence, and which wins
//! 1. **What the API says about the page it sent** wins over everything else: schemas are
//!    written by hand and copied between operations, answers come from the code that
//!    pages. Read on the first answer:
//!    - a first-page link naming a page number (`Link: rel="first"`, `links.first`,
//!      `first_page_uri`, HAL `_links.first.href`): that page is the first (an earlier one
//!      is asked for, this answer kept; a later one is asked for, this answer dropped);
//!    - a previous-page link, `first: false` or `has_previous: true`: this is not the
//!      first page, and the walk goes back to the page the link names, else one page back
//!      (behind page 0 there is nothing: the base is then unknown);
//!    - a next link naming page k > sent + 1: this page is page k − 1 (page 0 answered as
//!      page 1); page 0 whose next link names page 1 is page 0;
//!    - `first: true` or `has_previous: false`: this is the first page.
//! 2. **What the schema says** ([`crate::analysis::first_page`]): a `default`, a
//!    description ("zero-based", "starts at 1"), a `minimum` of 1 or more — firm: the walk
//!    starts there — else a `minimum` of 0 alone, or nothing (1, the convention) — weak:
//!    the walk starts there and checks what its own pages show, at one request at most:
//!    - an empty first page at a weak guess is checked with a request without the page
//!      parameter (a 0-based API asked for page 1 of a one-page set answers empty): rows
//!      there are the first page, numbered with the other base; none mean the set is
//!      empty (the parameter is left out, not set to 0, so a 1-based API is never sent a
//!      page it does not have);
//!    - after page 0 at a weak guess, a page 1 with the same rows says page 0 was page 1
//!      under another number (a 1-based API): it is dropped, not taken for a loop;
//!    - page 0 refused (400, 404, 422) at a weak guess is answered by asking for page 1.
//! 3. **A request without the page parameter**, when firm statements in the schema
//!    disagree (`default: 1` and "zero-based"): its answer is the API's first page
//!    whatever its number. An echoed page number (`page`, `number`, `page.number`,
//!    `current_page`), the page its next link names or its first link settle the base at
//!    no extra cost; an echo is checked on the next page, and a next page that does not
//!    echo the number sent leaves the base unknown. Else its rows are compared with page
//!    1's — by rows, not by token: the same rows mean base 1 (page 1 is dropped); other
//!    rows mean page 0 is asked for (page 1 kept), and page 0 repeating the first rows
//!    means base 0. Anything else leaves the base unknown. One request more than a walk
//!    that knew its base, never more.
//!
//! A walk whose base stays unknown — or that a bound stopped before its checks were done —
//! says so in its verdict ([`crate::outcome::verdict::Ending::FirstPageUnknown`], or a
//! sentence of the note after a bound) and in its resume point, and is never called
//! complete.
//!
//! 4. **A schema that says nothing** (a weak guess of 1): the first request leaves the
//!    page parameter out too. An echo, a next link or a first link settle the base at no
//!    cost; a short or empty answer is the whole set; else page 1 is asked for and its rows
//!    compared: the same rows mean base 1 (page 1 dropped, the walk goes on at 2), others
//!    mean base 0 (page 1 is the second page). A 1-based API pays one request, a 0-based
//!    one nothing.

use crate::analysis::first_page::{SchemaBase, Strength};
use crate::analysis::signals::{page_echo, url_number, Signals};
use crate::analysis::Param;
use crate::outcome::StopReason;
use crate::resume::Position;
use crate::walk::request::Failed;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not this walk's question: it starts at the agent's page, resumes, or does not number
    /// its pages.
    Off,
    /// The first answer is awaited, after a firm statement (or the API's own word).
    Firm,
    /// The first answer is awaited, after a weak guess.
    Weak,
    /// The request without the page parameter was sent.
    Probe,
    /// The request without the page parameter was sent because the schema says nothing
    /// of the first page (a weak guess of 1).
    SilentProbe,
    /// The first page came without the parameter and named nothing; page 1 is asked for:
    /// the same rows say base 1, others base 0.
    SilentCompare,
    /// The first page came without the parameter and named its number: the next page
    /// must echo the number sent.
    EchoCheck,
    /// The first page came without the parameter; page 1 is asked for to compare.
    Comparing,
    /// Page 1 differed; page 0 is asked for to compare.
    Confirming,
    /// Page `first` at a weak guess was empty; the API's own first page (no parameter)
    /// is asked for.
    EmptyOther {
        first: i64,
    },
    /// Page 0 at a weak guess was merged; page 1 shows whether it was page 1 in disguise.
    WatchAlias,
    Settled,
    Unknown,
}

/// What the walk does with an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Merge it; `Some(n)` when it is page n (the walk goes on from n + 1).
    Take(Option<i64>),
    /// Drop it (its rows are merged already, or it is not a page of the walk) and ask for
    /// page n.
    Skip(i64),
    /// Keep it for when its page is asked for again, and ask for page n first.
    Hold(i64),
    /// Keep it, and ask for the API's own first page first: the request without the page
    /// parameter.
    HoldBare,
}

/// One answer, as the judge sees it.
pub(crate) struct Answer<'a> {
    /// The page number sent; `None` when the parameter was left out.
    pub sent: Option<i64>,
    pub rows: usize,
    /// The rows' fingerprint (a repeated page is recognised by its rows).
    pub fingerprint: u64,
    pub sig: &'a Signals,
    pub frame: &'a Value,
}

/// One collection's search for its first page.
pub(crate) struct FirstPage {
    state: State,
    /// Where the schema points (asked for when the request without the parameter is
    /// refused).
    schema: i64,
    /// The fingerprint of the first page merged.
    first_rows: Option<u64>,
    /// The rows of the first page merged (a walk cut while comparing it resumes after
    /// them).
    first_n: usize,
    /// P14: the page number of the API's first page, as the answers showed it.
    base: Option<i64>,
    /// P14: the walk started without a firm word of the schema, so what it establishes
    /// is worth keeping for later walks.
    learnable: bool,
}

impl FirstPage {
    /// `ours`: a page-number walk from the start, with no page of the agent's.
    pub fn new(base: SchemaBase, ours: bool) -> Self {
        let state = match (ours, base.strength) {
            (false, _) => State::Off,
            (true, Strength::Firm) => State::Firm,
            // P11: a schema that says nothing: the API's own first page is asked for
            (true, Strength::Weak) if base.page == 1 => State::SilentProbe,
            (true, Strength::Weak) => State::Weak,
            (true, Strength::Conflict) => State::Probe,
        };
        Self {
            state,
            schema: base.page,
            first_rows: None,
            first_n: 0,
            base: None,
            learnable: base.strength != Strength::Firm,
        }
    }

    /// P14: a walk from the start (`ours`) of a tool whose earlier walks established that
    /// its pages start at `page`: no request without the page parameter, only the checks
    /// a weak guess gets from the walk's own pages (an empty first page, page 0 that turns
    /// out to be page 1), so a response that contradicts it is seen.
    pub fn learned(page: i64, ours: bool) -> Self {
        Self {
            state: if ours { State::Weak } else { State::Off },
            schema: page,
            first_rows: None,
            first_n: 0,
            base: None,
            learnable: true,
        }
    }

    /// P14: the first page number this walk established (its first page had rows, and
    /// the checks were done), when the schema's word was not firm.
    pub fn established(&self) -> Option<i64> {
        (self.learnable && self.state == State::Settled && self.first_n > 0)
            .then_some(self.base)
            .flatten()
    }

    /// P14: the walk's answers left the first page unknown: what was learned of it goes.
    pub fn contradicted(&self) -> bool {
        self.state == State::Unknown
    }

    /// A walk that is not this one's question.
    pub fn off() -> Self {
        Self {
            state: State::Off,
            schema: 1,
            first_rows: None,
            first_n: 0,
            base: None,
            learnable: false,
        }
    }

    /// The first request leaves the page parameter out.
    pub fn probes(&self) -> bool {
        matches!(self.state, State::Probe | State::SilentProbe)
    }

    /// Judges an answer of the walk to page `param` (`Take` for every answer once the
    /// base is settled).
    pub fn judge(&mut self, a: &Answer<'_>, param: &Param) -> Step {
        let step = self.decide(a, param);
        if let (Step::Take(at), None) = (step, self.first_rows) {
            self.first_rows = Some(a.fingerprint);
            self.first_n = a.rows;
            self.base = at.or(a.sent);
        }
        // page 1 served the rows taken as another page first: the pages start at 1
        if step == Step::Skip(2) {
            self.base = Some(1);
        }
        step
    }

    fn decide(&mut self, a: &Answer<'_>, param: &Param) -> Step {
        // P12: links carry the API's own name of the parameter
        let named = |url: &Option<String>| {
            url.as_deref()
                .and_then(|u| url_number(u, param.wire()).or_else(|| url_number(u, &param.name)))
                .filter(|n| *n >= 0)
        };
        let same_rows = a.rows > 0 && self.first_rows == Some(a.fingerprint);
        match self.state {
            State::Off | State::Settled | State::Unknown => Step::Take(None),
            State::Firm | State::Weak => {
                let p0 = a.sent.unwrap_or(0);
                if let Some(f) = named(&a.sig.first_url) {
                    self.state = State::Settled;
                    return match f.cmp(&p0) {
                        std::cmp::Ordering::Less => Step::Hold(f),
                        std::cmp::Ordering::Equal => Step::Take(None),
                        // asked below the API's first page: whatever came is not it
                        std::cmp::Ordering::Greater => Step::Skip(f),
                    };
                }
                if a.sig.prev_url.is_some() || a.sig.is_first == Some(false) {
                    let back = named(&a.sig.prev_url)
                        .filter(|q| *q < p0)
                        .or((p0 > 0).then(|| p0 - 1));
                    return match back {
                        Some(to) => {
                            // the page asked for next is judged on the API's word
                            self.state = State::Firm;
                            Step::Hold(to)
                        }
                        None => {
                            self.state = State::Unknown;
                            Step::Take(None)
                        }
                    };
                }
                match named(&a.sig.next_url) {
                    // asked for p0, the API served the page before k
                    Some(k) if k > p0 + 1 => {
                        self.state = State::Settled;
                        return Step::Take(Some(k - 1));
                    }
                    // page 0 whose next page is 1: not page 1 in disguise
                    Some(1) if p0 == 0 => {
                        self.state = State::Settled;
                        return Step::Take(None);
                    }
                    _ => {}
                }
                // the first page, but maybe page 1 under the number 0: checked at page 1
                if a.sig.is_first == Some(true) && !(self.state == State::Weak && p0 == 0) {
                    self.state = State::Settled;
                    return Step::Take(None);
                }
                match self.state {
                    State::Weak if a.rows == 0 => {
                        self.state = State::EmptyOther { first: p0 };
                        Step::HoldBare
                    }
                    State::Weak if p0 == 0 => {
                        self.state = State::WatchAlias;
                        Step::Take(None)
                    }
                    _ => {
                        self.state = State::Settled;
                        Step::Take(None)
                    }
                }
            }
            State::SilentProbe => {
                let echo =
                    page_echo(a.frame, param.wire()).or_else(|| page_echo(a.frame, &param.name));
                if let Some(e) = echo.filter(|e| *e >= 0) {
                    self.state = State::EchoCheck;
                    return Step::Take(Some(e));
                }
                if let Some(k) = named(&a.sig.next_url).filter(|k| *k >= 1) {
                    self.state = State::Settled;
                    return Step::Take(Some(k - 1));
                }
                if let Some(f) = named(&a.sig.first_url) {
                    self.state = State::Settled;
                    return Step::Take(Some(f));
                }
                if a.rows == 0 {
                    // the API's first page is empty: so is the set, whatever the base
                    self.state = State::Settled;
                    return Step::Take(Some(1));
                }
                // taken as page 0 until page 1 is compared with it
                self.state = State::SilentCompare;
                Step::Take(Some(0))
            }
            State::SilentCompare if same_rows => {
                // page 1 is the page the API serves first: base 1
                self.state = State::Settled;
                Step::Skip(2)
            }
            State::SilentCompare => {
                // page 1 is another page: the first one was page 0
                self.state = State::Settled;
                Step::Take(None)
            }
            State::Probe => {
                if let Some(e) = page_echo(a.frame, &param.name).filter(|e| *e >= 0) {
                    self.state = State::EchoCheck;
                    return Step::Take(Some(e));
                }
                if let Some(k) = named(&a.sig.next_url).filter(|k| *k >= 1) {
                    self.state = State::Settled;
                    return Step::Take(Some(k - 1));
                }
                if let Some(f) = named(&a.sig.first_url) {
                    self.state = State::Settled;
                    return Step::Take(Some(f));
                }
                // taken as page 0 until page 1 is compared with it
                self.state = State::Comparing;
                Step::Take(Some(0))
            }
            State::EchoCheck => {
                let echo = page_echo(a.frame, &param.name);
                self.state = if echo.is_some() && echo != a.sent {
                    State::Unknown
                } else {
                    State::Settled
                };
                Step::Take(None)
            }
            State::Comparing if same_rows => {
                self.state = State::Settled;
                Step::Skip(2)
            }
            State::Comparing => {
                self.state = State::Confirming;
                Step::Hold(0)
            }
            State::Confirming => {
                self.state = if same_rows {
                    State::Settled
                } else {
                    State::Unknown
                };
                Step::Skip(1)
            }
            State::EmptyOther { first } => {
                // The API's own first page, while page `first` was empty: rows here say
                // the base is the other one (under the same base the two would be the
                // same page); none say the set is empty, whatever the base.
                self.state = State::Settled;
                Step::Take(Some(if first == 0 { 1 } else { 0 }))
            }
            State::WatchAlias if same_rows => {
                self.state = State::Settled;
                Step::Skip(2)
            }
            State::WatchAlias => {
                self.state = State::Settled;
                Step::Take(None)
            }
        }
    }

    /// A request of the walk failed for good: `Some(n)` when that is evidence instead (a
    /// page refused by a client error is not a page), and page n is asked for next.
    pub fn refused(&mut self, f: &Failed, sent: Option<i64>) -> Option<i64> {
        let client_error =
            f.stop == StopReason::UpstreamError && matches!(f.status, Some(400 | 404 | 422));
        if !client_error {
            return None;
        }
        match self.state {
            State::Weak if sent == Some(0) => {
                self.state = State::Firm;
                Some(1)
            }
            State::Probe | State::SilentProbe => {
                self.state = State::Firm;
                Some(self.schema)
            }
            // the other base is no page: the empty first page (kept) was the set
            State::EmptyOther { first } => {
                self.state = State::Settled;
                Some(first)
            }
            State::Confirming => {
                self.state = State::Unknown;
                Some(1)
            }
            _ => None,
        }
    }

    /// Whether the checks are still under way (requests started ahead wait for them).
    pub fn settling(&self) -> bool {
        matches!(
            self.state,
            State::Firm
                | State::Weak
                | State::Probe
                | State::SilentProbe
                | State::SilentCompare
                | State::Comparing
                | State::Confirming
                | State::EmptyOther { .. }
        )
    }

    /// The walk could not establish its first page: it ended with the base unknown, or
    /// `stop` (anything but the end of the rows) left the checks unfinished.
    pub fn unknown(&self, stop: StopReason) -> bool {
        // cut while comparing page 1 with the API's own first page: the rows held are that
        // first page, and a resumed walk compares again
        let held_first = self.state == State::SilentCompare;
        self.state == State::Unknown
            || (stop != StopReason::End
                && !held_first
                && (self.settling() || self.state == State::WatchAlias))
    }

    /// Where a walk stopped by a bound during the checks goes on: after the first page
    /// merged, when page 1 was kept while page 0 was asked for to confirm it; from the
    /// start, when only an empty first page came (a resumed walk checks it again).
    pub fn resume_from(&self) -> Option<Position> {
        match self.state {
            State::Confirming => Some(Position::Page(1)),
            State::EmptyOther { .. } | State::SilentCompare => Some(Position::Start),
            _ => None,
        }
    }

    /// The rows of the first page a walk resumed from the start skips: a walk cut while
    /// comparing page 1 with the API's own first page asks for that page again (and
    /// compares again), skipping the rows it kept (`kept`, when a bound cut the page
    /// itself).
    pub fn resume_skip(&self, kept: usize) -> usize {
        match self.state {
            State::SilentCompare if kept == 0 => self.first_n,
            _ => kept,
        }
    }

    /// A walk resumed after `stop` could merge a page twice or miss the first: the base was
    /// unknown, or the checks of the pages merged were cut (not the check of an empty
    /// first page: the resumed walk starts again, and checks it again).
    pub fn unsure_resumed(&self, stop: StopReason) -> bool {
        self.unknown(stop) && !matches!(self.state, State::EmptyOther { .. } | State::SilentCompare)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use serde_json::json;

    fn param() -> Param {
        let a = analyze(
            &json!({"properties": {"size": {"type": "integer"}, "page": {"type": "integer"}}}),
        );
        a.page_number.unwrap_or_else(|| panic!("no page"))
    }

    fn answer<'a>(
        sent: Option<i64>,
        rows: usize,
        fp: u64,
        sig: &'a Signals,
        frame: &'a Value,
    ) -> Answer<'a> {
        Answer {
            sent,
            rows,
            fingerprint: fp,
            sig,
            frame,
        }
    }

    fn base(page: i64, strength: Strength) -> SchemaBase {
        SchemaBase { page, strength }
    }

    #[test]
    fn p11_a_previous_link_on_page_1_goes_back_to_page_0_keeping_page_1() {
        let p = param();
        let mut f = FirstPage::new(base(1, Strength::Firm), true);
        let sig = Signals {
            prev_url: Some("/x?page=0".into()),
            ..Signals::default()
        };
        let frame = json!({});
        assert_eq!(
            f.judge(&answer(Some(1), 10, 7, &sig, &frame), &p),
            Step::Hold(0)
        );
        let none = Signals::default();
        assert_eq!(
            f.judge(&answer(Some(0), 10, 8, &none, &frame), &p),
            Step::Take(None)
        );
        assert!(!f.unknown(StopReason::End));
    }

    #[test]
    fn p11_without_the_parameter_an_echo_or_the_rows_decide() {
        let p = param();
        let none = Signals::default();
        // echo
        let mut f = FirstPage::new(base(1, Strength::Conflict), true);
        assert!(f.probes());
        let echo0 = json!({"page": 0});
        assert_eq!(
            f.judge(&answer(None, 10, 1, &none, &echo0), &p),
            Step::Take(Some(0))
        );
        let echo1 = json!({"page": 1});
        assert_eq!(
            f.judge(&answer(Some(1), 10, 2, &none, &echo1), &p),
            Step::Take(None)
        );
        assert!(!f.unknown(StopReason::End));
        // rows: page 1 repeats them → base 1
        let mut f = FirstPage::new(base(1, Strength::Conflict), true);
        let frame = json!({});
        assert_eq!(
            f.judge(&answer(None, 10, 1, &none, &frame), &p),
            Step::Take(Some(0))
        );
        assert_eq!(
            f.judge(&answer(Some(1), 10, 1, &none, &frame), &p),
            Step::Skip(2)
        );
        assert!(!f.unknown(StopReason::End));
        // rows: page 1 differs, page 0 repeats them → base 0
        let mut f = FirstPage::new(base(1, Strength::Conflict), true);
        f.judge(&answer(None, 10, 1, &none, &frame), &p);
        assert_eq!(
            f.judge(&answer(Some(1), 10, 2, &none, &frame), &p),
            Step::Hold(0)
        );
        assert_eq!(
            f.judge(&answer(Some(0), 10, 1, &none, &frame), &p),
            Step::Skip(1)
        );
        assert!(!f.unknown(StopReason::End));
        // page 0 is something else again: unknown
        let mut f = FirstPage::new(base(1, Strength::Conflict), true);
        f.judge(&answer(None, 10, 1, &none, &frame), &p);
        f.judge(&answer(Some(1), 10, 2, &none, &frame), &p);
        assert_eq!(
            f.judge(&answer(Some(0), 10, 3, &none, &frame), &p),
            Step::Skip(1)
        );
        assert!(f.unknown(StopReason::End));
    }

    #[test]
    fn p11_a_silent_schema_probes_and_compares_page_1_by_its_rows() {
        let p = param();
        let none = Signals::default();
        let frame = json!({});
        let mut f = FirstPage::new(base(1, Strength::Weak), true);
        assert!(f.probes(), "the first request leaves the page out");
        assert_eq!(
            f.judge(&answer(None, 10, 1, &none, &frame), &p),
            Step::Take(Some(0))
        );
        assert!(
            !f.unknown(StopReason::Pages),
            "the rows held are the first page"
        );
        assert_eq!(f.resume_from(), Some(Position::Start));
        assert_eq!(f.resume_skip(0), 10, "a resumed walk skips the rows held");
        assert_eq!(
            f.judge(&answer(Some(1), 10, 1, &none, &frame), &p),
            Step::Skip(2),
            "page 1 repeats the rows: base 1"
        );
        let mut f = FirstPage::new(base(1, Strength::Weak), true);
        f.judge(&answer(None, 10, 1, &none, &frame), &p);
        assert_eq!(
            f.judge(&answer(Some(1), 10, 2, &none, &frame), &p),
            Step::Take(None),
            "page 1 is another page: base 0"
        );
        assert!(!f.settling() && !f.unknown(StopReason::End));
        // an empty first answer is an empty set
        let mut f = FirstPage::new(base(1, Strength::Weak), true);
        assert_eq!(
            f.judge(&answer(None, 0, 0, &none, &frame), &p),
            Step::Take(Some(1))
        );
        assert!(!f.settling());
    }

    #[test]
    fn p11_checks_cut_by_a_bound_leave_the_base_unknown() {
        let p = param();
        let none = Signals::default();
        let frame = json!({});
        let mut f = FirstPage::new(base(0, Strength::Weak), true);
        assert_eq!(
            f.judge(&answer(Some(0), 10, 1, &none, &frame), &p),
            Step::Take(None)
        );
        assert!(f.unknown(StopReason::Requests) && !f.unknown(StopReason::End));
        assert_eq!(
            f.judge(&answer(Some(1), 10, 1, &none, &frame), &p),
            Step::Skip(2),
            "page 0 was page 1"
        );
        assert!(!f.unknown(StopReason::Requests));
    }
}
