//! An OTLP/HTTP trace receiver for tests: `POST /v1/traces` with an
//! `ExportTraceServiceRequest` in protobuf, decoded with the OpenTelemetry project's own
//! generated messages (`opentelemetry-proto`), every span kept with its resource's
//! `service.name`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use prost::Message as _;

/// One received span, its ids hex-encoded as in a `traceparent`.
#[derive(Debug, Clone)]
pub struct Received {
    pub service: String,
    pub name: String,
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    /// OTLP's `SpanKind`: 1 internal, 2 server, 3 client.
    pub kind: i32,
    pub attributes: Vec<(String, String)>,
    /// The keys whose value was sent as an integer.
    pub ints: Vec<String>,
}

impl Received {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The attribute, when it was sent as an integer.
    pub fn int(&self, key: &str) -> Option<i64> {
        self.ints
            .iter()
            .any(|k| k == key)
            .then(|| self.attr(key)?.parse().ok())?
    }
}

fn text(kv: &KeyValue) -> (String, String) {
    let v = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        Some(AnyValue::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    };
    (kv.key.clone(), v)
}

pub struct Receiver {
    pub endpoint: String,
    spans: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub fn spans(&self) -> Vec<Received> {
        self.spans.lock().unwrap().clone()
    }

    /// Waits (up to 20 s) until `done` holds for the spans received.
    pub async fn until(&self, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        for _ in 0..200 {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.spans()
    }
}

async fn export(spans: web::Data<Arc<Mutex<Vec<Received>>>>, body: web::Bytes) -> HttpResponse {
    let Ok(req) = ExportTraceServiceRequest::decode(body) else {
        return HttpResponse::BadRequest().finish();
    };
    let mut got = Vec::new();
    for rs in req.resource_spans {
        let service = rs
            .resource
            .as_ref()
            .and_then(|r| {
                r.attributes
                    .iter()
                    .map(text)
                    .find(|(k, _)| k == "service.name")
            })
            .map(|(_, v)| v)
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                got.push(Received {
                    service: service.clone(),
                    name: s.name.clone(),
                    trace_id: hex::encode(&s.trace_id),
                    span_id: hex::encode(&s.span_id),
                    parent_span_id: hex::encode(&s.parent_span_id),
                    kind: s.kind,
                    attributes: s.attributes.iter().map(text).collect(),
                    ints: s
                        .attributes
                        .iter()
                        .filter(|kv| {
                            matches!(
                                kv.value.as_ref().and_then(|v| v.value.as_ref()),
                                Some(AnyValue::IntValue(_))
                            )
                        })
                        .map(|kv| kv.key.clone())
                        .collect(),
                });
            }
        }
    }
    spans.lock().unwrap().extend(got);
    HttpResponse::Ok()
        .content_type("application/x-protobuf")
        .body(ExportTraceServiceResponse::default().encode_to_vec())
}

pub async fn start() -> Receiver {
    let spans = Arc::new(Mutex::new(Vec::new()));
    let data = web::Data::new(spans.clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(web::PayloadConfig::new(16 * 1024 * 1024))
            .route("/v1/traces", web::post().to(export))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    Receiver {
        endpoint: format!("http://127.0.0.1:{port}"),
        spans,
    }
}
