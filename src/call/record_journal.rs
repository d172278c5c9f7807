//! K1: this replica's journal of the tool-call record writes its writer has not committed
//! yet (`call::call_records`), so a record waiting for Postgres survives the replica's
//! death: the restarted replica (or any other one on the same directory) replays it.
//!
//! - Where: segment files `<replica>-<n>.seg` in one directory
//!   (`LOOPGATE_RECORD_JOURNAL_DIR`; the chart mounts a volume there that outlives the
//!   container). A replica holds an exclusive advisory lock (`flock`, `File::try_lock`) on
//!   each of its segments while it lives; a segment nobody holds belongs to a replica that
//!   is gone, and is replayed ([`replay_orphans`]).
//! - What: one line per write, `<checksum> <json>\n` (the checksum: the JSON's CRC-32,
//!   in hex). A write that references a stored body (a cache hit's
//!   text) names it; the body's parts are written once per segment, before the first
//!   write that names it. A line cut short by a kill (no `\n`, or a checksum that does not
//!   match) is skipped: a half write is never replayed.
//! - When: every write is appended before it goes to the writer, so before its caller is
//!   answered. Appended, not synced: a killed process's writes are in the page cache and
//!   reach the file; a machine that loses power loses what the kernel had not written back
//!   (not covered: K1 promises survival of a replica's death, not of its machine's).
//! - Freed: a write is done once its statement committed (or Postgres refused its row for
//!   a reason of its own). A segment whose writes are all done is deleted once a newer one
//!   takes appends, or truncated while it is still the one appended to; a new segment
//!   starts once one holds [`SEGMENT_BYTES`].
//! - Bounded: the segments' bytes at most `max_bytes` and the writes not done at most
//!   `max_rows` (the writer's backlog bounds): a write that does not fit is refused, and
//!   its call answers 503 rather than a 200 whose id nobody could read.
//! - Without a directory (unit tests, an embedded writer), the same accounting and bounds
//!   hold for writes kept in memory only.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::store::tool_calls::{Body, Filled, NewCall, Outcome, Write};
use crate::store::OrgId;

/// A segment takes appends until it holds this many bytes.
pub const SEGMENT_BYTES: usize = 1 << 20;

/// A write's place in the journal, handed back once it is done ([`Journal::done`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    seq: u64,
    /// Its bytes in the bound (a line's, or its size in memory).
    bytes: usize,
}

/// Why a write was not journaled.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("the record journal is full ({rows} writes, {bytes} bytes wait for Postgres)")]
    Full { rows: usize, bytes: usize },
    #[error("the record journal could not be written: {0}")]
    Io(#[from] std::io::Error),
}

struct Segment {
    seq: u64,
    /// `None` in memory.
    file: Option<(File, PathBuf)>,
    bytes: usize,
    /// Writes in it not done.
    open: usize,
    /// The bodies written in it (org and id).
    bodies: HashSet<String>,
    /// An append failed part way.
    torn: bool,
}

struct Inner {
    next: u64,
    current: Segment,
    /// Older segments with writes not done, by sequence.
    old: HashMap<u64, Segment>,
    bytes: usize,
    rows: usize,
}

/// The journal of one replica's writer.
pub struct Journal {
    dir: Option<PathBuf>,
    replica: String,
    max_bytes: usize,
    max_rows: usize,
    inner: Mutex<Inner>,
}

/// What a journal holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Writes not done.
    pub rows: usize,
    /// Bytes of the segments (or of the writes, in memory).
    pub bytes: usize,
}

impl Journal {
    /// A journal of `replica`'s writes in `dir` (created if missing), or in memory (`None`).
    pub fn open(
        dir: Option<&Path>,
        replica: &str,
        max_bytes: usize,
        max_rows: usize,
    ) -> std::io::Result<Self> {
        let dir = dir.map(Path::to_path_buf);
        if let Some(d) = &dir {
            std::fs::create_dir_all(d)?;
        }
        let current = segment(dir.as_deref(), replica, 0)?;
        Ok(Self {
            dir,
            replica: replica.to_owned(),
            max_bytes,
            max_rows,
            inner: Mutex::new(Inner {
                next: 1,
                current,
                old: HashMap::new(),
                bytes: 0,
                rows: 0,
            }),
        })
    }

    /// A journal kept in memory only (same accounting and bounds, nothing survives).
    pub fn in_memory(replica: &str, max_bytes: usize, max_rows: usize) -> Self {
        Self {
            dir: None,
            replica: replica.to_owned(),
            max_bytes,
            max_rows,
            inner: Mutex::new(Inner {
                next: 1,
                current: Segment {
                    seq: 0,
                    file: None,
                    bytes: 0,
                    open: 0,
                    bodies: HashSet::new(),
                    torn: false,
                },
                old: HashMap::new(),
                bytes: 0,
                rows: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What it holds now.
    pub fn held(&self) -> Held {
        let inner = self.lock();
        Held {
            rows: inner.rows,
            bytes: inner.bytes,
        }
    }

    /// The directory, if on disk.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Appends `w` (and the body it names, if this segment has not got it yet), if it fits.
    pub fn append(&self, w: &Write) -> Result<Ticket, JournalError> {
        let mut inner = self.lock();
        let full = |inner: &Inner| JournalError::Full {
            rows: inner.rows,
            bytes: inner.bytes,
        };
        if inner.rows >= self.max_rows {
            return Err(full(&inner));
        }
        let bytes = match inner.current.file.is_some() {
            false => w.bytes(),
            true => {
                let body = w
                    .filled()
                    .filter(|(org, f)| !inner.current.bodies.contains(&body_key(org, f)));
                let mut text = String::new();
                if inner.current.torn {
                    // ends what a failed append left, so the next line reads whole
                    text.push('\n');
                }
                if let Some((org, f)) = body {
                    line(&mut text, &body_entry(org, f));
                }
                line(&mut text, &Entry::of(w));
                if inner.bytes + text.len() > self.max_bytes {
                    return Err(full(&inner));
                }
                if let Some((file, _)) = &mut inner.current.file {
                    if let Err(e) = file.write_all(text.as_bytes()) {
                        inner.current.torn = true;
                        return Err(e.into());
                    }
                }
                inner.current.torn = false;
                if let Some((org, f)) = body {
                    let key = body_key(org, f);
                    inner.current.bodies.insert(key);
                }
                text.len()
            }
        };
        if inner.current.file.is_none() && inner.bytes + bytes > self.max_bytes {
            return Err(full(&inner));
        }
        inner.bytes += bytes;
        inner.rows += 1;
        inner.current.bytes += bytes;
        inner.current.open += 1;
        let ticket = Ticket {
            seq: inner.current.seq,
            bytes,
        };
        if inner.current.bytes >= SEGMENT_BYTES {
            let seq = inner.next;
            inner.next += 1;
            match segment(self.dir.as_deref(), &self.replica, seq) {
                Ok(next) => {
                    let full = std::mem::replace(&mut inner.current, next);
                    inner.old.insert(full.seq, full);
                }
                // appends go on in this one
                Err(e) => tracing::warn!(error = %e, "could not start a record journal segment"),
            }
        }
        Ok(ticket)
    }

    /// `ticket`'s write is committed (or refused for a reason of its own): a segment left
    /// with none open is freed.
    pub fn done(&self, ticket: Ticket) {
        let mut guard = self.lock();
        let inner = &mut *guard;
        inner.rows = inner.rows.saturating_sub(1);
        if inner.current.seq == ticket.seq {
            let cur = &mut inner.current;
            cur.open = cur.open.saturating_sub(1);
            if cur.open == 0 {
                // everything in it is committed: it starts again empty
                inner.bytes = inner.bytes.saturating_sub(cur.bytes);
                cur.bytes = 0;
                cur.bodies.clear();
                cur.torn = false;
                if let Some((file, path)) = &cur.file {
                    if let Err(e) = file.set_len(0) {
                        tracing::warn!(error = %e, path = %path.display(), "could not truncate a record journal segment");
                    }
                }
            }
            return;
        }
        let Some(seg) = inner.old.get_mut(&ticket.seq) else {
            return;
        };
        seg.open = seg.open.saturating_sub(1);
        if seg.open == 0 {
            if let Some(seg) = inner.old.remove(&ticket.seq) {
                inner.bytes = inner.bytes.saturating_sub(seg.bytes);
                if let Some((_, path)) = &seg.file {
                    if let Err(e) = std::fs::remove_file(path) {
                        tracing::warn!(error = %e, path = %path.display(), "could not delete a record journal segment");
                    }
                }
            }
        }
    }
}

impl Drop for Journal {
    /// A replica that ends with every write committed leaves no file behind (one with
    /// writes not done leaves them for the next replica).
    fn drop(&mut self) {
        let inner = self.inner.get_mut().unwrap_or_else(|p| p.into_inner());
        for seg in std::iter::once(&inner.current).chain(inner.old.values()) {
            if let (0, Some((_, path))) = (seg.open, &seg.file) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// A new segment (its file created and locked, when on disk).
fn segment(dir: Option<&Path>, replica: &str, seq: u64) -> std::io::Result<Segment> {
    let file = match dir {
        None => None,
        Some(d) => {
            let path = d.join(format!("{replica}-{seq}.seg"));
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .read(true)
                .open(&path)?;
            file.try_lock()
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            Some((file, path))
        }
    };
    Ok(Segment {
        seq,
        file,
        bytes: 0,
        open: 0,
        bodies: HashSet::new(),
        torn: false,
    })
}

fn body_key(org: &OrgId, f: &Filled) -> String {
    format!("{} {}", org.as_str(), f.body.id())
}

/// A record call's fields, as journaled.
#[derive(Serialize, Deserialize)]
struct Call<'a> {
    id: Cow<'a, str>,
    agent: Cow<'a, str>,
    thread: Cow<'a, str>,
    caller: Cow<'a, str>,
    name: Cow<'a, str>,
    arguments: Cow<'a, str>,
}

impl<'a> Call<'a> {
    fn of(c: &'a NewCall) -> Self {
        Self {
            id: Cow::Borrowed(&c.id),
            agent: Cow::Borrowed(&c.agent_id),
            thread: Cow::Borrowed(&c.thread_id),
            caller: Cow::Borrowed(&c.caller),
            name: Cow::Borrowed(&c.name),
            arguments: Cow::Borrowed(&c.arguments),
        }
    }
    fn owned(self) -> NewCall {
        NewCall {
            id: self.id.into_owned(),
            agent_id: self.agent.into_owned(),
            thread_id: self.thread.into_owned(),
            caller: self.caller.into_owned(),
            name: self.name.into_owned(),
            arguments: self.arguments.into_owned(),
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
enum Out<'a> {
    Succeeded {
        text: Cow<'a, str>,
    },
    Filled {
        body: Cow<'a, str>,
        fill: Cow<'a, str>,
    },
    Failed {
        text: Cow<'a, str>,
    },
}

impl<'a> Out<'a> {
    fn of(o: &'a Outcome) -> Self {
        match o {
            Outcome::Succeeded(t) => Out::Succeeded {
                text: Cow::Borrowed(t),
            },
            Outcome::Filled(f) => Out::Filled {
                body: Cow::Borrowed(f.body.id()),
                fill: Cow::Borrowed(&f.fill),
            },
            Outcome::Failed(t) => Out::Failed {
                text: Cow::Borrowed(t),
            },
        }
    }
}

/// One journal line.
#[derive(Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
enum Entry<'a> {
    Body {
        org: Cow<'a, str>,
        id: Cow<'a, str>,
        parts: Vec<Cow<'a, str>>,
    },
    Start {
        org: Cow<'a, str>,
        call: Call<'a>,
        at: DateTime<Utc>,
    },
    Finish {
        org: Cow<'a, str>,
        id: Cow<'a, str>,
        out: Out<'a>,
        at: DateTime<Utc>,
    },
    Once {
        org: Cow<'a, str>,
        call: Call<'a>,
        out: Out<'a>,
        started: DateTime<Utc>,
        finished: DateTime<Utc>,
    },
}

fn body_entry<'a>(org: &'a OrgId, f: &'a Filled) -> Entry<'a> {
    Entry::Body {
        org: Cow::Borrowed(org.as_str()),
        id: Cow::Borrowed(f.body.id()),
        parts: f
            .body
            .parts()
            .iter()
            .map(|p| Cow::Borrowed(&p[..]))
            .collect(),
    }
}

impl<'a> Entry<'a> {
    fn of(w: &'a Write) -> Self {
        match w {
            Write::Start { org, call, at } => Entry::Start {
                org: Cow::Borrowed(org.as_str()),
                call: Call::of(call),
                at: *at,
            },
            Write::Finish {
                org,
                id,
                outcome,
                at,
            } => Entry::Finish {
                org: Cow::Borrowed(org.as_str()),
                id: Cow::Borrowed(id),
                out: Out::of(outcome),
                at: *at,
            },
            Write::Once {
                org,
                call,
                outcome,
                started_at,
                finished_at,
            } => Entry::Once {
                org: Cow::Borrowed(org.as_str()),
                call: Call::of(call),
                out: Out::of(outcome),
                started: *started_at,
                finished: *finished_at,
            },
        }
    }
}

/// CRC-32 of the line's JSON, in hex: it finds a line a kill cut short (a torn line, not
/// an attack: the journal is the replica's own file), at gigabytes a second.
fn checksum(json: &str) -> String {
    format!("{:08x}", crc32fast::hash(json.as_bytes()))
}

/// Appends `e` as one line to `out`.
fn line(out: &mut String, e: &Entry<'_>) {
    // serializing these types cannot fail (string keys, no maps of other keys)
    let json = serde_json::to_string(e).unwrap_or_default();
    out.push_str(&checksum(&json));
    out.push(' ');
    out.push_str(&json);
    out.push('\n');
}

/// What a segment held: its writes in order, and the lines skipped (torn or unreadable).
#[derive(Debug, Default)]
pub struct Read {
    pub writes: Vec<Write>,
    pub skipped: usize,
}

/// The writes in a segment's text, in order: a line whose checksum does not match, or the
/// last one if it has no `\n` (cut by a kill), is skipped, and so is a write naming a body
/// the segment does not hold.
pub fn parse(text: &str) -> Read {
    let mut out = Read::default();
    let mut bodies: HashMap<(String, String), Arc<Body>> = HashMap::new();
    let mut rest = text;
    while !rest.is_empty() {
        let Some(end) = rest.find('\n') else {
            out.skipped += 1;
            break;
        };
        let l = &rest[..end];
        rest = &rest[end + 1..];
        let Some((sum, json)) = l.split_once(' ') else {
            out.skipped += 1;
            continue;
        };
        if sum != checksum(json) {
            out.skipped += 1;
            continue;
        }
        let Ok(entry) = serde_json::from_str::<Entry<'_>>(json) else {
            out.skipped += 1;
            continue;
        };
        let outcome = |org: &str, out: Out<'_>, bodies: &HashMap<(String, String), Arc<Body>>| {
            Some(match out {
                Out::Succeeded { text } => Outcome::Succeeded(text.into_owned()),
                Out::Failed { text } => Outcome::Failed(text.into_owned()),
                Out::Filled { body, fill } => Outcome::Filled(Filled {
                    body: bodies.get(&(org.to_owned(), body.into_owned()))?.clone(),
                    fill: fill.into_owned(),
                    with_body: true,
                }),
            })
        };
        let w = match entry {
            Entry::Body { org, id, parts } => {
                let parts: Arc<[String]> = parts.into_iter().map(Cow::into_owned).collect();
                let body = Body::new(parts);
                if body.id() == id {
                    bodies.insert((org.into_owned(), id.into_owned()), Arc::new(body));
                } else {
                    out.skipped += 1;
                }
                continue;
            }
            Entry::Start { org, call, at } => Some(Write::Start {
                org: OrgId::trusted(org.into_owned()),
                call: call.owned(),
                at,
            }),
            Entry::Finish { org, id, out, at } => {
                outcome(&org, out, &bodies).map(|outcome| Write::Finish {
                    org: OrgId::trusted(org.into_owned()),
                    id: id.into_owned(),
                    outcome,
                    at,
                })
            }
            Entry::Once {
                org,
                call,
                out,
                started,
                finished,
            } => outcome(&org, out, &bodies).map(|outcome| Write::Once {
                org: OrgId::trusted(org.into_owned()),
                call: call.owned(),
                outcome,
                started_at: started,
                finished_at: finished,
            }),
        };
        match w {
            Some(w) => out.writes.push(w),
            None => out.skipped += 1,
        }
    }
    out
}

/// A segment of a replica that is gone, taken: its file stays locked (nobody else replays
/// it) until [`Orphan::forget`] deletes it, once its writes are journaled again.
pub struct Orphan {
    file: File,
    path: PathBuf,
    pub read: Read,
}

impl Orphan {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Deletes the segment (its writes are in the journal that replays them).
    pub fn forget(self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!(error = %e, path = %self.path.display(), "could not delete a replayed record journal segment");
        }
        drop(self.file);
    }
}

/// The segments in `dir` no live process holds (not this journal's own), taken and read,
/// oldest first (by modification time), at most `max` of them.
pub fn orphans(journal: &Journal, max: usize) -> Vec<Orphan> {
    let Some(dir) = journal.dir() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let own = format!("{}-", journal.replica);
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".seg") && !name.starts_with(&own)
        })
        .filter_map(|e| {
            let at = e.metadata().and_then(|m| m.modified()).ok()?;
            Some((at, e.path()))
        })
        .collect();
    found.sort();
    let mut out = Vec::new();
    for (_, path) in found {
        if out.len() == max {
            break;
        }
        let Ok(mut file) = OpenOptions::new().read(true).write(true).open(&path) else {
            continue;
        };
        // held: its replica lives
        if file.try_lock().is_err() {
            continue;
        }
        let mut text = String::new();
        if let Err(e) = file.read_to_string(&mut text) {
            // not UTF-8 throughout: read what is, line by line
            tracing::warn!(error = %e, path = %path.display(), "a record journal segment is damaged");
            let mut bytes = Vec::new();
            let _ = std::io::Seek::rewind(&mut file);
            let _ = file.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        out.push(Orphan {
            read: parse(&text),
            file,
            path,
        });
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn once(id: &str, outcome: Outcome) -> Write {
        Write::Once {
            org: OrgId::trusted("org_1"),
            call: NewCall {
                id: id.into(),
                agent_id: "agt_1".into(),
                thread_id: "thr_1".into(),
                caller: "u1".into(),
                name: "t".into(),
                arguments: "{\"a\":\"é\\n\"}".into(),
            },
            outcome,
            started_at: Utc::now(),
            finished_at: Utc::now(),
        }
    }

    fn filled(body: &Arc<Body>, fill: &str) -> Outcome {
        Outcome::Filled(Filled {
            body: body.clone(),
            fill: fill.into(),
            with_body: false,
        })
    }

    fn dir() -> PathBuf {
        std::env::temp_dir().join(crate::crypto::new_id("journal-test"))
    }

    fn ids(r: &Read) -> Vec<String> {
        r.writes
            .iter()
            .map(|w| match w {
                Write::Once { call, .. } | Write::Start { call, .. } => call.id.clone(),
                Write::Finish { id, .. } => id.clone(),
            })
            .collect()
    }

    /// K1: what a killed replica journaled is read back whole, bodies included; a torn
    /// last line (the kill cut it) and a line whose checksum fails are skipped, never read
    /// as half a write.
    #[test]
    fn k1_writes_read_back_and_a_torn_line_is_skipped() {
        let d = dir();
        let j = Journal::open(Some(&d), "rep_a", 1 << 20, 100).unwrap();
        let body = Arc::new(Body::new(vec!["{\"x\":".to_string(), "}".into()].into()));
        j.append(&once("call_1", Outcome::Succeeded("{\"ok\":1}".into())))
            .unwrap();
        j.append(&once("call_2", filled(&body, "\"r1\""))).unwrap();
        j.append(&once("call_3", filled(&body, "\"r2\""))).unwrap();
        let path = d.join("rep_a-0.seg");
        let text = std::fs::read_to_string(&path).unwrap();
        // the body is written once in the segment
        assert_eq!(text.matches("\"k\":\"body\"").count(), 1, "{text}");
        let r = parse(&text);
        assert_eq!(ids(&r), ["call_1", "call_2", "call_3"]);
        assert_eq!(r.skipped, 0);
        match &r.writes[2] {
            Write::Once {
                outcome: Outcome::Filled(f),
                call,
                ..
            } => {
                assert_eq!(f.body.id(), body.id());
                assert_eq!(f.fill, "\"r2\"");
                assert_eq!(call.arguments, "{\"a\":\"é\\n\"}");
            }
            _ => panic!("not filled"),
        }
        // torn: the last line lost its end
        let torn = &text[..text.len() - 7];
        let r = parse(torn);
        assert_eq!(ids(&r), ["call_1", "call_2"]);
        assert_eq!(r.skipped, 1);
        // a line whose bytes changed, with its `\n`: skipped by its checksum
        let mut lines: Vec<&str> = text.lines().collect();
        // (line 1 is the body's, line 2 call_2's)
        let changed = lines[2].replacen("call_", "call-", 1);
        lines[2] = &changed;
        let r = parse(&(lines.join("\n") + "\n"));
        assert_eq!(ids(&r), ["call_1", "call_3"]);
        assert_eq!(r.skipped, 1);
        // held by this journal: nobody replays it
        assert!(orphans(&Journal::open(Some(&d), "rep_b", 1 << 20, 100).unwrap(), 9).is_empty());
        drop(j);
        let b = Journal::open(Some(&d), "rep_b", 1 << 20, 100).unwrap();
        let taken = orphans(&b, 9);
        assert_eq!(taken.len(), 1);
        assert_eq!(ids(&taken[0].read), ["call_1", "call_2", "call_3"]);
        // taken: a third replica does not take it too
        let c = Journal::open(Some(&d), "rep_c", 1 << 20, 100).unwrap();
        assert!(orphans(&c, 9).is_empty());
        for o in taken {
            o.forget();
        }
        assert!(!path.exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    /// K1: segments are freed once their writes are done, and the bounds refuse a write
    /// that does not fit.
    #[test]
    fn k1_done_segments_are_freed_and_the_bounds_hold() {
        let d = dir();
        let j = Journal::open(Some(&d), "rep_a", 4 * SEGMENT_BYTES, 3).unwrap();
        let big = "x".repeat(SEGMENT_BYTES);
        let t1 = j
            .append(&once("call_1", Outcome::Succeeded(format!("\"{big}\""))))
            .unwrap();
        // the first segment is full: the next write starts a second one
        let t2 = j
            .append(&once("call_2", Outcome::Succeeded("1".into())))
            .unwrap();
        assert_ne!(t1.seq, t2.seq);
        let t3 = j
            .append(&once("call_3", Outcome::Succeeded("1".into())))
            .unwrap();
        assert!(matches!(
            j.append(&once("call_4", Outcome::Succeeded("1".into()))),
            Err(JournalError::Full { rows: 3, .. })
        ));
        assert_eq!(j.held().rows, 3);
        j.done(t1);
        assert!(!d.join("rep_a-0.seg").exists(), "a done segment is deleted");
        j.done(t2);
        j.done(t3);
        assert_eq!(j.held(), Held::default());
        let current = d.join("rep_a-1.seg");
        assert_eq!(std::fs::metadata(&current).unwrap().len(), 0, "truncated");
        drop(j);
        assert!(
            !current.exists(),
            "a journal that ends with nothing open leaves no file"
        );
        let _ = std::fs::remove_dir_all(&d);
        // in memory: bytes are the writes' sizes
        let m = Journal::in_memory("rep_m", 300, 10);
        let w = once("call_1", Outcome::Succeeded("1".into()));
        m.append(&w).unwrap();
        assert_eq!(m.held().bytes, w.bytes());
        assert!(m
            .append(&once("call_2", Outcome::Succeeded("2".repeat(200))))
            .is_err());
    }

    /// What journaling costs the request path (K1): the append of a cache hit's record (a
    /// reference to its body) and of a record with a 25 KB result, and freeing them.
    /// `cargo test -p loopgate --release --lib journal_append_cost -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn journal_append_cost() {
        let d = dir();
        let j = Journal::open(Some(&d), "rep_cost", 128 << 20, 50_000).unwrap();
        let body = Arc::new(Body::new(
            vec![
                "{\"items\":[".to_string() + &"x".repeat(30_000),
                "]}".into(),
            ]
            .into(),
        ));
        let hit = once("call_hitxxxxxxxxxxxxxxxxxx", filled(&body, "\"res_1\""));
        let big = once(
            "call_bigxxxxxxxxxxxxxxxxxx",
            Outcome::Succeeded(format!("{{\"r\":\"{}\"}}", "y".repeat(25_000))),
        );
        for (name, w, n) in [("cache hit", &hit, 20_000), ("25 KB result", &big, 2_000)] {
            let t = std::time::Instant::now();
            let mut tickets = Vec::with_capacity(64);
            for i in 0..n {
                tickets.push(j.append(w).unwrap());
                // freed in batches, as the writer commits them
                if i % 64 == 63 {
                    for t in tickets.drain(..) {
                        j.done(t);
                    }
                }
            }
            for t in tickets.drain(..) {
                j.done(t);
            }
            let per = t.elapsed() / n;
            eprintln!("journal append + done, {name}: {per:?} per write ({n} writes)");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
