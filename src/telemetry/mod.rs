//! What the service tells its operators: metrics ([`metrics`]), logs ([`logs`]: text or
//! JSON lines on stderr, filtered by `RUST_LOG`, default `info`) and traces ([`traces`]:
//! OpenTelemetry over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set). Every HTTP request
//! is one span (the root of a trace, or the child of the caller's `traceparent`); the
//! spans of its tool call, cache lookup, walk, upstream requests, size guard and record
//! write sit under it.

pub mod http_attrs;
pub mod logs;
pub mod metrics;
pub mod stage_times;
pub mod traces;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

use logs::{JsonLines, LogFormat};
use traces::{OtlpSettings, Traces};

/// What [`init`] set up; [`Telemetry::shutdown`] flushes queued spans before exit.
pub struct Telemetry {
    traces: Option<Traces>,
}

impl Telemetry {
    /// Flushes and stops the trace exporter (blocking: it runs on a blocking thread).
    pub async fn shutdown(self) {
        if let Some(t) = self.traces {
            let _ = tokio::task::spawn_blocking(move || t.shutdown()).await;
        }
    }
}

/// Installs the process's log and trace pipeline from the environment
/// (`LOOPGATE_LOG_FORMAT`, `RUST_LOG`, `OTEL_*`); call once, inside the tokio runtime.
/// A second call (tests) installs nothing.
pub fn init() -> Telemetry {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let format = LogFormat::from_env();
    let otlp = OtlpSettings::from_env(|k| std::env::var(k).ok());
    let (traces, tracer, problem) = match &otlp {
        Ok(Some(s)) => match Traces::start(s) {
            Ok((t, tracer)) => (Some(t), Some(tracer), None),
            Err(e) => (None, None, Some(format!("traces off: {e:#}"))),
        },
        Ok(None) => (None, None, None),
        Err(e) => (None, None, Some(format!("traces off: {e}"))),
    };
    // without an exporter, JSON lines still get trace and span ids (and honour a caller's
    // traceparent); text lines need none, so nothing is tracked for them
    let (local, tracer) = match (tracer, format) {
        (Some(t), _) => (None, Some(t)),
        (None, LogFormat::Json) => {
            let (l, t) = Traces::local();
            (Some(l), Some(t))
        }
        (None, LogFormat::Text) => (None, None),
    };
    let otel = tracer.map(|t| tracing_opentelemetry::layer().with_tracer(t));
    let text = (format == LogFormat::Text)
        .then(|| tracing_subscriber::fmt::layer().with_writer(std::io::stderr));
    let json = JsonLines::new(format == LogFormat::Json);
    let installed = tracing_subscriber::registry()
        .with(filter)
        .with(otel)
        .with(text)
        .with(json)
        .with(stage_times::StageTimes)
        .try_init()
        .is_ok();
    if let Some(p) = problem {
        tracing::warn!("{p}");
    }
    Telemetry {
        traces: if installed { traces.or(local) } else { None },
    }
}
