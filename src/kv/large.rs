//! Values too large for one command, and the versioned values of the dataset cache: a
//! large value is written in pieces ([`PIECE_BYTES`]) under a key of its own and renamed
//! into place, read in pieces from a copy taken atomically, so the Redis client never
//! holds more than a few pieces of it and no reader sees half of one; a versioned value
//! keeps the one it replaces readable under `<key>#<version>`.

use std::time::{Duration, Instant};

use super::{ms, Kv, KvError, Op, PIECE_BYTES};

impl Kv {
    /// Writes `parts`, one after the other, as the value of `key` in Redis: `SET` of the
    /// first piece with its TTL, then `APPEND`s, each piece at most [`PIECE_BYTES`] and
    /// never concatenated, so the Redis client holds no more than a piece's copy (its
    /// command and the packed command) at a time. `false` when Redis did not take all of
    /// it; then no half value stays there.
    async fn set_in_pieces(&self, key: &str, parts: &[&str], ttl: Duration) -> bool {
        let mut pieces = parts.iter().flat_map(|p| p.as_bytes().chunks(PIECE_BYTES));
        let mut cmd = redis::cmd("SET");
        cmd.arg(key)
            .arg(pieces.next().unwrap_or_default())
            .arg("PX")
            .arg(ms(ttl));
        let mut stored = self.redis::<()>(Op::Cmd(&cmd)).await.is_some();
        for piece in pieces {
            if !stored {
                break;
            }
            let mut cmd = redis::cmd("APPEND");
            cmd.arg(key).arg(piece);
            stored = self.redis::<i64>(Op::Cmd(&cmd)).await.is_some();
        }
        if !stored && self.redis.is_some() {
            let mut cmd = redis::cmd("DEL");
            cmd.arg(key);
            let _ = self.redis::<()>(Op::Cmd(&cmd)).await;
        }
        stored
    }

    /// Writes `parts` in pieces under a key of their own beside `key`, so no reader of
    /// `key` sees half a value; that key's name once Redis took all of it.
    async fn stage(&self, key: &str, parts: &[&str], ttl: Duration) -> Option<String> {
        let staged = format!("{key}:writing:{}", crate::crypto::random_token(8));
        self.set_in_pieces(&staged, parts, ttl)
            .await
            .then_some(staged)
    }

    /// [`Kv::set`] of a large value in pieces ([`PIECE_BYTES`]), so the Redis client never
    /// holds more than a piece's copy of it. Written aside, then renamed into place: a
    /// reader of `key` (a result a resumed walk grows, P10) sees the old value or the
    /// whole new one. `true` when it is kept where every replica reads it (Redis, or this
    /// process when it is the only store); `false`: this process keeps it for Redis.
    pub async fn set_large(&self, key: &str, value: &str, ttl: Duration) -> Result<bool, KvError> {
        if let Some(staged) = self.stage(key, &[value], ttl).await {
            let mut pipe = redis::pipe();
            pipe.atomic()
                .cmd("RENAME")
                .arg(&staged)
                .arg(key)
                .ignore()
                .cmd("PEXPIRE")
                .arg(key)
                .arg(ms(ttl))
                .ignore();
            if self.redis::<()>(Op::Pipe(&pipe)).await.is_some() {
                self.local()?.entries.remove(key);
                return Ok(true);
            }
            self.del(&staged).await?;
        }
        // Redis did not take it: no older value stays there, the whole one is kept here
        self.del(key).await?;
        self.local()?.set(key, value.to_string(), ttl);
        Ok(self.redis.is_none())
    }

    /// [`Kv::set`] of a value given in `parts` (written one after the other, in pieces,
    /// never concatenated when large) whose first line is a version (digits), keeping the
    /// value it replaces readable under `<key>#<its version>` for at most `retire` (never
    /// longer than it had left): readers that hold the old version's pointer still find
    /// it. Atomic in Redis: a large value is written under a key of its own first, then a
    /// script retires the old value and renames the new one into place, so a reader sees
    /// the old value or the whole new one. `true` when it is kept where every replica
    /// reads it (as [`Kv::set_large`]).
    pub async fn set_versioned(
        &self,
        key: &str,
        parts: &[&str],
        ttl: Duration,
        retire: Duration,
    ) -> Result<bool, KvError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let published = if len <= PIECE_BYTES {
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(RETIRE_AND_PUT)
                .arg(1)
                .arg(key)
                .arg(ms(ttl))
                .arg(ms(retire))
                .arg(parts.concat());
            self.redis::<i64>(Op::Cmd(&cmd)).await.is_some()
        } else if let Some(staged) = self.stage(key, parts, ttl).await {
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(RETIRE_AND_PUT)
                .arg(2)
                .arg(key)
                .arg(&staged)
                .arg(ms(ttl))
                .arg(ms(retire));
            let renamed = self.redis::<i64>(Op::Cmd(&cmd)).await.is_some();
            if !renamed {
                self.del(&staged).await?;
            }
            renamed
        } else {
            false
        };
        if published {
            self.local()?.entries.remove(key);
            return Ok(true);
        }
        let mut m = self.local()?;
        if let Some((expires, old)) = m.entries.remove(key) {
            if let Some((version, _)) = old.split_once('\n') {
                let left = expires.saturating_duration_since(Instant::now());
                let old_key = format!("{key}#{version}");
                m.set(&old_key, old, left.min(retire));
            }
        }
        m.set(key, parts.concat(), ttl);
        Ok(self.redis.is_none())
    }

    /// [`Kv::get`] of a value that may be large (a stored result): a large one is read in
    /// pieces ([`PIECE_BYTES`]) from a copy taken atomically (so a value replaced meanwhile
    /// is read whole, old or new), because the Redis client's buffers grow to the largest
    /// reply and keep that size for the life of the connection. A small one is read in
    /// one round trip, as by `GET`.
    pub async fn get_large(&self, key: &str) -> Result<Option<String>, KvError> {
        let copy = format!("{key}:reading:{}", crate::crypto::random_token(8));
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(GET_OR_COPY)
            .arg(2)
            .arg(key)
            .arg(&copy)
            .arg(PIECE_BYTES)
            .arg(ms(self.budget * 120));
        let len = match self.redis::<redis::Value>(Op::Cmd(&cmd)).await {
            Some(redis::Value::BulkString(v)) => {
                return String::from_utf8(v)
                    .map(Some)
                    .map_err(|e| KvError(e.into()));
            }
            Some(redis::Value::Int(len)) => len as usize,
            // not in Redis (or Redis unreachable): maybe written here meanwhile (K2: read
            // only while Redis does not answer)
            _ if !self.standing_in() => return Ok(None),
            _ => return Ok(self.local()?.live(key).cloned()),
        };
        let mut bytes = Vec::with_capacity(len);
        while bytes.len() < len {
            let mut cmd = redis::cmd("GETRANGE");
            let end = (bytes.len() + PIECE_BYTES).min(len) - 1;
            cmd.arg(&copy).arg(bytes.len()).arg(end);
            match self.redis::<Vec<u8>>(Op::Cmd(&cmd)).await {
                Some(piece) if !piece.is_empty() => bytes.extend_from_slice(&piece),
                _ => break,
            }
        }
        self.del(&copy).await?;
        if bytes.len() < len {
            return Err(KvError(anyhow::anyhow!(
                "a stored value went away while it was read"
            )));
        }
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| KvError(e.into()))
    }
}

/// [`Kv::set_versioned`] in Redis: KEYS[1] the key; ARGV = ttl ms, retire ms, then the
/// value — or KEYS[2], the key the value was written under, renamed into place.
const RETIRE_AND_PUT: &str = r#"
local version = string.match(redis.call('GETRANGE', KEYS[1], 0, 24), '^(%d+)\n')
if version then
  local old = KEYS[1] .. '#' .. version
  local keep = tonumber(ARGV[2])
  local left = redis.call('PTTL', KEYS[1])
  if left > 0 and left < keep then keep = left end
  redis.call('RENAME', KEYS[1], old)
  redis.call('PEXPIRE', old, keep)
end
if KEYS[2] then
  redis.call('RENAME', KEYS[2], KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[1])
end
return 1
"#;

/// [`Kv::get_large`] in Redis: KEYS[1] the key, KEYS[2] where to copy it; ARGV = the
/// largest value returned as it is, the copy's TTL ms. The value (nil when absent), or
/// its length once copied.
const GET_OR_COPY: &str = r#"
local len = redis.call('STRLEN', KEYS[1])
if len <= tonumber(ARGV[1]) then
  return redis.call('GET', KEYS[1])
end
redis.call('COPY', KEYS[1], KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return len
"#;

#[cfg(test)]
mod tests {
    use super::super::{connect, TEST_BUDGET, TEST_RESULT_TTL};
    use super::*;
    use std::cell::Cell;

    /// P10, G4: a large value rewritten (a result a resumed walk grows) is never read half
    /// written: every read while its pieces go in sees the old value or the whole new one.
    #[tokio::test]
    async fn g4_a_large_value_is_replaced_whole() {
        let kv = Kv::new(
            crate::testing::redis_url().and_then(|u| connect(&u, TEST_BUDGET).ok()),
            None,
            TEST_BUDGET,
            TEST_RESULT_TTL,
        );
        let key = format!("lg:org_test:t:res:{}", crate::crypto::random_token(12));
        let ttl = Duration::from_secs(60);
        let old = "o".repeat(PIECE_BYTES + 1);
        let new = "n".repeat(4 * PIECE_BYTES + 1);
        kv.set_large(&key, &old, ttl).await.unwrap();
        let done = Cell::new(false);
        let write = async {
            kv.set_large(&key, &new, ttl).await.unwrap();
            done.set(true);
        };
        let read = async {
            let mut reads = 0;
            while !done.get() {
                let v = kv.get(&key).await.unwrap().unwrap_or_default();
                assert!(v == old || v == new, "read {} bytes", v.len());
                reads += 1;
            }
            reads
        };
        let ((), reads) = tokio::join!(write, read);
        // the in-process store writes without yielding, so only Redis interleaves reads
        if std::env::var("REDIS_URL").is_ok() {
            assert!(reads > 0);
        }
        assert!(kv.get(&key).await.unwrap() == Some(new));
    }

    /// G4: a large stored result is read whole while it is replaced, and reading it leaves
    /// the Redis client's buffers no larger than a few pieces (a plain `GET` of N bytes
    /// keeps about N in the connection for good).
    #[tokio::test]
    async fn g4_a_large_value_is_read_in_pieces_whole() {
        let Some(url) = crate::testing::redis_url() else {
            return; // the in-process store holds no client buffers
        };
        let kv = Kv::new(
            connect(&url, TEST_BUDGET).ok(),
            None,
            TEST_BUDGET,
            TEST_RESULT_TTL,
        );
        let key = format!("lg:org_test:t:res:{}", crate::crypto::random_token(12));
        let ttl = Duration::from_secs(60);
        let (old, new) = ("o".repeat(7 * PIECE_BYTES + 3), "n".repeat(5 * PIECE_BYTES));
        kv.set_large(&key, &old, ttl).await.unwrap(); // (connected, and no large reply read)
        let mark = loopgate_engine::testing::Mark::now();
        let got = kv.get_large(&key).await.unwrap().unwrap();
        let used = mark.usage();
        assert!(got == old);
        let bound = old.len() as isize + 4 * PIECE_BYTES as isize;
        assert!(used.peak <= bound && used.kept <= bound, "{used:?}");
        drop(got);
        let write = kv.set_large(&key, &new, ttl);
        let read = kv.get_large(&key);
        let (w, r) = tokio::join!(write, read);
        w.unwrap();
        let r = r.unwrap().unwrap();
        assert!(r == old || r == new, "read {} bytes", r.len());
        assert_eq!(kv.get_large("lg:org_test:t:res:none").await.unwrap(), None);
        assert_eq!(
            kv.get_large(&key).await.unwrap().map(|v| v.len()),
            Some(new.len())
        );
    }
}
