//! A call reads its provider's org credential with the agent, in one statement, still
//! sealed, and opens it only to send it: no statement of its own, and a rotation on one
//! replica is what the very next call on another sends upstream.

use serde_json::json;

use crate::runtime::threads::replicas;

#[tokio::test]
async fn a_rotated_org_credential_is_sent_by_the_next_call_on_another_replica() {
    let r = replicas().await;
    let last_auth = || r.up.stats.lock().unwrap().last_auth.clone();
    let provider = format!("/v1/providers/{}", r.rig.provider);
    r.call(&r.b, "th").await;
    assert_eq!(last_auth().as_deref(), Some("Bearer org-secret"));

    // rotated through replica A; replica B has compiled the provider already
    r.a.patch(
        &provider,
        &r.rig.t.key,
        json!({"credential": "rotated-secret"}),
    )
    .await
    .ok(200);
    r.settled().await;
    let from = r.counter.statements();
    r.call(&r.b, "th").await;
    assert_eq!(last_auth().as_deref(), Some("Bearer rotated-secret"));
    r.settled().await;
    let sql = r.counter.sql_since(from);
    assert!(
        !sql.iter()
            .any(|s| s.starts_with("SELECT credential_ciphertext")),
        "the credential came with the agent: {sql:#?}"
    );

    // removed on A: B sends none
    r.a.patch(&provider, &r.rig.t.key, json!({"credential": null}))
        .await
        .ok(200);
    r.call(&r.b, "th").await;
    assert_eq!(last_auth(), None);
}
