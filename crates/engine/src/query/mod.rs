//! Questions asked of a stored result (G4, Q1): `queryToolResult` and `fetchToolResult`
//! over the rows a walk kept, and the aggregates computed over them.

pub mod aggregate;
pub mod by_reference;
pub mod retrieval;
