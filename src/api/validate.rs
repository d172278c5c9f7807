//! Input rules shared by handlers: the Studio's own (`studio::validate`), re-exported
//! where handlers expect them.

pub use crate::studio::validate::{absolute_url, base_url, double_option, endpoint_url, name};
