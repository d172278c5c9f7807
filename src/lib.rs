//! loopgate library.
