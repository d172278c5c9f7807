//! Q1: aggregates over a stored result's rows — `count`, `sum`, `avg`, `min`, `max`,
//! optionally per `group_by` value — computed over the whole stored set (after the
//! caller's filter), never over a page of it. Paths are dot-paths as in `_fields`; a path
//! through an array reaches every element (as in `_filter`), so `lines.amount` sums every
//! line of every row.
//!
//! Values: numbers, and strings that spell a finite number (APIs quote money), count for
//! `sum`/`avg`/`min`/`max`; `null` and a missing path count for nothing. When a path holds
//! no number at all but strings, `min`/`max` compare the strings (ISO dates order that
//! way). Anything else is left out and counted in the note, never silently.
//!
//! Whether the answer is sound (the stored walk was complete) is the caller's to say:
//! this module only counts.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::document::item::Item;
use crate::document::path::Path;
use crate::document::raw_scan;
use crate::error::EngineError;
use crate::limits::{too_many, Limits};

/// The parsed `aggregate` argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub count: bool,
    pub sum: Vec<Path>,
    pub avg: Vec<Path>,
    pub min: Vec<Path>,
    pub max: Vec<Path>,
    pub group_by: Option<Path>,
}

const OPS: [&str; 4] = ["sum", "avg", "min", "max"];

impl Spec {
    pub fn parse(v: &Value, limits: &Limits) -> Result<Self, EngineError> {
        let at = "queryToolResult.aggregate";
        let Value::Object(m) = v else {
            return Err(EngineError::invalid(format!(
                "`{at}` must be an object such as {{\"count\": true, \"sum\": [\"amount\"], \"group_by\": \"status\"}}."
            )));
        };
        if let Some(k) = m
            .keys()
            .find(|k| !OPS.contains(&k.as_str()) && *k != "count" && *k != "group_by")
        {
            return Err(EngineError::invalid(format!(
                "`{at}.{k}` is not an aggregate; use count, sum, avg, min, max and group_by."
            )));
        }
        let count = match m.get("count") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(EngineError::invalid(format!(
                    "`{at}.count` must be true or false."
                )))
            }
        };
        let mut lists: Vec<Vec<Path>> = Vec::with_capacity(OPS.len());
        let mut n = 0;
        for op in OPS {
            let paths = match m.get(op) {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::String(s)) => vec![path(s, &format!("{at}.{op}"), limits)?],
                Some(Value::Array(a)) => {
                    if a.len() > limits.aggregate_paths {
                        return Err(too_many(
                            &format!("`{at}.{op}`"),
                            a.len(),
                            limits.aggregate_paths,
                            "paths",
                        ));
                    }
                    a.iter()
                        .map(|p| match p {
                            Value::String(s) => path(s, &format!("{at}.{op}"), limits),
                            _ => Err(EngineError::invalid(format!(
                                "`{at}.{op}` must be a list of dot-paths such as [\"amount\", \"lines.price\"]."
                            ))),
                        })
                        .collect::<Result<_, _>>()?
                }
                Some(_) => {
                    return Err(EngineError::invalid(format!(
                        "`{at}.{op}` must be a list of dot-paths such as [\"amount\", \"lines.price\"]."
                    )))
                }
            };
            n += paths.len();
            lists.push(paths);
        }
        if n > limits.aggregate_paths {
            return Err(too_many(
                &format!("`{at}`"),
                n,
                limits.aggregate_paths,
                "paths",
            ));
        }
        let group_by = match m.get("group_by") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(path(s, &format!("{at}.group_by"), limits)?),
            Some(_) => {
                return Err(EngineError::invalid(format!(
                    "`{at}.group_by` must be one dot-path such as \"status\"."
                )))
            }
        };
        let mut lists = lists.into_iter();
        let mut next = || lists.next().unwrap_or_default();
        let spec = Spec {
            count,
            sum: next(),
            avg: next(),
            min: next(),
            max: next(),
            group_by,
        };
        if !spec.count && n == 0 && spec.group_by.is_none() {
            return Err(EngineError::invalid(format!(
                "`{at}` asks for nothing: give count, sum, avg, min, max or group_by."
            )));
        }
        Ok(spec)
    }

    /// Every path a numeric aggregate reads, once each.
    fn paths(&self) -> Vec<&Path> {
        let mut out: Vec<&Path> = Vec::new();
        for p in self
            .sum
            .iter()
            .chain(&self.avg)
            .chain(&self.min)
            .chain(&self.max)
        {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }
}

fn path(s: &str, at: &str, limits: &Limits) -> Result<Path, EngineError> {
    Path::parse_bounded(s.trim(), &format!("a path of `{at}`"), limits)?.ok_or_else(|| {
        EngineError::invalid(format!(
            "`{at}`: \"{s}\" is not a dot-path (write segments separated by dots, e.g. \"customer.country\")."
        ))
    })
}

/// What one path accumulated over a set of rows.
#[derive(Debug, Clone, Default)]
struct Acc {
    numbers: u64,
    sum: f64,
    /// Neumaier compensation, so long sums of decimals stay exact to the cent.
    carry: f64,
    min: Option<f64>,
    max: Option<f64>,
    min_text: Option<String>,
    max_text: Option<String>,
    texts: u64,
    /// Booleans, objects: values no aggregate can use.
    other: u64,
}

impl Acc {
    fn add(&mut self, leaf: &str) {
        match number(leaf) {
            Some(x) => {
                self.numbers += 1;
                let t = self.sum + x;
                self.carry += if self.sum.abs() >= x.abs() {
                    (self.sum - t) + x
                } else {
                    (x - t) + self.sum
                };
                self.sum = t;
                self.min = Some(self.min.map_or(x, |m| m.min(x)));
                self.max = Some(self.max.map_or(x, |m| m.max(x)));
            }
            None if leaf == "null" => {}
            None if leaf.starts_with('"') => {
                self.texts += 1;
                let s = match crate::document::raw_scan::value_of(leaf) {
                    Value::String(s) => s,
                    _ => return,
                };
                if self.min_text.as_ref().is_none_or(|m| s < *m) {
                    self.min_text = Some(s.clone());
                }
                if self.max_text.as_ref().is_none_or(|m| s > *m) {
                    self.max_text = Some(s);
                }
            }
            None => self.other += 1,
        }
    }

    fn total(&self) -> f64 {
        self.sum + self.carry
    }

    /// Values left out of `sum`/`avg` (and of `min`/`max` when numbers were found).
    fn ignored(&self) -> u64 {
        self.other + self.texts
    }

    fn extreme(&self, max: bool) -> Value {
        let (n, t) = if max {
            (self.max, &self.max_text)
        } else {
            (self.min, &self.min_text)
        };
        match (n, t) {
            (Some(x), _) => num_value(x),
            (None, Some(s)) => Value::String(s.clone()),
            (None, None) => Value::Null,
        }
    }
}

/// A finite number spelled by a raw leaf: a JSON number or a numeric string.
fn number(leaf: &str) -> Option<f64> {
    let s = match leaf.as_bytes().first()? {
        b'-' | b'0'..=b'9' => leaf,
        b'"' => leaf.strip_prefix('"')?.strip_suffix('"')?.trim(),
        _ => return None,
    };
    // Rust also reads "inf" and "NaN"; those are words, not amounts.
    if !s.bytes().any(|b| b.is_ascii_digit())
        || s.bytes()
            .any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E')
    {
        return None;
    }
    s.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A number as JSON: integral values as integers, others rounded to 10 decimals (float
/// noise such as 0.30000000000000004 is not information).
fn num_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        return json!(x as i64);
    }
    let r = if x.abs() < 1.0e8 {
        (x * 1.0e10).round() / 1.0e10
    } else {
        x
    };
    serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
}

/// Every leaf a path reaches in one row, arrays flattened (bounded depth).
fn leaves<'a>(row: &'a str, path: &Path, out: &mut Vec<&'a str>) {
    let mut reached = Vec::new();
    raw_scan::resolve(row, path.segments(), &mut reached);
    for v in reached {
        flatten(v, out, 0);
    }
}

fn flatten<'a>(v: &'a str, out: &mut Vec<&'a str>, depth: usize) {
    if raw_scan::is_array(v) {
        if depth < raw_scan::MAX_DEPTH {
            raw_scan::elements(v).for_each(|e| flatten(e, out, depth + 1));
        }
    } else {
        out.push(v);
    }
}

/// One set of rows (all of them, or one group).
#[derive(Debug, Clone)]
struct Bucket {
    rows: u64,
    accs: Vec<Acc>,
}

impl Bucket {
    fn new(n: usize) -> Self {
        Self {
            rows: 0,
            accs: vec![Acc::default(); n],
        }
    }

    fn add(&mut self, per_path: &[Vec<&str>]) {
        self.rows += 1;
        for (acc, vals) in self.accs.iter_mut().zip(per_path) {
            vals.iter().for_each(|v| acc.add(v));
        }
    }

    /// `{count?, sum?, avg?, min?, max?}` as the spec asked.
    fn report(&self, spec: &Spec, paths: &[&Path], count: bool) -> Value {
        let acc = |p: &Path| {
            paths
                .iter()
                .position(|q| *q == p)
                .and_then(|i| self.accs.get(i))
        };
        let mut m = Map::new();
        if count {
            m.insert("count".into(), json!(self.rows));
        }
        let mut put = |op: &str, list: &[Path], f: &dyn Fn(&Acc) -> Value| {
            if list.is_empty() {
                return;
            }
            let vals: Map<String, Value> = list
                .iter()
                .map(|p| (p.to_string(), acc(p).map_or(Value::Null, f)))
                .collect();
            m.insert(op.into(), Value::Object(vals));
        };
        put("sum", &spec.sum, &|a| num_value(a.total()));
        put("avg", &spec.avg, &|a| {
            if a.numbers == 0 {
                Value::Null
            } else {
                num_value(a.total() / a.numbers as f64)
            }
        });
        put("min", &spec.min, &|a| a.extreme(false));
        put("max", &spec.max, &|a| a.extreme(true));
        Value::Object(m)
    }
}

/// The computed aggregates, before the caller adds `sound` and its part of the note.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregated {
    pub aggregates: Value,
    /// Largest groups first (then by key), at most `limits.aggregate_groups`.
    pub groups: Option<Vec<Value>>,
    /// Distinct groups found (shown or not).
    pub group_count: usize,
    pub rows: usize,
    /// What was left out or merged, in sentences.
    pub remarks: Vec<String>,
}

/// Aggregates `rows` (already filtered) as `spec` asks.
pub fn aggregate(rows: &[&Item], spec: &Spec, limits: &Limits) -> Aggregated {
    let paths = spec.paths();
    let mut all = Bucket::new(paths.len());
    let mut groups: Vec<(Value, Bucket)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let (mut keyless, mut multi) = (0u64, 0u64);
    for row in rows {
        let raw = row.raw();
        let per_path: Vec<Vec<&str>> = paths
            .iter()
            .map(|p| {
                let mut v = Vec::new();
                leaves(raw, p, &mut v);
                v
            })
            .collect();
        all.add(&per_path);
        let Some(g) = &spec.group_by else { continue };
        let mut keys: Vec<&str> = Vec::new();
        leaves(raw, g, &mut keys);
        keys.retain(|k| *k != "null");
        let mut seen: Vec<String> = Vec::new();
        for k in &keys {
            let canon = crate::document::raw_scan::value_of(k).to_string();
            if !seen.contains(&canon) {
                seen.push(canon);
            }
        }
        if seen.is_empty() {
            keyless += 1;
            seen.push("null".into());
        }
        if seen.len() > 1 {
            multi += 1;
        }
        for canon in seen {
            let i = *index.entry(canon.clone()).or_insert_with(|| {
                let key = serde_json::from_str(&canon).unwrap_or(Value::Null);
                groups.push((key, Bucket::new(paths.len())));
                groups.len() - 1
            });
            if let Some((_, b)) = groups.get_mut(i) {
                b.add(&per_path);
            }
        }
    }
    let mut remarks = Vec::new();
    for (p, a) in paths.iter().zip(&all.accs) {
        if a.numbers > 0 && a.ignored() > 0 {
            remarks.push(format!(
                "{} value(s) of `{p}` were not numbers and were left out.",
                a.ignored()
            ));
        } else if a.numbers == 0 && a.texts > 0 {
            remarks.push(format!(
                "`{p}` holds no numbers: its sum is 0 and its avg null; min/max compare its values as text."
            ));
        } else if a.numbers == 0 && !rows.is_empty() {
            remarks.push(format!("`{p}` holds no numbers in these rows."));
        }
    }
    let group_count = groups.len();
    let grouped = spec.group_by.as_ref().map(|g| {
        if keyless > 0 {
            remarks.push(format!(
                "{keyless} row(s) have no `{g}` value; they are grouped under key null."
            ));
        }
        if multi > 0 {
            remarks.push(format!(
                "{multi} row(s) hold several `{g}` values and count once in each of their groups."
            ));
        }
        groups.sort_by(|(ka, a), (kb, b)| {
            b.rows
                .cmp(&a.rows)
                .then_with(|| ka.to_string().cmp(&kb.to_string()))
        });
        if group_count > limits.aggregate_groups {
            remarks.push(format!(
                "Showing the {} largest of {group_count} groups.",
                limits.aggregate_groups
            ));
        }
        groups
            .iter()
            .take(limits.aggregate_groups)
            .map(|(k, b)| {
                let mut v = b.report(spec, &paths, true);
                if let Value::Object(m) = &mut v {
                    m.insert("key".into(), k.clone());
                }
                v
            })
            .collect()
    });
    Aggregated {
        aggregates: all.report(spec, &paths, spec.count),
        groups: grouped,
        group_count,
        rows: rows.len(),
        remarks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(rows: &[Value]) -> Vec<Item> {
        rows.iter().map(Item::from_value).collect()
    }

    fn run(rows: &[Value], spec: Value) -> Aggregated {
        let limits = Limits::default();
        let spec = Spec::parse(&spec, &limits).unwrap_or_else(|e| panic!("{e}"));
        let items = items(rows);
        let refs: Vec<&Item> = items.iter().collect();
        aggregate(&refs, &spec, &limits)
    }

    #[test]
    fn q1_sums_over_numbers_numeric_strings_and_array_paths() {
        let rows = [
            json!({"amount": 10, "lines": [{"p": 1.1}, {"p": 2.2}]}),
            json!({"amount": "5.50", "lines": []}),
            json!({"amount": 0.1, "lines": [{"p": "x"}]}),
            json!({"amount": 0.2}),
        ];
        let a = run(
            &rows,
            json!({"count": true, "sum": ["amount", "lines.p"], "avg": ["amount"], "min": ["amount"], "max": ["lines.p"]}),
        );
        assert_eq!(
            a.aggregates,
            json!({"count": 4, "sum": {"amount": 15.8, "lines.p": 3.3}, "avg": {"amount": 3.95},
                   "min": {"amount": 0.1}, "max": {"lines.p": 2.2}})
        );
        assert!(
            a.remarks
                .iter()
                .any(|r| r.contains("1 value(s) of `lines.p`")),
            "{:?}",
            a.remarks
        );
    }

    #[test]
    fn q1_non_numeric_values_are_counted_out_loud() {
        let rows = [
            json!({"v": true, "d": "2024-03-01"}),
            json!({"v": {"x": 1}, "d": "2023-12-31"}),
            json!({"v": null}),
            json!({"v": "inf"}),
        ];
        let a = run(
            &rows,
            json!({"sum": ["v", "d"], "avg": ["v"], "min": ["d"], "max": ["d", "v"]}),
        );
        assert_eq!(
            a.aggregates,
            json!({"sum": {"v": 0, "d": 0}, "avg": {"v": null},
                   "min": {"d": "2023-12-31"}, "max": {"d": "2024-03-01", "v": "inf"}})
        );
        assert!(a.remarks.iter().any(|r| r.contains("`d` holds no numbers")));
    }

    #[test]
    fn q1_empty_set() {
        let a = run(
            &[],
            json!({"count": true, "sum": ["a"], "avg": ["a"], "max": ["a"], "group_by": "s"}),
        );
        assert_eq!(
            a.aggregates,
            json!({"count": 0, "sum": {"a": 0}, "avg": {"a": null}, "max": {"a": null}})
        );
        assert_eq!((a.groups, a.group_count), (Some(vec![]), 0));
    }

    #[test]
    fn q1_group_by_with_missing_keys_and_array_keys() {
        let rows = [
            json!({"s": "open", "n": 1}),
            json!({"s": "open", "n": 2}),
            json!({"s": "closed", "n": 4}),
            json!({"n": 8}),
            json!({"s": null, "n": 16}),
            json!({"s": ["a", "open", "a"], "n": 32}),
        ];
        let a = run(&rows, json!({"count": true, "sum": ["n"], "group_by": "s"}));
        assert_eq!(a.aggregates, json!({"count": 6, "sum": {"n": 63}}));
        assert_eq!(
            a.groups,
            Some(vec![
                json!({"key": "open", "count": 3, "sum": {"n": 35}}),
                json!({"key": null, "count": 2, "sum": {"n": 24}}),
                json!({"key": "a", "count": 1, "sum": {"n": 32}}),
                json!({"key": "closed", "count": 1, "sum": {"n": 4}}),
            ])
        );
        assert!(a.remarks.iter().any(|r| r.contains("2 row(s) have no `s`")));
        assert!(a.remarks.iter().any(|r| r.contains("several `s` values")));
    }

    #[test]
    fn q1_groups_are_capped_largest_first() {
        let rows: Vec<Value> = (0..300)
            .map(|i| json!({"k": i % 150, "big": i < 10}))
            .collect();
        let a = run(&rows, json!({"group_by": "k"}));
        let g = a.groups.unwrap_or_default();
        assert_eq!(
            (g.len(), a.group_count),
            (Limits::default().aggregate_groups, 150)
        );
        assert_eq!(g[0], json!({"key": 0, "count": 2}));
        assert!(a.remarks.iter().any(|r| r.contains("of 150 groups")));
    }

    #[test]
    fn q1_misuse_is_explained() {
        let l = Limits::default();
        for bad in [
            json!([]),
            json!({}),
            json!({"median": ["a"]}),
            json!({"sum": [1]}),
            json!({"sum": ["a..b"]}),
            json!({"group_by": ["a"]}),
            json!({"count": "yes"}),
            json!({"sum": (0..50).map(|i| format!("p{i}")).collect::<Vec<_>>()}),
        ] {
            assert!(Spec::parse(&bad, &l).is_err(), "{bad}");
        }
        assert!(Spec::parse(&json!({"sum": "amount"}), &l).is_ok());
    }
}
