//! `presenting_inputs` is exact: two inputs are written alike exactly when their `Debug`
//! texts (what keyed presentations before) are alike.

use std::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use crate::document::path::Path;
use crate::plan::row_filter::{Clause, Op};
use crate::present::inputs::presenting_inputs;
use crate::resume::{Pending, Position, Resume, ResumePoint};
use crate::{CacheLabel, CallPlan, ForEach, ForEachError, Labels, Limits, Projection};

type Inputs = (CallPlan, Labels, Limits);

fn bytes((plan, labels, limits): &Inputs) -> Vec<u8> {
    let mut out = Vec::new();
    presenting_inputs(plan, labels, limits, &mut out);
    out
}

fn debug((plan, labels, limits): &Inputs) -> String {
    format!("{plan:?}\n{labels:?}\n{limits:?}")
}

fn path(s: &str) -> Path {
    Path::parse(s).unwrap_or_else(|| panic!("{s} is a path"))
}

fn plan() -> CallPlan {
    CallPlan {
        upstream_args: Map::new(),
        fields: None,
        filter: Vec::new(),
        all_pages: true,
        for_each: None,
        refresh: false,
        uses_reserved: true,
        looping: true,
        paginated: true,
        continue_token: None,
        resume: None,
    }
}

fn fields(list: &[&str]) -> Option<Projection> {
    Projection::parse(&json!(list), "_fields", &Limits::default()).ok()
}

fn clause(value: Value) -> Clause {
    Clause {
        field: path("status"),
        op: Op::Eq,
        value,
    }
}

fn hit(expires_at: &str) -> Labels {
    Labels {
        cache: Some(CacheLabel::Hit {
            cached_at: "2026-12-01T10:00:00Z".into(),
            expires_at: expires_at.into(),
        }),
        ..Labels::default()
    }
}

#[test]
fn inputs_that_present_differently_are_written_differently() {
    let base = || {
        let mut p = plan();
        p.fields = fields(&["id", "name"]);
        p.filter = vec![clause(json!("open"))];
        (p, hit("2026-12-01T11:00:00Z"), Limits::default())
    };
    let same = base();
    assert_eq!(bytes(&base()), bytes(&same), "built twice alike");
    let mut variants: Vec<Inputs> = Vec::new();
    let mut v = base();
    v.0.fields = fields(&["name", "id"]);
    variants.push(v);
    let mut v = base();
    v.0.fields = fields(&["id", "name", "owner.email"]);
    variants.push(v);
    let mut v = base();
    v.0.fields = None;
    variants.push(v);
    // 1.0's bits read as an integer are 4607182418800017408
    for value in [
        json!("closed"),
        json!("1"),
        json!(1),
        json!(1.0),
        json!(-1),
        json!(0.0),
        json!(-0.0),
        json!(4_607_182_418_800_017_408u64),
        json!(["open"]),
        json!(null),
    ] {
        let mut v = base();
        v.0.filter = vec![clause(value)];
        variants.push(v);
    }
    let mut v = base();
    v.0.filter[0].op = Op::Neq;
    variants.push(v);
    let mut v = base();
    v.0.filter.push(clause(json!("open")));
    variants.push(v);
    variants.push((base().0, hit("2026-12-01T11:00:01Z"), Limits::default()));
    variants.push((base().0, Labels::default(), Limits::default()));
    let mut v = base();
    v.2.token_budget += 1;
    variants.push(v);
    let mut v = base();
    v.2.wall += Duration::from_nanos(1);
    variants.push(v);
    let mut v = base();
    v.0.upstream_args.insert("status".into(), json!("open"));
    variants.push(v);
    let mut v = base();
    v.0.looping = false;
    variants.push(v);
    let mut all: Vec<Vec<u8>> = variants.iter().map(bytes).collect();
    all.push(bytes(&same));
    let count = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), count, "every variant is written its own way");
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(null)),
        Just(json!(true)),
        Just(json!(1)),
        Just(json!(1.0)),
        Just(json!(-1)),
        Just(json!(0.0)),
        Just(json!(-0.0)),
        Just(json!(4_607_182_418_800_017_408u64)),
        Just(json!("1")),
        Just(json!("a")),
        Just(json!("")),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(vec!["a", "b"]), inner), 0..3).prop_map(
                |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            ),
        ]
    })
}

fn args() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((prop::sample::select(vec!["a", "b", "c"]), leaf()), 0..3)
        .prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn opt_str() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop::sample::select(vec!["x", "y", ""]).prop_map(str::to_owned))
}

fn for_each_error() -> impl Strategy<Value = ForEachError> {
    (
        leaf(),
        prop::option::of(prop::sample::select(vec![404u16, 500])),
        opt_str(),
    )
        .prop_map(|(value, status, error)| ForEachError {
            value,
            status,
            error: error.unwrap_or_default(),
        })
}

fn position() -> impl Strategy<Value = Position> {
    prop_oneof![
        Just(Position::Start),
        (0i64..2).prop_map(Position::Page),
        (0u64..2).prop_map(Position::Offset),
        leaf().prop_map(Position::Cursor),
        Just(Position::Url("https://api.example.com/?p=2".into())),
    ]
}

fn resume() -> impl Strategy<Value = Resume> {
    let pending = (
        0usize..2,
        position(),
        0usize..2,
        0usize..2,
        prop::option::of(0u64..2),
        any::<bool>(),
    )
        .prop_map(
            |(value, at, skip, rows, total, first_page_unknown)| Pending {
                value,
                at,
                skip,
                rows,
                total,
                first_page_unknown,
            },
        );
    (
        prop::collection::vec(pending, 0..3),
        0usize..2,
        prop::collection::vec(for_each_error(), 0..2),
    )
        .prop_map(|(pending, rows_before, errors_before)| Resume {
            point: ResumePoint { pending },
            rows_before,
            errors_before,
        })
}

fn call_plan() -> impl Strategy<Value = CallPlan> {
    let paths = prop::sample::select(vec!["id", "name", "owner.email", "owner.id"]);
    let projection = prop::option::of(prop::collection::vec(paths, 1..4))
        .prop_map(|p| p.and_then(|p| fields(&p)));
    let op = prop::sample::select(vec![Op::Eq, Op::Neq, Op::Gt, Op::In, Op::Exists]);
    let field = prop::sample::select(vec!["status", "owner.id"]);
    let clause = (field, op, value()).prop_map(|(f, op, value)| Clause {
        field: path(f),
        op,
        value,
    });
    let for_each = (
        prop::sample::select(vec!["id", "owner"]),
        any::<bool>(),
        prop::collection::vec(leaf(), 0..3),
        prop::collection::vec(for_each_error(), 0..2),
    )
        .prop_map(|(key, in_body, values, rejected)| ForEach {
            key: key.to_owned(),
            in_body,
            values,
            rejected,
            per_call: None,
        });
    (
        args(),
        projection,
        prop::collection::vec(clause, 0..3),
        prop::option::of(for_each),
        prop::array::uniform6(any::<bool>()),
        opt_str(),
        prop::option::of(resume()),
    )
        .prop_map(
            |(upstream_args, fields, filter, for_each, flags, continue_token, resume)| CallPlan {
                upstream_args,
                fields,
                filter,
                all_pages: flags[0],
                for_each,
                refresh: flags[1],
                uses_reserved: flags[2],
                looping: flags[3],
                paginated: flags[4] && flags[5],
                continue_token,
                resume,
            },
        )
}

fn labels() -> impl Strategy<Value = Labels> {
    let at = prop::sample::select(vec!["2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z"]);
    let cache = prop_oneof![
        (at.clone(), at).prop_map(|(c, e)| CacheLabel::Hit {
            cached_at: c.into(),
            expires_at: e.into(),
        }),
        (0usize..2).prop_map(|max_bytes| CacheLabel::TooLarge { max_bytes }),
    ];
    (opt_str(), prop::option::of(cache), opt_str()).prop_map(|(continue_token, cache, degraded)| {
        Labels {
            continue_token,
            cache,
            degraded,
        }
    })
}

fn limits() -> impl Strategy<Value = Limits> {
    (0usize..2, 0usize..2, 0u64..2).prop_map(|(budget, items, wall)| Limits {
        token_budget: 25_000 + budget,
        items: 5_000 + items,
        wall: Duration::from_millis(60_000 + wall),
        ..Limits::default()
    })
}

fn inputs() -> impl Strategy<Value = Inputs> {
    (call_plan(), labels(), limits())
}

/// `a` with the parts `take` names taken from `c`: mostly one or two parts differ.
fn mix(a: &Inputs, c: Inputs, take: &[bool]) -> Inputs {
    let pick = |i: usize| take.get(i).copied().unwrap_or(false);
    let (p, l, m) = c;
    let (ap, al, am) = a.clone();
    let plan = CallPlan {
        upstream_args: if pick(0) {
            p.upstream_args
        } else {
            ap.upstream_args
        },
        fields: if pick(1) { p.fields } else { ap.fields },
        filter: if pick(2) { p.filter } else { ap.filter },
        all_pages: if pick(3) { p.all_pages } else { ap.all_pages },
        for_each: if pick(4) { p.for_each } else { ap.for_each },
        refresh: if pick(5) { p.refresh } else { ap.refresh },
        uses_reserved: if pick(6) {
            p.uses_reserved
        } else {
            ap.uses_reserved
        },
        looping: if pick(7) { p.looping } else { ap.looping },
        paginated: if pick(8) { p.paginated } else { ap.paginated },
        continue_token: if pick(9) {
            p.continue_token
        } else {
            ap.continue_token
        },
        resume: if pick(10) { p.resume } else { ap.resume },
    };
    let labels = Labels {
        continue_token: if pick(11) {
            l.continue_token
        } else {
            al.continue_token
        },
        cache: if pick(12) { l.cache } else { al.cache },
        degraded: if pick(13) { l.degraded } else { al.degraded },
    };
    let limits = Limits {
        token_budget: if pick(14) {
            m.token_budget
        } else {
            am.token_budget
        },
        items: if pick(15) { m.items } else { am.items },
        wall: if pick(16) { m.wall } else { am.wall },
        ..am
    };
    (plan, labels, limits)
}

fn pairs() -> impl Strategy<Value = (Inputs, Inputs)> {
    let take = prop::collection::vec(prop::bool::weighted(0.12), 17);
    (inputs(), inputs(), take).prop_map(|(a, c, take)| {
        let b = mix(&a, c, &take);
        (a, b)
    })
}

/// Every pair of leaves, alone and inside lists and maps, where a value is written.
#[test]
fn values_are_written_alike_exactly_when_alike() {
    let leaves = [
        json!(null),
        json!(true),
        json!(false),
        json!(1),
        json!(1.0),
        json!(-1),
        json!(-1.0),
        json!(0),
        json!(0.0),
        json!(-0.0),
        json!(4_607_182_418_800_017_408u64),
        json!(u64::MAX),
        json!(i64::MIN),
        json!("1"),
        json!(""),
        json!("a"),
        json!([]),
        json!({}),
    ];
    let shapes: [fn(&Value, &Value) -> Value; 5] = [
        |x, _| x.clone(),
        |x, y| json!([x, y]),
        |x, y| json!({"a": x, "b": y}),
        |x, y| json!([[x], y]),
        |x, y| {
            let mut m = Map::new();
            m.insert(x.to_string(), y.clone());
            Value::Object(m)
        },
    ];
    let written = |v: Value| -> Vec<Inputs> {
        let mut filter = plan();
        filter.filter = vec![clause(v.clone())];
        let mut args = plan();
        args.upstream_args.insert("q".into(), v.clone());
        let mut cursor = plan();
        cursor.resume = Some(Resume {
            point: ResumePoint {
                pending: vec![Pending {
                    at: Position::Cursor(v.clone()),
                    ..Pending::fresh(0)
                }],
            },
            rows_before: 0,
            errors_before: Vec::new(),
        });
        [filter, args, cursor]
            .into_iter()
            .map(|p| (p, Labels::default(), Limits::default()))
            .collect()
    };
    let mut checked = 0;
    for shape in shapes {
        for (x1, y1) in leaves
            .iter()
            .flat_map(|x| leaves.iter().map(move |y| (x, y)))
        {
            for (x2, y2) in [(x1, y1), (y1, x1), (x1, x1), (&leaves[4], y1)] {
                let a = written(shape(x1, y1));
                let b = written(shape(x2, y2));
                for (a, b) in a.iter().zip(&b) {
                    assert_eq!(
                        bytes(a) == bytes(b),
                        debug(a) == debug(b),
                        "{:?} vs {:?}",
                        shape(x1, y1),
                        shape(x2, y2)
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 3_000);
}
proptest! {
    #![proptest_config(crate::tests::kit::prop_config(3_000))]

    /// Inputs drawn from small sets, a part or two of them redrawn: written alike exactly
    /// when alike in `Debug`, and always alike when built the same.
    #[test]
    fn written_alike_exactly_when_alike((a, b) in pairs()) {
        prop_assert_eq!(bytes(&a) == bytes(&b), debug(&a) == debug(&b));
        prop_assert_eq!(bytes(&a), bytes(&a.clone()));
    }
}
