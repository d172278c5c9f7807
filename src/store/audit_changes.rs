//! The `changes` of an audit event: the top-level fields a write changed, each with its
//! value before and after, computed from the resource as the API shows it (so nothing
//! the API never returns can leak in). Secret fields never carry a value: a field named
//! as secret, or one the write set that the API does not return (a credential), appears
//! as `"[secret]"` on whichever side held a value.

use serde_json::{Map, Value};

/// What a secret's value is replaced by, before and after.
pub const SECRET: &str = "[secret]";

/// Fields that are secret wherever they appear in a resource: a credential, an OAuth
/// client secret, a key or signing secret shown once.
const SECRET_FIELDS: &[&str] = &[
    "credential",
    "client_secret",
    "secret",
    "key",
    "token",
    "password",
    "credentials",
];

/// Fields every write touches and that say nothing about what changed.
const IGNORED: &[&str] = &["updated_at", "created_at"];

fn is_secret(field: &str) -> bool {
    SECRET_FIELDS.contains(&field)
}

/// A value with every secret field inside it (at any depth) replaced by [`SECRET`].
fn redacted(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = if is_secret(k) && !v.is_null() {
                        Value::String(SECRET.into())
                    } else {
                        redacted(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(redacted).collect()),
        other => other.clone(),
    }
}

fn side(v: Option<&Value>, secret: bool) -> Value {
    match v {
        None | Some(Value::Null) => Value::Null,
        Some(_) if secret => Value::String(SECRET.into()),
        Some(v) => redacted(v),
    }
}

/// `{field: {before, after}}` for each top-level field that differs between `before`
/// and `after` (either may be absent: a create or a delete). `secrets_written` names
/// secret fields the write set (a rotated credential) that the resource as shown does
/// not carry: each is recorded as changed, `"[secret]"` on both sides (or `null` before
/// when `had_secret_before` says there was none).
pub fn changes(
    before: Option<&Value>,
    after: Option<&Value>,
    secrets_written: &[(&str, bool)],
) -> Map<String, Value> {
    let empty = Map::new();
    let b = before.and_then(Value::as_object).unwrap_or(&empty);
    let a = after.and_then(Value::as_object).unwrap_or(&empty);
    let mut out = Map::new();
    let mut fields: Vec<&String> = b.keys().chain(a.keys()).collect();
    fields.sort();
    fields.dedup();
    for field in fields {
        if IGNORED.contains(&field.as_str()) {
            continue;
        }
        let (bv, av) = (b.get(field), a.get(field));
        if bv == av {
            continue;
        }
        let secret = is_secret(field);
        let mut change = Map::new();
        change.insert("before".into(), side(bv, secret));
        change.insert("after".into(), side(av, secret));
        out.insert(field.clone(), Value::Object(change));
    }
    for (field, had_before) in secrets_written {
        let mut change = Map::new();
        let before = if *had_before {
            Value::String(SECRET.into())
        } else {
            Value::Null
        };
        change.insert("before".into(), before);
        change.insert("after".into(), Value::String(SECRET.into()));
        out.insert((*field).to_string(), Value::Object(change));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_changed_fields_are_recorded_without_timestamps() {
        let before = json!({"id": "x", "loop_responses": true, "ttl": 24, "updated_at": "a"});
        let after = json!({"id": "x", "loop_responses": false, "ttl": 24, "updated_at": "b"});
        let c = changes(Some(&before), Some(&after), &[]);
        assert_eq!(
            Value::Object(c),
            json!({"loop_responses": {"before": true, "after": false}})
        );
    }

    #[test]
    fn a_create_records_every_field_and_a_delete_every_field_gone() {
        let v = json!({"id": "x", "name": "n", "created_at": "t"});
        let created = changes(None, Some(&v), &[]);
        assert_eq!(created["name"], json!({"before": null, "after": "n"}));
        assert!(!created.contains_key("created_at"));
        let deleted = changes(Some(&v), None, &[]);
        assert_eq!(deleted["id"], json!({"before": "x", "after": null}));
        assert!(changes(Some(&v), Some(&v), &[]).is_empty());
    }

    #[test]
    fn secrets_never_carry_a_value_at_any_depth() {
        let before = json!({"connection": {"client_secret": "s3cr3t-a", "client_id": "c"}});
        let after =
            json!({"connection": {"client_secret": "s3cr3t-b", "client_id": "c"}, "key": "lg_abc"});
        let c = Value::Object(changes(
            Some(&before),
            Some(&after),
            &[("credential", true)],
        ));
        let text = c.to_string();
        assert!(
            !text.contains("s3cr3t") && !text.contains("lg_abc"),
            "{text}"
        );
        assert_eq!(c["key"], json!({"before": null, "after": SECRET}));
        assert_eq!(c["credential"], json!({"before": SECRET, "after": SECRET}));
        assert_eq!(c["connection"]["after"]["client_secret"], json!(SECRET));
        assert_eq!(c["connection"]["after"]["client_id"], json!("c"));
    }

    #[test]
    fn a_secret_set_for_the_first_time_has_no_before() {
        let c = changes(None, None, &[("credential", false)]);
        assert_eq!(c["credential"], json!({"before": null, "after": SECRET}));
    }
}
