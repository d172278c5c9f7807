//! The Lua scripts behind [`super::Shared`]: each is one atomic `EVAL` on Redis' own
//! clock (`TIME`, microseconds). Numbers are written with `%.0f` because Lua's default
//! number formatting keeps only 14 significant digits.

/// GCRA (generic cell rate algorithm), leasing. KEYS[1]: the quota; ARGV[1]: emission
/// interval (µs); ARGV[2]: burst; ARGV[3]: permits wanted. Stores the theoretical arrival
/// time. Returns how many permits were granted (1..=wanted: as many as conform now, each
/// as if requested at this instant, and records them), else minus the µs until one
/// conforms (recording nothing).
pub const GCRA: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = interval * (tonumber(ARGV[2]) - 1)
local tat = now
local stored = redis.call('GET', KEYS[1])
if stored then tat = math.max(tonumber(stored), now) end
if tat - now > tolerance then return -(tat - tolerance - now) end
local n = math.min(tonumber(ARGV[3]), math.floor((tolerance - (tat - now)) / interval) + 1)
local nxt = tat + n * interval
redis.call('SET', KEYS[1], string.format('%.0f', nxt), 'PX', math.ceil((nxt - now) / 1000) + 1)
return n
"#;

/// Leased slots. KEYS[1]: a sorted set member → lease end (µs); ARGV[1]: member;
/// ARGV[2]: max; ARGV[3]: lease (µs). Drops expired leases, then returns how many slots
/// are held once the member got one (1..=max), 0 when all are taken.
pub const SLOT: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
local lease = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], string.format('%.0f', now + lease), ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.ceil(lease / 1000))
return redis.call('ZCARD', KEYS[1])
"#;
