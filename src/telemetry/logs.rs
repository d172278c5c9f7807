//! Log lines: text (the default) or, with `LOOPGATE_LOG_FORMAT=json`, one JSON object
//! per line for log pipelines ([`JsonLines`]). A JSON line carries the event's fields,
//! the fields of every span it happened in (so a tool call's `call_id`, `org`, `agent`
//! and `tool` are on every line the call logs, however deep) and the `trace_id` and
//! `span_id` of the innermost span, so a line leads to its trace. Field values are what
//! the code recorded: secrets are never recorded (`upstream::redact`, `secrecy`).

use std::fmt;
use std::io::Write as _;
use std::sync::OnceLock;

use opentelemetry::trace::TraceContextExt as _;
use serde_json::{Map, Value};
use tracing::dispatcher::WeakDispatch;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Dispatch, Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// How log lines are written (`LOOPGATE_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

impl LogFormat {
    /// `json` (any case) is JSON; anything else, or nothing, is text.
    pub fn from_env() -> Self {
        match std::env::var("LOOPGATE_LOG_FORMAT") {
            Ok(v) if v.eq_ignore_ascii_case("json") => LogFormat::Json,
            _ => LogFormat::Text,
        }
    }
}

/// A field's key in a log line: loopgate's own span attributes are namespaced for traces
/// (`loopgate.call_id`, O1) and written bare here (`call_id`), as log pipelines read them.
fn key(field: &Field) -> String {
    let name = field.name();
    name.strip_prefix("loopgate.").unwrap_or(name).to_string()
}

/// The fields of an event or a span, as JSON values.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(key(field), Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(key(field), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(key(field), Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(key(field), Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(key(field), Value::from(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0.insert(key(field), Value::from(value.to_string()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(key(field), Value::from(format!("{value:?}")));
    }
}

/// A span's fields as recorded so far (kept in its extensions).
struct SpanFields(Map<String, Value>);

/// The JSON line layer, writing to stderr. Installed off (doing nothing) rather than
/// left out, because a layer inside an `Option` is never told its subscriber, which it
/// needs to ask for a span's OpenTelemetry ids.
pub struct JsonLines {
    on: bool,
    /// The subscriber it is part of.
    dispatch: OnceLock<WeakDispatch>,
}

impl JsonLines {
    pub fn new(on: bool) -> Self {
        JsonLines {
            on,
            dispatch: OnceLock::new(),
        }
    }

    /// `(trace_id, span_id)` of span `id`, when traces are tracked.
    fn ids(&self, id: &Id) -> Option<(String, String)> {
        let dispatch: Dispatch = self.dispatch.get()?.upgrade()?;
        let cx = tracing_opentelemetry::get_otel_context(id, &dispatch)?;
        let span = cx.span();
        let sc = span.span_context();
        sc.is_valid()
            .then(|| (sc.trace_id().to_string(), sc.span_id().to_string()))
    }
}

impl<S> Layer<S> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_register_dispatch(&self, subscriber: &Dispatch) {
        let _ = self.dispatch.set(subscriber.downgrade());
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !self.on {
            return;
        }
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut fields = Map::new();
        attrs.record(&mut Fields(&mut fields));
        span.extensions_mut().insert(SpanFields(fields));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if !self.on {
            return;
        }
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut ext = span.extensions_mut();
        if let Some(f) = ext.get_mut::<SpanFields>() {
            values.record(&mut Fields(&mut f.0));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if !self.on {
            return;
        }
        let meta = event.metadata();
        let mut line = Map::new();
        line.insert(
            "timestamp".into(),
            Value::from(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)),
        );
        line.insert("level".into(), Value::from(meta.level().as_str()));
        line.insert("target".into(), Value::from(meta.target()));
        let mut innermost = None;
        if let Some(scope) = ctx.event_scope(event) {
            let mut names = Vec::new();
            // outermost first, so an inner span's field wins over an outer one's
            for span in scope.from_root() {
                names.push(Value::from(span.name()));
                if let Some(f) = span.extensions().get::<SpanFields>() {
                    line.extend(f.0.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                innermost = Some(span.id());
            }
            line.insert("spans".into(), Value::Array(names));
        }
        // no span's extensions are held here: asking for ids may build the span's context
        if let Some((trace, span)) = innermost.and_then(|id| self.ids(&id)) {
            line.insert("trace_id".into(), Value::from(trace));
            line.insert("span_id".into(), Value::from(span));
        }
        event.record(&mut Fields(&mut line));
        if let Ok(mut text) = serde_json::to_string(&Value::Object(line)) {
            text.push('\n');
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }
}
