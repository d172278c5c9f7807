//! Ids and names that come from outside — a path parameter, a query value, an id a tool
//! takes as an argument (`resultId`, `_continue`, a tool's name) — hold no control
//! character (U+0000–U+001F, U+007F–U+009F). Postgres cannot store U+0000 in `text`, so an
//! id holding one used to reach a store and fail there as if the store were down (`503`);
//! checked here, once, where the id enters, it is a `4xx` naming the id instead. No id
//! loopgate issues or accepts holds one.

/// Why an id was refused: which id, and the first control character in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadId {
    /// The id's name as the caller wrote it (`thread_id`, `resultId`).
    pub what: String,
    /// The first control character.
    pub found: char,
    /// Its position, in characters from 0.
    pub at: usize,
}

impl std::fmt::Display for BadId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` must not contain control characters (U+0000–U+001F, U+007F–U+009F); \
             it holds U+{:04X} at character {}",
            self.what, self.found as u32, self.at
        )
    }
}

/// `Ok` when `value` holds no control character, else which one and where.
pub fn check_id(what: &str, value: &str) -> Result<(), BadId> {
    match value.chars().enumerate().find(|(_, c)| c.is_control()) {
        None => Ok(()),
        Some((at, found)) => Err(BadId {
            what: what.to_string(),
            found,
            at,
        }),
    }
}

/// The arguments of a tool call that name something loopgate keeps (a stored result, a
/// continuation, a tool, a toolkit): each, when a string or a list of strings, goes
/// through [`check_id`]. A tool's own arguments are the upstream's business and free.
pub const ID_ARGUMENTS: [&str; 6] = [
    "resultId",
    "_resultId",
    "_continue",
    "toolkit",
    "toolName",
    "toolNames",
];

/// [`check_id`] over the [`ID_ARGUMENTS`] present in `args` (an object; anything else
/// holds none): one pass over strings the capped request body already holds.
pub fn check_id_arguments(args: &serde_json::Value) -> Result<(), BadId> {
    for key in ID_ARGUMENTS {
        match args.get(key) {
            Some(serde_json::Value::String(s)) => check_id(key, s)?,
            Some(serde_json::Value::Array(list)) => {
                for s in list.iter().filter_map(serde_json::Value::as_str) {
                    check_id(key, s)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn an_id_with_nul_is_refused_naming_it() {
        let e = check_id("resultId", "res_\u{0}").unwrap_err();
        assert_eq!((e.found, e.at), ('\u{0}', 4));
        assert!(e.to_string().contains("`resultId`"), "{e}");
        assert!(e.to_string().contains("U+0000 at character 4"), "{e}");
        assert!(check_id("x", "res_0123abcDEF-_.~ é 日本").is_ok());
    }

    #[test]
    fn the_id_arguments_are_checked_and_nothing_else() {
        assert!(check_id_arguments(&json!({"resultId": "res_\u{7f}"})).is_err());
        assert!(check_id_arguments(&json!({"toolNames": ["a", "b\u{1b}"]})).is_err());
        assert!(check_id_arguments(&json!({"_continue": "cont\n"})).is_err());
        // a tool's own argument may hold a newline
        assert!(check_id_arguments(&json!({"body": "line 1\nline 2"})).is_ok());
        assert!(check_id_arguments(&json!("res_\u{0}")).is_ok());
    }

    proptest! {
        /// Any string with a control character anywhere is refused, at its first one;
        /// any string without one passes.
        #[test]
        fn every_control_character_anywhere_is_refused(
            head in "[^\\p{Cc}]{0,12}",
            bad in prop::sample::select(
                (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32).collect::<Vec<_>>()
            ),
            tail in "\\PC{0,12}",
        ) {
            let id = format!("{head}{bad}{tail}");
            let e = check_id("id", &id).unwrap_err();
            prop_assert_eq!(e.found, bad);
            prop_assert_eq!(e.at, head.chars().count());
            let clean = format!("{head}{tail}");
            prop_assert!(check_id("id", &clean).is_ok());
        }
    }
}
