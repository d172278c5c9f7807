-- Issue 27: whether upstream requests to a provider carry the W3C trace context
-- (`traceparent`, `tracestate`) of the call, so its own tracing joins the trace. Off by
-- default: the header tells an upstream nothing secret, but it is the provider's choice.
ALTER TABLE providers ADD COLUMN propagate_trace_context BOOLEAN NOT NULL DEFAULT false;
