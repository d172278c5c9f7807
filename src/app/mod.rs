//! The process: building the application from its settings (the HTTP server over a
//! listener, so tests bind port 0) and the background retention job.

pub mod retention;
pub mod startup;
