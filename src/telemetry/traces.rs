//! OpenTelemetry traces, off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: `tracing` spans are exported over OTLP
//! (`OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`, the default, and the only one built
//! in) as service `OTEL_SERVICE_NAME` (default `loopgate`). The batch exporter sends
//! through [`OtlpClient`], the reqwest client the service already has, so no second HTTP
//! stack is linked. W3C `traceparent` / `tracestate` are read from callers
//! ([`parent_from`]) and written into upstream requests of the providers that ask for it
//! ([`inject`]). Span attributes are the fields the code records: ids, names, counts,
//! statuses — never a credential, a URL's query or a body.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Where and how spans are exported, read from the standard `OTEL_*` variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpSettings {
    /// The traces endpoint, `…/v1/traces`.
    pub endpoint: String,
    pub service_name: String,
}

impl OtlpSettings {
    /// `None` when no endpoint is configured (traces off). `Err` for a protocol this
    /// build does not speak.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        let non_empty = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let endpoint = match (
            non_empty("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            non_empty("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            // a signal's own endpoint is used as given
            (Some(e), _) => e,
            // the base endpoint gets the signal's path (OTLP exporter specification)
            (None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        let protocol = non_empty("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| non_empty("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .unwrap_or_else(|| "http/protobuf".into());
        if protocol != "http/protobuf" {
            return Err(format!(
                "OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported: use http/protobuf"
            ));
        }
        let service_name = non_empty("OTEL_SERVICE_NAME").unwrap_or_else(|| "loopgate".into());
        Ok(Some(OtlpSettings {
            endpoint,
            service_name,
        }))
    }
}

/// The OTLP exporter's HTTP client: our reqwest client, run on the service's tokio
/// runtime (the batch exporter calls it from a thread of its own).
#[derive(Debug, Clone)]
pub struct OtlpClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl HttpClient for OtlpClient {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        let client = self.client.clone();
        let task = self.runtime.spawn(async move {
            let (parts, body) = request.into_parts();
            let res = client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await?;
            let mut out = Response::builder().status(res.status());
            for (k, v) in res.headers() {
                out = out.header(k, v);
            }
            let body = res.bytes().await?;
            Ok::<_, HttpError>(out.body(body)?)
        });
        Box::pin(async move { task.await? })
    }
}

/// The tracer provider while traces are on; [`Traces::shutdown`] flushes what is queued.
pub struct Traces {
    provider: SdkTracerProvider,
}

impl Traces {
    /// The exporter and provider for `s`; must run inside the tokio runtime.
    pub fn start(s: &OtlpSettings) -> anyhow::Result<(Self, opentelemetry_sdk::trace::Tracer)> {
        let client = OtlpClient {
            client: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(10))
                .build()?,
            runtime: tokio::runtime::Handle::try_current()?,
        };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(s.endpoint.clone())
            .build()?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(
                Resource::builder()
                    .with_service_name(s.service_name.clone())
                    .build(),
            )
            .build();
        let tracer = provider.tracer("loopgate");
        Ok((Traces { provider }, tracer))
    }

    /// A provider that exports nothing: spans still get ids (for JSON log lines) and a
    /// caller's `traceparent` is still honoured.
    pub fn local() -> (Self, opentelemetry_sdk::trace::Tracer) {
        let provider = SdkTracerProvider::builder().build();
        let tracer = provider.tracer("loopgate");
        (Traces { provider }, tracer)
    }

    /// Flushes queued spans and stops the exporter (blocking: call off the async workers).
    pub fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "traces not flushed at shutdown");
        }
    }
}

struct HeaderMapCarrier<'a>(&'a http::HeaderMap);

impl Extractor for HeaderMapCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// A caller's W3C trace context, from `traceparent` / `tracestate` header values, made
/// the parent of `span` (a malformed `traceparent` is ignored: the span starts a trace).
pub fn parent_from(span: &tracing::Span, traceparent: Option<&str>, tracestate: Option<&str>) {
    let Some(tp) = traceparent else {
        return;
    };
    let mut headers = http::HeaderMap::new();
    if let Ok(v) = http::HeaderValue::from_str(tp) {
        headers.insert("traceparent", v);
    }
    if let Some(Ok(v)) = tracestate.map(http::HeaderValue::from_str) {
        headers.insert("tracestate", v);
    }
    let cx = TraceContextPropagator::new().extract(&HeaderMapCarrier(&headers));
    let _ = span.set_parent(cx);
}

struct VecCarrier<'a>(&'a mut Vec<(&'static str, String)>);

impl Injector for VecCarrier<'_> {
    fn set(&mut self, key: &str, value: String) {
        let key = match key {
            "traceparent" => "traceparent",
            "tracestate" => "tracestate",
            _ => return,
        };
        self.0.push((key, value));
    }
}

/// The `traceparent` (and `tracestate`) naming `span` as the parent, for an upstream
/// request; empty when traces are off or the span is not recorded.
pub fn inject(span: &tracing::Span) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let cx = span.context();
    TraceContextPropagator::new().inject_context(&cx, &mut VecCarrier(&mut out));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn traces_are_off_without_an_endpoint_and_follow_the_standard_variables() {
        assert_eq!(OtlpSettings::from_env(env(&[])).unwrap(), None);
        let s = OtlpSettings::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_SERVICE_NAME", "gw"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(s.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(s.service_name, "gw");
        let own = OtlpSettings::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:9999/traces"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(own.endpoint, "http://b:9999/traces");
        assert_eq!(own.service_name, "loopgate");
        let grpc = OtlpSettings::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]));
        assert!(grpc.unwrap_err().contains("http/protobuf"));
    }
}
