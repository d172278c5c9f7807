//! An in-test upstream that misbehaves on purpose, written on raw TCP so it can do what
//! a well-behaved HTTP framework will not: reset a connection mid-body, never answer,
//! drip, stream forever, lie with status 200.
//!
//! `GET /f/{fault}/{fail_at}?page=N&per_page=10`: pages before `fail_at` are good
//! (`{"data": [10 rows]}`, 50 rows in 5 pages); page `fail_at` and every later one (and
//! every retry of them) fail with `fault`. `fail_at = 1` faults a single call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const ROWS: usize = 50;
pub const PER_PAGE: usize = 10;

pub struct FaultServer {
    pub base: String,
    /// Requests seen per `fault/fail_at/page`.
    pub hits: Arc<Mutex<HashMap<String, u32>>>,
}

impl FaultServer {
    /// Requests of `page` of `/f/{fault}/{fail_at}`, retries included.
    pub fn hits(&self, fault: &str, fail_at: usize, page: usize) -> u32 {
        let hits = self.hits.lock().unwrap();
        hits.get(&format!("{fault}/{fail_at}/{page}"))
            .copied()
            .unwrap_or(0)
    }
}

pub async fn start() -> FaultServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let hits = Arc::new(Mutex::new(HashMap::new()));
    let seen = hits.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let _ = serve(stream, seen).await;
            });
        }
    });
    FaultServer { base, hits }
}

/// The request target of a request head, once the head is complete.
async fn read_target(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    Ok(head.split(' ').nth(1).unwrap_or("/").to_string())
}

fn page_body(page: usize, per: usize) -> Vec<u8> {
    let rows: Vec<_> = ((page - 1) * per..(page * per).min(ROWS))
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    json!({"data": rows}).to_string().into_bytes()
}

fn head(status: &str, content_type: &str, extra: &str, len: Option<usize>) -> Vec<u8> {
    let len = len
        .map(|n| format!("content-length: {n}\r\n"))
        .unwrap_or_default();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n{extra}{len}connection: close\r\n\r\n"
    )
    .into_bytes()
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    extra: &str,
    body: &[u8],
) -> std::io::Result<()> {
    stream
        .write_all(&head(status, content_type, extra, Some(body.len())))
        .await?;
    stream.write_all(body).await?;
    stream.flush().await
}

async fn serve(
    mut stream: TcpStream,
    hits: Arc<Mutex<HashMap<String, u32>>>,
) -> std::io::Result<()> {
    let target = read_target(&mut stream).await?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let params: HashMap<&str, &str> = query.split('&').filter_map(|p| p.split_once('=')).collect();
    let page: usize = params
        .get("page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
        .max(1);
    let per: usize = params
        .get("per_page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(PER_PAGE)
        .clamp(1, PER_PAGE);
    let mut parts = path.trim_start_matches("/f/").split('/');
    let fault = parts.next().unwrap_or("").to_string();
    let fail_at: usize = parts.next().and_then(|p| p.parse().ok()).unwrap_or(1);
    *hits
        .lock()
        .unwrap()
        .entry(format!("{fault}/{fail_at}/{page}"))
        .or_default() += 1;
    if page < fail_at {
        return respond(
            &mut stream,
            "200 OK",
            "application/json",
            "",
            &page_body(page, per),
        )
        .await;
    }
    let error = |what: &str| json!({"error": what, "hint": "try again later"}).to_string();
    match fault.as_str() {
        "429" => respond(&mut stream, "429 Too Many Requests", "application/json", "", error("slow down").as_bytes()).await,
        "429-retry-after" => {
            respond(&mut stream, "429 Too Many Requests", "application/json", "retry-after: 1\r\n", error("slow down").as_bytes()).await
        }
        "429-retry-after-long" => {
            respond(&mut stream, "429 Too Many Requests", "application/json", "retry-after: 3600\r\n", error("quota used up for the hour").as_bytes()).await
        }
        "500" => respond(&mut stream, "500 Internal Server Error", "application/json", "", error("database on fire").as_bytes()).await,
        "502" => respond(&mut stream, "502 Bad Gateway", "text/html", "", b"<html><body><h1>502 Bad Gateway</h1></body></html>").await,
        "503" => respond(&mut stream, "503 Service Unavailable", "application/json", "", error("maintenance").as_bytes()).await,
        "504" => respond(&mut stream, "504 Gateway Timeout", "text/plain", "", b"upstream timed out").await,
        "hang" => {
            // reads the request, answers nothing, keeps the connection open
            tokio::time::sleep(Duration::from_secs(600)).await;
            Ok(())
        }
        "reset" => {
            let body = page_body(page, per);
            stream
                .write_all(&head("200 OK", "application/json", "", Some(body.len() * 4)))
                .await?;
            stream.write_all(&body[..body.len() / 2]).await?;
            stream.flush().await?;
            // SO_LINGER 0: closing sends a RST instead of a FIN
            stream.set_zero_linger()?;
            drop(stream);
            Ok(())
        }
        "bad-json" => respond(&mut stream, "200 OK", "application/json", "", br#"{"data": [{"id": 1, "name": "row 1"}, {"id": 2, "na"#).await,
        "html-200" => {
            respond(&mut stream, "200 OK", "text/html", "", b"<!doctype html><html><head><title>Error</title></head><body><h1>Something went wrong</h1><p>Please try again later.</p></body></html>").await
        }
        "endless" => {
            stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n").await?;
            let chunk = {
                let data = br#"{"id": 1, "name": "again and again and again"},"#.repeat(200);
                let mut c = format!("{:x}\r\n", data.len()).into_bytes();
                c.extend_from_slice(&data);
                c.extend_from_slice(b"\r\n");
                c
            };
            stream.write_all(b"a\r\n{\"data\": [\r\n").await?;
            // until the client hangs up
            loop {
                stream.write_all(&chunk).await?;
            }
        }
        "drip" => {
            let body = page_body(page, per);
            stream.write_all(&head("200 OK", "application/json", "", Some(body.len()))).await?;
            for b in body {
                stream.write_all(&[b]).await?;
                stream.flush().await?;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Ok(())
        }
        "too-big" => {
            // a real 2 MiB list (the tests cap bodies at 1 MiB)
            let rows: Vec<_> = (0..20_000).map(|i| json!({"id": i, "pad": "x".repeat(90)})).collect();
            let body = json!({"data": rows}).to_string();
            respond(&mut stream, "200 OK", "application/json", "", body.as_bytes()).await
        }
        "redirect-loop" => {
            let location = format!("location: {target}\r\n");
            respond(&mut stream, "302 Found", "text/plain", &location, b"").await
        }
        _ => respond(&mut stream, "404 Not Found", "application/json", "", error("no such fault").as_bytes()).await,
    }
}
