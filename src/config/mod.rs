//! Configuration: the one [`Settings`](settings::Settings) struct (defaults, then an
//! optional file, then `LOOPGATE_*` variables, validated at start) and the engine bounds
//! derived from it.

pub mod bounds;
pub mod limit_defaults;
pub mod settings;
