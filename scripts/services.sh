#!/usr/bin/env bash
# Brings up a project-local PostgreSQL (from the machine's own binaries) and, when
# available, a project-local Redis. Idempotent: a running instance is reused.
# Source it (`. scripts/services.sh`) to get DATABASE_URL / REDIS_URL exported.
# Two Postgres profiles: `test` (the default: fsync off, for throwaway test databases)
# and `durable` (LOOPGATE_PG_PROFILE=durable, used by scripts/run: Postgres' own safe
# defaults), each its own cluster. Folders live under .data/ (git-ignored). Postgres
# refuses to run as root, so as root it runs as the `postgres` OS user on folders that
# user owns; when that user cannot reach .data/ (a clone under a private home such as
# /root, mode 700), the cluster lives in /var/tmp/loopgate-<hash of this folder>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${LOOPGATE_DATA_DIR:-$ROOT/.data}"
PG_PORT="${LOOPGATE_PG_PORT:-54329}"
REDIS_PORT="${LOOPGATE_REDIS_PORT:-63799}"
mkdir -p "$DATA"

pg_bin() {
  local d; d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$d" ] && command -v pg_ctl >/dev/null 2>&1; then d=$(dirname "$(readlink -f "$(command -v pg_ctl)")"); fi
  if [ -z "$d" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing postgresql (apt-get)..." >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  fi
  [ -n "$d" ] || { echo "PostgreSQL binaries not found: install PostgreSQL 15+ or set DATABASE_URL" >&2; exit 1; }
  echo "$d"
}

# First free TCP port on 127.0.0.1 from $1 on (a port held by another program is skipped).
free_port() {
  local p=$1
  while (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

# Runs a Postgres tool as the postgres OS user when root (from /, which it can enter).
as_pg() {
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# Where the clusters live: .data/, or as root a folder the postgres user can reach.
pg_base() {
  if [ "$(id -u)" != 0 ] || runuser -u postgres -- test -x "$DATA" 2>/dev/null; then
    echo "$DATA"
    return
  fi
  local base
  base="/var/tmp/loopgate-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)"
  mkdir -p "$base"
  chown postgres "$base"
  chmod 700 "$base"
  echo "$base"
}

start_postgres() {
  local bin base pgdata sock profile unsafe=""
  bin="$(pg_bin)"
  profile="${LOOPGATE_PG_PROFILE:-test}"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /var/lib/postgresql postgres
  fi
  base="$(pg_base)"
  case "$profile" in
    test)
      pgdata="$base/pg"
      unsafe="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
      ;;
    durable) pgdata="$base/pg-run"; PG_PORT="${LOOPGATE_PG_PORT:-54339}" ;;
    *) echo "LOOPGATE_PG_PROFILE must be test or durable, not $profile" >&2; exit 1 ;;
  esac
  sock="$pgdata-sock"
  mkdir -p "$pgdata" "$sock"
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres "$pgdata" "$sock"
  fi
  chmod 700 "$pgdata"
  if [ ! -f "$pgdata/PG_VERSION" ]; then
    local nosync=""
    [ "$profile" = test ] && nosync="--no-sync"
    as_pg "$bin/initdb" -D "$pgdata" --auth=trust --username=postgres $nosync >/dev/null
  fi
  if as_pg "$bin/pg_ctl" -D "$pgdata" status >/dev/null 2>&1; then
    # already running: its port is line 4 of postmaster.pid
    PG_PORT=$(sed -n 4p "$pgdata/postmaster.pid")
  else
    PG_PORT=$(free_port "$PG_PORT")
    if ! as_pg "$bin/pg_ctl" -D "$pgdata" -l "$pgdata/server.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $sock $unsafe -c max_connections=400" \
      start >/dev/null; then
      echo "PostgreSQL did not start; its log:" >&2
      tail -n 20 "$pgdata/server.log" >&2
      exit 1
    fi
  fi
  as_pg "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='loopgate'" | grep -q 1 \
    || as_pg "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres loopgate
  export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/loopgate"
}

start_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ "${LOOPGATE_INSTALL_REDIS:-1}" = 1 ]; then
      echo "installing redis-server (apt-get)..." >&2
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) >&2 || true
    fi
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "redis-server not available: using the in-process store" >&2
    return 0
  fi
  # K5: the durable profile (scripts/run) keeps Redis' data across its restarts: an
  # append-only file fsynced every second, in a folder of its own (a restart loses at most
  # the last second of writes); the test profile keeps nothing
  local rdir="$DATA" rport_file="$DATA/redis.port" persist=(--save '' --appendonly no)
  if [ "${LOOPGATE_PG_PROFILE:-test}" = durable ]; then
    rdir="$DATA/redis-run"; rport_file="$DATA/redis-run.port"
    persist=(--save '' --appendonly yes --appendfsync everysec)
    REDIS_PORT="${LOOPGATE_REDIS_PORT:-63809}"
    mkdir -p "$rdir"
  fi
  if [ -f "$rport_file" ] && redis-cli -p "$(cat "$rport_file")" ping >/dev/null 2>&1; then
    REDIS_PORT=$(cat "$rport_file")
  else
    REDIS_PORT=$(free_port "$REDIS_PORT")
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 "${persist[@]}" \
      --daemonize yes --logfile "$rdir/redis.log" --dir "$rdir" >/dev/null
    for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
    if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
      echo "Redis did not answer on port $REDIS_PORT within 5 s; its log:" >&2
      tail -n 20 "$rdir/redis.log" >&2
      exit 1
    fi
    echo "$REDIS_PORT" >"$rport_file"
  fi
  export REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
}

if [ -z "${DATABASE_URL:-}" ]; then start_postgres; fi
if [ -z "${REDIS_URL:-}" ] && [ "${LOOPGATE_NO_REDIS:-0}" != 1 ]; then start_redis; fi
