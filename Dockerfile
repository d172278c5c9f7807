# syntax=docker/dockerfile:1
#
# loopgate: multi-stage build. The builder compiles the release binary; the runtime image
# is debian:bookworm-slim with CA certificates and an unprivileged user (uid/gid 10001).
#
#   docker build -t loopgate:0.1.0 .
#   docker run --rm -p 8080:8080 -e DATABASE_URL=... -e LOOPGATE_ADMIN_TOKEN=... \
#     -e LOOPGATE_CREDENTIAL_KEY=... -e LOOPGATE_TOKEN_SIGNING_KEY=... loopgate:0.1.0

FROM rust:1.95-bookworm AS builder
WORKDIR /src
COPY . .
# Cache mounts keep the registry and target dir between builds (BuildKit); the binary is
# copied out of the cached target dir in the same step.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/usr/local/cargo/git \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin loopgate \
 && install -m 0755 target/release/loopgate /usr/local/bin/loopgate

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 loopgate \
 && useradd --system --uid 10001 --gid loopgate --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin loopgate
COPY --from=builder /usr/local/bin/loopgate /usr/local/bin/loopgate
WORKDIR /app
ENV LOOPGATE_BIND=0.0.0.0:8080 \
    RUST_LOG=info
EXPOSE 8080
# Numeric uid so Kubernetes can verify runAsNonRoot.
USER 10001:10001
ENTRYPOINT ["loopgate"]
CMD ["serve"]
