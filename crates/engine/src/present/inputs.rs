//! Everything [`present_json`](crate::present_json) reads besides the rows and the
//! `_resultId` — the plan, the labels and the limits — written as compact bytes, so the
//! runtime can key a presentation by them (`results::cache_memory::presenting_key`, once
//! per cache hit) without printing them.
//!
//! The encoding is exact: two inputs are written alike only when they are the same in
//! every part — as discriminating as their `Debug` text, which keyed presentations before.
//! Each part is written prefix-free (fixed-width numbers, lengths before strings and lists,
//! a tag before each variant), so concatenating parts cannot make two inputs meet. Every
//! struct is taken apart field by field without `..`: a field added to one of them does
//! not compile until it is written here too. Maps keep their order, as `Debug` did;
//! numbers keep their kind (`1`, `1.0` and `-0.0` stay apart).

use serde_json::Value;

use crate::limits::Limits;
use crate::plan::projection::Projection;
use crate::plan::row_filter::{Clause, Op};
use crate::plan::{CallPlan, ForEach, ForEachError};
use crate::present::cache_label::CacheLabel;
use crate::present::Labels;
use crate::resume::{Pending, Position, Resume, ResumePoint};

/// Appends the bytes of (`plan`, `labels`, `limits`) to `out`.
pub fn presenting_inputs(plan: &CallPlan, labels: &Labels, limits: &Limits, out: &mut Vec<u8>) {
    let mut w = Writer(out);
    w.plan(plan);
    w.labels(labels);
    w.limits(limits);
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn tag(&mut self, t: u8) {
        self.0.push(t);
    }

    fn bool(&mut self, b: bool) {
        self.0.push(u8::from(b));
    }

    fn u64(&mut self, n: u64) {
        self.0.extend_from_slice(&n.to_le_bytes());
    }

    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }

    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    fn opt<T>(&mut self, v: &Option<T>, mut some: impl FnMut(&mut Self, &T)) {
        match v {
            None => self.tag(0),
            Some(v) => {
                self.tag(1);
                some(self, v);
            }
        }
    }

    fn list<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        self.len(items.len());
        for i in items {
            each(self, i);
        }
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.tag(0),
            Value::Bool(b) => {
                self.tag(1);
                self.bool(*b);
            }
            // serde_json keeps non-negative integers as u64, negative ones as i64, the
            // rest as f64 (never NaN): the kind and the bits are the number
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    self.tag(2);
                    self.u64(u);
                } else if let Some(i) = n.as_i64() {
                    self.tag(3);
                    self.u64(i as u64);
                } else {
                    self.tag(4);
                    self.u64(n.as_f64().map_or(u64::MAX, f64::to_bits));
                }
            }
            Value::String(s) => {
                self.tag(5);
                self.str(s);
            }
            Value::Array(a) => {
                self.tag(6);
                self.list(a, |w, v| w.value(v));
            }
            Value::Object(m) => {
                self.tag(7);
                self.len(m.len());
                for (k, v) in m {
                    self.str(k);
                    self.value(v);
                }
            }
        }
    }

    fn strings(&mut self, s: &[String]) {
        self.list(s, |w, s| w.str(s));
    }

    fn plan(&mut self, p: &CallPlan) {
        let CallPlan {
            upstream_args,
            fields,
            filter,
            all_pages,
            for_each,
            refresh,
            uses_reserved,
            looping,
            paginated,
            continue_token,
            resume,
        } = p;
        self.len(upstream_args.len());
        for (k, v) in upstream_args {
            self.str(k);
            self.value(v);
        }
        self.opt(fields, Self::projection);
        self.list(filter, Self::clause);
        self.bool(*all_pages);
        self.opt(for_each, Self::for_each);
        self.bool(*refresh);
        self.bool(*uses_reserved);
        self.bool(*looping);
        self.bool(*paginated);
        self.opt(continue_token, |w, t| w.str(t));
        self.opt(resume, Self::resume);
    }

    /// Its paths, in order: the projection's tree is built from them alone.
    fn projection(&mut self, p: &Projection) {
        self.list(p.paths(), |w, path| w.strings(path.segments()));
    }

    fn clause(&mut self, c: &Clause) {
        let Clause { field, op, value } = c;
        self.strings(field.segments());
        self.tag(match op {
            Op::Eq => 0,
            Op::Neq => 1,
            Op::Gt => 2,
            Op::Gte => 3,
            Op::Lt => 4,
            Op::Lte => 5,
            Op::Contains => 6,
            Op::In => 7,
            Op::Exists => 8,
        });
        self.value(value);
    }

    fn for_each(&mut self, f: &ForEach) {
        let ForEach {
            key,
            in_body,
            values,
            rejected,
            per_call,
        } = f;
        self.str(key);
        self.bool(*in_body);
        self.list(values, Self::value);
        self.list(rejected, Self::for_each_error);
        self.opt(per_call, |w, n| w.len(*n));
    }

    fn for_each_error(&mut self, e: &ForEachError) {
        let ForEachError {
            value,
            status,
            error,
        } = e;
        self.value(value);
        self.opt(status, |w, s| w.u64(u64::from(*s)));
        self.str(error);
    }

    fn resume(&mut self, r: &Resume) {
        let Resume {
            point: ResumePoint { pending },
            rows_before,
            errors_before,
        } = r;
        self.list(pending, Self::pending);
        self.len(*rows_before);
        self.list(errors_before, Self::for_each_error);
    }

    fn pending(&mut self, p: &Pending) {
        let Pending {
            value,
            at,
            skip,
            rows,
            total,
            first_page_unknown,
        } = p;
        self.len(*value);
        match at {
            Position::Start => self.tag(0),
            Position::Page(n) => {
                self.tag(1);
                self.u64(*n as u64);
            }
            Position::Offset(n) => {
                self.tag(2);
                self.u64(*n);
            }
            Position::Cursor(v) => {
                self.tag(3);
                self.value(v);
            }
            Position::Url(u) => {
                self.tag(4);
                self.str(u);
            }
        }
        self.len(*skip);
        self.len(*rows);
        self.opt(total, |w, t| w.u64(*t));
        self.bool(*first_page_unknown);
    }

    fn labels(&mut self, l: &Labels) {
        let Labels {
            continue_token,
            cache,
            degraded,
        } = l;
        self.opt(continue_token, |w, t| w.str(t));
        self.opt(cache, |w, c| match c {
            CacheLabel::Hit {
                cached_at,
                expires_at,
            } => {
                w.tag(0);
                w.str(cached_at);
                w.str(expires_at);
            }
            CacheLabel::TooLarge { max_bytes } => {
                w.tag(1);
                w.len(*max_bytes);
            }
        });
        self.opt(degraded, |w, d| w.str(d));
    }

    fn limits(&mut self, l: &Limits) {
        let Limits {
            pages_per_collection,
            requests,
            items,
            bytes,
            wall,
            token_budget,
            for_each_values,
            default_page_size,
            progress_interval,
            retries,
            concurrency,
            max_fields,
            max_path_bytes,
            max_path_segments,
            max_filter_clauses,
            max_in_values,
            max_for_each_raw,
            aggregate_paths,
            aggregate_groups,
        } = l;
        for n in [
            *pages_per_collection,
            *requests,
            *default_page_size,
            *retries,
        ] {
            self.u64(u64::from(n));
        }
        for n in [
            *items,
            *bytes,
            *token_budget,
            *for_each_values,
            *concurrency,
            *max_fields,
            *max_path_bytes,
            *max_path_segments,
            *max_filter_clauses,
            *max_in_values,
            *max_for_each_raw,
            *aggregate_paths,
            *aggregate_groups,
        ] {
            self.len(n);
        }
        for d in [wall, progress_interval] {
            self.u64(d.as_secs());
            self.u64(u64::from(d.subsec_nanos()));
        }
    }
}
