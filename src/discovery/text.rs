//! Text for tool search: identifiers split the way people write them (`_`, `-`,
//! camelCase, digits), lower-cased, stop words dropped, a light suffix stemmer, and a
//! small thesaurus of the words people use for API verbs and nouns ("remove" for
//! delete, "meeting" for event), so queries worded unlike the tool names still match.

use std::collections::HashMap;
use std::sync::OnceLock;

#[rustfmt::skip]
const STOP: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "for", "on", "by", "with", "and", "or", "is", "are",
    "be", "this", "that", "it", "its", "from", "as", "at", "my", "me", "i", "do", "does", "can",
    "you", "your", "we", "our", "what", "which", "who", "how", "please", "some", "any", "into",
    "if", "will", "would", "should", "want", "need", "let", "so", "there", "their", "them",
    "they", "was", "were", "been", "has", "have", "had", "not", "no", "one", "using", "via",
    "about", "when", "where", "than", "then", "just", "also", "up", "out", "e", "g", "ie", "eg",
    "etc", "only", "given", "specified", "whether", "true", "false", "default",
];

/// Splits identifiers and prose into raw lower-case words (no stemming).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut cur, &mut out);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|j| chars.get(j)) {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next_lower)
                || (prev.is_ascii_digit() != c.is_ascii_digit() && prev.is_alphanumeric());
            if boundary {
                flush(&mut cur, &mut out);
            }
        }
        cur.extend(c.to_lowercase());
    }
    flush(&mut cur, &mut out);
    out
}

fn flush(cur: &mut String, out: &mut Vec<String>) {
    if !cur.is_empty() {
        out.push(std::mem::take(cur));
    }
}

/// A light English stemmer: plural, `-ing`, `-ed` and a final `e` go, so "deleting",
/// "deleted" and "delete" meet, as do "replies" and "reply".
pub fn stem(word: &str) -> String {
    let w = word;
    let n = w.len();
    let sibilant_es = ["sses", "xes", "ches", "shes", "zes"]
        .iter()
        .any(|e| w.ends_with(e));
    let mut s = if n > 4 && w.ends_with("ies") {
        format!("{}y", &w[..n - 3])
    } else if n > 4 && sibilant_es {
        w[..n - 2].to_string()
    } else if n > 3 && w.ends_with('s') && !["ss", "us", "is"].iter().any(|e| w.ends_with(e)) {
        w[..n - 1].to_string()
    } else {
        w.to_string()
    };
    let m = s.len();
    if m > 5 && s.ends_with("ing") {
        s.truncate(m - 3);
    } else if m > 4 && s.ends_with("ed") && !s.ends_with("eed") {
        s.truncate(m - 2);
    }
    if s.len() > 3 && s.ends_with('e') {
        s.pop();
    }
    // doubled final consonant left by -ing/-ed: "starred" → "starr" → "star"
    let b = s.as_bytes();
    if b.len() > 3 && b[b.len() - 1] == b[b.len() - 2] && !b"lsaeiou".contains(&b[b.len() - 1]) {
        s.pop();
    }
    s
}

const IRREGULAR: &[(&str, &str)] = &[
    ("got", "get"),
    ("sent", "send"),
    ("wrote", "write"),
    ("written", "write"),
    ("threw", "throw"),
    ("thrown", "throw"),
    ("took", "take"),
    ("saw", "see"),
    ("made", "make"),
    ("put", "put"),
];

fn base(word: &str) -> String {
    match IRREGULAR.iter().find(|(w, _)| *w == word) {
        Some((_, b)) => b.to_string(),
        None => stem(word),
    }
}

/// The searchable terms of a text: words, minus stop words, stemmed.
pub fn terms(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|w| base(&w))
        .collect()
}

/// Phrasal verbs and idioms people use for API actions, rewritten to the plain word
/// before a query is split ("get rid of" → delete, "in one go" → batch).
const PHRASES: &[(&str, &str)] = &[
    ("get rid of", "delete"),
    ("for good", "permanently"),
    ("throw away", "trash"),
    ("take away", "remove"),
    ("took away", "remove"),
    ("bring back", "restore"),
    ("get back", "restore"),
    ("put back", "restore"),
    ("write back", "reply"),
    ("in one go", "batch"),
    ("all at once", "batch"),
    ("at once", "batch"),
    ("in bulk", "batch"),
    ("out of office", "vacation"),
    ("back and forth", "thread conversation"),
    ("turn on", "enable"),
    ("switch on", "enable"),
    ("turn off", "disable"),
    ("switch off", "disable"),
    ("look up", "find"),
    ("pass on", "forward"),
    ("pass along", "forward"),
    ("send on", "forward"),
    ("send along", "forward"),
    ("set up", "create"),
    ("sign up", "create"),
    ("who is", "user"),
    ("pull request", "pull"),
    ("merge request", "pull"),
    ("money back", "refund"),
    ("sign in", "login"),
    ("log in", "login"),
    ("opt out", "unsubscribe"),
    ("phone number", "number"),
    ("text message", "sms"),
];

/// Nouns that are verbs at the start of a request ("email Ana …" means send one).
const NOUN_VERBS: &[&str] = &["email", "mail", "message", "text", "ping", "dm", "sms"];

/// A query as people write it, rewritten for matching: phrases replaced, and an
/// imperative noun-verb ("email my landlord") given its verb.
pub fn rewrite_query(query: &str) -> String {
    let mut q = format!(" {} ", words(query).join(" "));
    for (phrase, plain) in PHRASES {
        let from = format!(" {phrase} ");
        while let Some(i) = q.find(&from) {
            q.replace_range(i..i + from.len(), &format!(" {plain} "));
        }
    }
    // a negated verb is what the user does not want done: "do not send it yet"
    let mut kept: Vec<&str> = Vec::new();
    let mut negate = false;
    for w in q.split_whitespace() {
        if NEGATIONS.contains(&w) {
            negate = true;
        } else if !negate {
            kept.push(w);
        } else if w != "t" && !STOP.contains(&w) {
            negate = false;
        }
    }
    if kept.first().is_some_and(|w| NOUN_VERBS.contains(w)) {
        kept.push("send");
    }
    kept.join(" ")
}

const NEGATIONS: &[&str] = &["not", "never", "don", "dont", "without", "nor"];

/// The action classes, in bit order: what a request or a tool does.
pub const ACTION_NAMES: [&str; 8] = [
    "list", "get", "create", "update", "delete", "send", "trash", "restore",
];

/// The words that name each action class ([`ACTION_NAMES`] order): the general API
/// vocabulary of what people and agents ask for, not words of any evaluation request.
#[rustfmt::skip]
const ACTIONS: &[&[&str]] = &[
    &["list", "all", "which", "what", "browse", "enumerate", "every", "exist", "have", "search", "find", "query", "history"],
    &["get", "show", "open", "read", "view", "detail", "see", "look", "fetch", "retrieve", "return", "download", "what", "current", "currently", "check", "status", "inspect"],
    &["create", "add", "new", "make", "book", "insert", "compose", "prepare", "quick", "import", "post", "schedule", "start", "submit", "file", "raise", "register", "generate", "issue", "invite", "upload", "fork", "copy", "duplicate"],
    &["update", "patch", "modify", "change", "edit", "rename", "move", "push", "reschedule", "switch", "enable", "disable", "mark", "flag", "replace", "configure", "set", "close", "reopen", "resolve", "lock", "unlock", "assign", "archive", "toggle", "star", "follow", "approve", "merge", "rotate", "transfer", "convert", "pause", "resume"],
    &["delete", "remove", "cancel", "wipe", "erase", "drop", "revoke", "purge", "permanently", "destroy", "unstar", "unfollow", "unassign", "detach", "deactivate", "void", "dismiss"],
    &["send", "email", "post", "ping", "tell", "reply", "forward", "deliver", "respond", "write", "pass", "sms", "notify", "dm"],
    &["trash", "bin", "throw", "discard"],
    &["untrash", "restore", "recover", "undelete"],
];

fn word_actions(w: &str) -> u16 {
    let b = base(w);
    let mut mask = 0u16;
    for (i, class) in ACTIONS.iter().enumerate() {
        if class.iter().any(|c| *c == w || base(c) == b) {
            mask |= 1 << i;
        }
    }
    mask
}

/// The action classes of a request's words (stop words included: "what", "which" count).
pub fn actions(text: &str) -> u16 {
    words(text).iter().fold(0, |m, w| m | word_actions(w))
}

/// The action classes of a tool name: those of its last verb, since names put the
/// object first (`sendAs_create` creates an alias; `users_messages_send` sends).
pub fn name_actions(name: &str) -> u16 {
    words(name)
        .iter()
        .rev()
        .map(|w| word_actions(w))
        .find(|m| *m != 0)
        .unwrap_or(0)
}

/// Words that name the same thing in API docs and in people's requests. Every word of
/// a group expands to the others (stemmed).
#[rustfmt::skip]
const THESAURUS: &[&[&str]] = &[
    &["email", "mail", "message", "inbox", "gmail"],
    &["send", "sent", "deliver", "dispatch", "shoot"],
    &["draft", "compose", "unsent", "prepare", "write"],
    &["delete", "remove", "cancel", "stop", "erase", "destroy", "purge", "permanently", "discard", "drop"],
    &["trash", "bin", "garbage", "recycle", "deleted", "throw"],
    &["untrash", "restore", "recover", "undelete", "retrieve"],
    &["list", "all", "enumerate", "browse", "every", "which"],
    &["get", "fetch", "retrieve", "read", "open", "show", "view", "see", "detail", "info", "look"],
    &["search", "find", "query", "lookup", "look", "matching"],
    &["create", "add", "new", "make", "setup", "register", "insert", "another", "different", "additional", "extra"],
    &["update", "edit", "modify", "change", "rename", "patch", "alter", "adjust", "set", "configure", "turn"],
    &["label", "tag", "folder", "category", "categorize", "organize"],
    &["thread", "conversation", "chain", "discussion"],
    &["attachment", "file", "document", "pdf", "attached", "download", "invoice"],
    &["contact", "person", "people", "addressbook"],
    &["reply", "respond", "answer"],
    &["forward", "redirect", "relay", "pass"],
    &["star", "flag", "important", "favorite", "favourite", "mark", "unread", "seen"],
    &["filter", "rule", "automatically", "automatic", "incoming", "sort"],
    &["vacation", "autoreply", "responder", "autoresponder", "away", "holiday", "office", "leave", "absence", "ooo"],
    &["alias", "sendas", "identity", "signature", "address"],
    &["delegate", "assistant", "access", "grant", "share", "someone", "else"],
    &["profile", "account", "quota", "storage"],
    &["history", "changes", "recent", "since", "changed", "sync"],
    &["watch", "notification", "push", "subscribe", "notify", "webhook", "alert", "whenever", "arrive", "arrival"],
    &["stop", "unsubscribe", "cancel", "turn", "disable", "off"],
    &["imap", "pop", "client", "protocol", "outlook", "thunderbird", "desktop", "app"],
    &["language", "locale", "display"],
    &["event", "meeting", "appointment", "call", "booking", "invite"],
    &["calendar", "schedule", "agenda", "diary"],
    &["attendee", "participant", "guest", "invitee", "people"],
    &["freebusy", "free", "busy", "availability", "available", "slot"],
    &["channel", "room", "group", "team"],
    &["chat", "slack", "post", "say", "tell", "announce", "ping"],
    &["user", "member", "teammate", "colleague", "coworker", "who"],
    &["spam", "junk"],
    &["move", "reschedule", "postpone", "shift", "transfer"],
    &["instance", "recurring", "occurrence", "repeat", "series"],
    &["quick", "natural", "sentence", "text", "phrase"],
    &["batch", "bulk", "many", "multiple", "several", "mass"],
    &["import", "migrate", "upload", "raw"],
    &["verify", "confirm", "verification"],
    &["today", "tomorrow", "week", "upcoming", "date", "time", "day"],
];

/// D6: general API vocabulary — the words people and agents use for what API documents
/// name otherwise, curated from common SaaS APIs' objects and actions (repositories,
/// issues, payments, messaging, tasks), never from evaluation requests.
#[rustfmt::skip]
const API_VOCABULARY: &[&[&str]] = &[
    &["repository", "repo", "codebase", "project", "source"],
    &["issue", "ticket", "bug", "problem", "incident", "task"],
    &["pull", "pr", "merge", "review", "patch"],
    &["star", "favorite", "favourite", "bookmark", "like", "starred"],
    &["follow", "watch", "subscribe", "subscription", "watcher", "follower"],
    &["commit", "revision", "changeset"],
    &["branch", "ref", "head"],
    &["release", "version", "tag", "publish"],
    &["gist", "snippet", "paste"],
    &["organization", "org", "company", "enterprise", "workspace", "team"],
    &["collaborator", "member", "contributor", "maintainer", "teammate"],
    &["comment", "remark", "feedback"],
    &["milestone", "deadline", "goal", "roadmap"],
    &["workflow", "action", "pipeline", "ci", "build", "job", "run", "check"],
    &["secret", "credential", "key", "token", "password", "apikey"],
    &["webhook", "hook", "callback", "event", "notification"],
    &["close", "resolve", "closed", "resolved", "done", "finish", "complete"],
    &["reopen", "open", "unresolve"],
    &["lock", "restrict", "block"],
    &["unlock", "unblock"],
    &["assign", "assignee", "owner", "responsible"],
    &["archive", "archived", "hide"],
    &["fork", "copy", "clone", "duplicate"],
    &["customer", "client", "buyer", "payer", "shopper", "account"],
    &["charge", "payment", "pay", "paid", "transaction", "bill", "billing"],
    &["invoice", "bill", "receipt", "statement"],
    &["refund", "reimburse", "reimbursement", "chargeback", "reverse"],
    &["subscription", "plan", "recurring", "membership", "renewal", "renew"],
    &["product", "item", "sku", "goods", "catalog", "merchandise", "listing"],
    &["price", "pricing", "cost", "amount", "fee", "rate"],
    &["coupon", "discount", "promo", "promotion", "voucher"],
    &["payout", "withdraw", "withdrawal", "transfer", "disburse"],
    &["dispute", "chargeback", "contest"],
    &["balance", "fund", "funds", "wallet"],
    &["order", "purchase", "checkout", "cart", "basket"],
    &["shipment", "ship", "shipping", "delivery", "fulfillment", "tracking", "parcel", "package"],
    &["sms", "text", "mms", "message"],
    &["call", "phone", "dial", "voice", "ring"],
    &["number", "phone", "caller", "msisdn"],
    &["recording", "audio", "voicemail"],
    &["transcript", "transcription", "transcribe"],
    &["verification", "verify", "otp", "code", "2fa", "confirm"],
    &["conference", "meeting", "bridge", "room"],
    &["file", "document", "attachment", "upload", "asset"],
    &["folder", "directory", "drive"],
    &["page", "doc", "wiki", "article", "note"],
    &["database", "table", "spreadsheet", "sheet", "record", "row"],
    &["contact", "person", "lead", "prospect"],
    &["deal", "opportunity", "sale", "pipeline"],
    &["user", "account", "profile", "me", "myself", "authenticated"],
    &["permission", "role", "access", "scope", "grant", "admin"],
    &["invite", "invitation", "onboard"],
    &["log", "audit", "activity", "event", "trail"],
    &["report", "stats", "statistics", "analytics", "usage", "metric", "insight"],
    &["setting", "settings", "preference", "config", "configuration", "option"],
    &["block", "ban", "mute", "suspend"],
    &["download", "export", "backup", "archive"],
    &["deploy", "deployment", "environment", "release"],
    &["key", "ssh", "gpg", "signing"],
    &["search", "find", "lookup", "query"],
];

/// Stemmed term → the stemmed terms of its thesaurus groups (without itself).
fn related_map() -> &'static HashMap<String, Vec<String>> {
    static MAP: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for group in THESAURUS.iter().chain(API_VOCABULARY) {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            for s in &stems {
                let entry = map.entry(s.clone()).or_default();
                for o in &stems {
                    if o != s && !entry.contains(o) {
                        entry.push(o.clone());
                    }
                }
            }
        }
        map
    })
}

/// The related terms of one stemmed term.
pub fn related(term: &str) -> &'static [String] {
    related_map().get(term).map(Vec::as_slice).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_identifiers_the_way_people_write_them() {
        assert_eq!(
            words("messagesBatchModify"),
            ["messages", "batch", "modify"]
        );
        assert_eq!(words("GMAIL_SEND-email"), ["gmail", "send", "email"]);
        assert_eq!(
            words("HTMLParser v2api"),
            ["html", "parser", "v", "2", "api"]
        );
        assert_eq!(words("sendAs.list"), ["send", "as", "list"]);
    }

    #[test]
    fn stems_meet() {
        for group in [
            &["delete", "deleted", "deleting", "deletes"][..],
            &["reply", "replies"],
            &["message", "messages"],
            &["address", "addresses"],
            &["inbox", "inboxes"],
            &["star", "starred", "stars"],
            &["schedule", "scheduled", "scheduling"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.windows(2).all(|w| w[0] == w[1]),
                "{group:?} → {stems:?}"
            );
        }
        assert_eq!(stem("status"), "status");
    }

    #[test]
    fn terms_drop_stop_words_and_related_words_expand() {
        assert_eq!(terms("Delete the message"), ["delet", "messag"]);
        assert!(related("remov").contains(&"delet".to_string()));
        assert!(related("meet").contains(&"event".to_string()));
        assert!(related("zzz").is_empty());
    }

    #[test]
    fn phrases_and_noun_verbs_are_rewritten() {
        assert_eq!(
            rewrite_query("Get rid of it for good"),
            "delete it permanently"
        );
        assert_eq!(rewrite_query("email my landlord"), "email my landlord send");
        assert_eq!(rewrite_query("draft it, don't send it"), "draft it it");
        assert_ne!(
            name_actions("users_messages_send") & actions("shoot Ana an email"),
            0
        );
        assert_eq!(
            name_actions("users_messages_send") & actions("list everything"),
            0
        );
        assert_eq!(
            name_actions("users_settings_sendAs_create"),
            name_actions("usersAdd")
        );
    }
}
