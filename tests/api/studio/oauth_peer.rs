//! D4 against a real OpenID provider, npm `oidc-provider` (tests/oauth-peer), in its
//! stricter configurations: client authentication at the token endpoint only with
//! `client_secret_post`, refresh tokens only for `offline_access` with `prompt=consent`,
//! short-lived access tokens, revocation. loopgate is configured with the issuer alone
//! (endpoints, auth method and revocation endpoint discovered); a browser signs in
//! through the provider's own login and consent forms; the API the tool calls checks
//! every token with the provider.

use serde_json::json;

use super::connections::{browser, html, setup, submit, Setup};
use crate::support::helpers::TestApp;
use crate::support::oauth_peer::{Browser, OAuthPeer, PEER_CLIENT_ID, PEER_CLIENT_SECRET};

async fn connect(app: &TestApp, s: &Setup, token: &str) -> (u16, String, String) {
    let link = s
        .call(app, token, "connect_toolkit", json!({"toolkit": "mail"}))
        .await;
    let url = link.ok(200)["result"]["url"].as_str().unwrap().to_string();
    let go = submit(&browser(), &url, &[("x", "")]).await;
    assert_eq!(go.status().as_u16(), 303);
    let authorize = go.headers()["location"].to_str().unwrap().to_string();
    let callback = Browser::default()
        .sign_in(&authorize, &format!("{}/connect/callback", app.address))
        .await;
    let (status, page) = html(
        browser()
            .get(&callback)
            .header("accept", "text/html")
            .send()
            .await
            .unwrap(),
    )
    .await;
    (status, page, authorize)
}

fn connection(peer: &OAuthPeer, params: serde_json::Value) -> serde_json::Value {
    json!({"type": "oauth2", "issuer": peer.issuer, "client_id": PEER_CLIENT_ID,
           "client_secret": PEER_CLIENT_SECRET, "scopes": ["openid", "offline_access", "mail.read"],
           "authorization_params": params})
}

async fn refresh_state(app: &TestApp, s: &Setup, user: &str) -> String {
    let list = app
        .get(&format!("/v1/connections?user_id={user}"), &s.t.key)
        .await;
    list.ok(200)["data"][0]["refresh"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", list.text))
        .to_string()
}

#[tokio::test]
async fn d4_a_real_openid_provider_post_only_consent_for_refresh_short_tokens_revocation() {
    let app = crate::runtime::discovery::spawn().await;
    let redirect = format!("{}/connect/callback", app.address);
    let Some(peer) = OAuthPeer::start(
        &redirect,
        &[
            ("OAUTH_PEER_AUTH_METHODS", "client_secret_post"),
            ("OAUTH_PEER_ACCESS_TTL", "9"),
        ],
    )
    .await
    else {
        return;
    };
    let api = format!("{}/api", peer.issuer);

    // without prompt=consent the provider drops offline_access: no refresh token, and
    // the connection says so
    let plain = setup(&app, "mail", &api, connection(&peer, json!({}))).await;
    let u = plain.token(&app, "u1").await;
    let (status, page, _) = connect(&app, &plain, &u).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(refresh_state(&app, &plain, "u1").await, "none");

    // prompt=consent: a refresh token, the token endpoint called with client_secret_post
    // (the only method it takes, read from its metadata)
    let s = setup(
        &app,
        "mail",
        &api,
        connection(&peer, json!({"prompt": "consent"})),
    )
    .await;
    let u1 = s.token(&app, "u1").await;
    let (status, page, authorize) = connect(&app, &s, &u1).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("mail is connected"), "{page}");
    assert!(
        authorize.starts_with(&format!("{}/auth?", peer.issuer))
            && authorize.contains("prompt=consent"),
        "{authorize}"
    );
    assert_eq!(refresh_state(&app, &s, "u1").await, "available");

    // the API checks the token with the provider
    for _ in 0..2 {
        let r = s.call(&app, &u1, "list_mail", json!({})).await;
        assert_eq!(r.ok(200)["result"]["data"][0]["to"], "alice", "{}", r.text);
    }
    // a 9 s token is used as it is (a fixed 60 s margin would refresh it on every call)...
    assert_eq!(peer.last_token().await, (true, 1));
    // ...and refreshed in its last third, before it expires
    tokio::time::sleep(std::time::Duration::from_millis(6500)).await;
    let r = s.call(&app, &u1, "list_mail", json!({})).await;
    assert_eq!(r.ok(200)["result"]["data"][0]["to"], "alice", "{}", r.text);
    assert_eq!(peer.last_token().await, (true, 2), "one refresh");

    // DELETE revokes the grant at the discovered revocation endpoint
    let list = app.get("/v1/connections?user_id=u1", &s.t.key).await;
    let id = list.ok(200)["data"][0]["id"].as_str().unwrap().to_string();
    let del = app.delete(&format!("/v1/connections/{id}"), &s.t.key).await;
    assert_eq!(del.status.as_u16(), 204, "{}", del.text);
    assert_eq!(del.headers["loopgate-token-revocation"], "revoked");
    assert!(
        !peer.last_token().await.0,
        "the provider no longer takes the token"
    );
    s.call(&app, &u1, "list_mail", json!({}))
        .await
        .problem(409, "connect_required");
}
