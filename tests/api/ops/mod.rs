//! Operating the service: the Grafana dashboard against the real `/metrics`, traces
//! exported to an OTLP receiver the test runs, JSON log lines of a call, the audit trail
//! (in `studio::audit`).

pub mod dashboard;
pub mod otlp_receiver;
pub mod traces;
