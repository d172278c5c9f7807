//! Tests of the whole import on the real-world-shaped documents under
//! `tests/fixtures/openapi/` (written for these tests, not downloaded).

use serde_json::{json, Value};

use super::{import, ImportedTool};

const GITHUB: &str = include_str!("../../tests/fixtures/openapi/github.yaml");
const STRIPE: &str = include_str!("../../tests/fixtures/openapi/stripe.json");
const GRAPH: &str = include_str!("../../tests/fixtures/openapi/graph.yaml");

fn tool<'a>(tools: &'a [ImportedTool], name: &str) -> &'a ImportedTool {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn keys(tool: &ImportedTool) -> Vec<&str> {
    let props = tool.input_schema["properties"].as_object().unwrap();
    props.keys().map(String::as_str).collect()
}

fn required(tool: &ImportedTool) -> Value {
    tool.input_schema["required"].clone()
}

/// Every tool name is valid for function calling and unique; every schema is an
/// object schema whose properties say where they go; no `$ref` is left behind.
fn assert_well_formed(tools: &[ImportedTool]) {
    let mut seen = std::collections::HashSet::new();
    for t in tools {
        assert!(
            !t.name.is_empty()
                && t.name.len() <= 64
                && t.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{}",
            t.name
        );
        assert!(seen.insert(t.name.clone()), "duplicate {}", t.name);
        assert_eq!(t.input_schema["type"], "object");
        for (key, prop) in t.input_schema["properties"].as_object().unwrap() {
            let place = prop["x-loopgate-in"].as_str().unwrap();
            assert!(
                ["path", "query", "header", "body"].contains(&place),
                "{key}"
            );
            assert!(key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)));
        }
        assert!(
            !t.input_schema.to_string().contains("\"$ref\""),
            "{}",
            t.name
        );
    }
}

#[test]
fn github_like_yaml() {
    let tools = import(GITHUB.as_bytes()).unwrap();
    assert_well_formed(&tools);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "repos_list-for-authenticated-user",
            "repos_get",
            "repos_update",
            "issues_list-for-repo",
            "issues_create",
            "issues_get",
            "issues_update",
            "get_repos_owner_repo_issues_issue_number_comments",
            "post_repos_owner_repo_issues_issue_number_comments",
            "search_issues-and-pull-requests",
        ]
    );

    // Shared parameters through $ref; the Authorization header component is dropped.
    let list = tool(&tools, "repos_list-for-authenticated-user");
    assert_eq!(
        (list.method.as_str(), list.path.as_str()),
        ("GET", "/user/repos")
    );
    assert_eq!(keys(list), ["visibility", "per_page", "page", "since"]);
    assert_eq!(list.input_schema["properties"]["per_page"]["maximum"], 100);
    assert_eq!(required(list), json!([]));

    // Path-level owner/repo/header merged with operation-level ones; the operation's
    // X-GitHub-Api-Version wins; authorization, accept and the cookie are dropped.
    let issues = tool(&tools, "issues_list-for-repo");
    assert_eq!(
        keys(issues),
        [
            "owner",
            "repo",
            "state",
            "labels",
            "per_page",
            "page",
            "X-GitHub-Api-Version"
        ]
    );
    assert_eq!(
        required(issues),
        json!(["owner", "repo", "X-GitHub-Api-Version"])
    );
    let version = &issues.input_schema["properties"]["X-GitHub-Api-Version"];
    assert_eq!(version["x-loopgate-in"], "header");
    assert_eq!(version["description"], "The API version; required here.");
    assert_eq!(
        issues.input_schema["properties"]["owner"]["description"],
        "The account owner of the repository. The name is not case sensitive."
    );
    assert_eq!(
        issues.description,
        "List repository issues. List issues in a repository. Only open issues will be listed."
    );
    assert!(issues.input_schema["properties"].get("body").is_none());

    // A requestBody $ref, its schema $ref inlined, required.
    let create = tool(&tools, "issues_create");
    assert_eq!(
        keys(create),
        ["owner", "repo", "X-GitHub-Api-Version", "body"]
    );
    assert_eq!(required(create), json!(["owner", "repo", "body"]));
    let body = &create.input_schema["properties"]["body"];
    assert_eq!(body["x-loopgate-in"], "body");
    assert_eq!(body["x-loopgate-content-type"], "application/json");
    assert_eq!(body["description"], "The issue to create.");
    assert_eq!(body["required"], json!(["title"]));
    // The label schema is inlined inside oneOf; its read-only id is gone.
    let label = &body["properties"]["labels"]["items"]["oneOf"][1];
    assert_eq!(
        label["properties"]["color"]["type"],
        json!(["string", "null"])
    );
    assert!(label["properties"].get("id").is_none());
    // 3.0 `nullable` on a oneOf offers null as one more option.
    assert_eq!(
        body["properties"]["milestone"]["oneOf"][2],
        json!({"type": "null"})
    );

    let issue = tool(&tools, "issues_get");
    assert_eq!(keys(issue), ["owner", "repo", "issue_number"]);
    assert_eq!(
        issue.input_schema["properties"]["issue_number"]["type"],
        "integer"
    );

    // An optional body, and a vendor +json media type; no operationId means a
    // derived name.
    assert_eq!(
        required(tool(&tools, "repos_update")),
        json!(["owner", "repo"])
    );
    let comment = tool(&tools, "post_repos_owner_repo_issues_issue_number_comments");
    let body = &comment.input_schema["properties"]["body"];
    assert_eq!(
        body["x-loopgate-content-type"],
        "application/vnd.github+json"
    );
    assert_eq!(body["properties"]["body"]["type"], "string");
    assert_eq!(
        required(comment),
        json!(["owner", "repo", "issue_number", "body"])
    );
}

#[test]
fn stripe_like_json() {
    let tools = import(STRIPE.as_bytes()).unwrap();
    assert_well_formed(&tools);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "GetCustomers",
            "PostCustomers",
            "GetCustomersCustomer",
            "PostCustomersCustomer",
            "DeleteCustomersCustomer",
            "PostPaymentIntents",
            "PostV2CoreEventDestinations",
        ]
    );

    // Cursor params; the empty form body Stripe declares on GETs is left out; the
    // HTML description is made plain.
    let list = tool(&tools, "GetCustomers");
    assert_eq!(
        keys(list),
        [
            "created",
            "email",
            "ending_before",
            "expand",
            "limit",
            "starting_after"
        ]
    );
    assert!(list
        .description
        .starts_with("List all customers. Returns a list of your customers."));
    assert!(!list.description.contains("<p>"));
    let props = &list.input_schema["properties"];
    assert_eq!(props["expand"]["x-loopgate-style"], "deepObject");
    assert_eq!(props["expand"]["x-loopgate-explode"], true);
    assert_eq!(props["expand"]["items"]["type"], "string");
    assert_eq!(
        props["created"]["anyOf"][0]["properties"]["gte"]["type"],
        "integer"
    );
    assert_eq!(props["starting_after"]["x-loopgate-in"], "query");

    // A form body with deeply nested refs, all inlined.
    let create = tool(&tools, "PostCustomers");
    assert_eq!(keys(create), ["body"]);
    assert_eq!(required(create), json!([]));
    let body = &create.input_schema["properties"]["body"];
    assert_eq!(
        body["x-loopgate-content-type"],
        "application/x-www-form-urlencoded"
    );
    let shipping = &body["properties"]["shipping"]["anyOf"][0];
    assert_eq!(shipping["required"], json!(["address", "name"]));
    assert_eq!(
        shipping["properties"]["address"]["properties"]["city"]["type"],
        "string"
    );
    let custom_fields = &body["properties"]["invoice_settings"]["properties"]["custom_fields"];
    assert_eq!(
        custom_fields["anyOf"][0]["items"]["required"],
        json!(["name", "value"])
    );

    let get = tool(&tools, "GetCustomersCustomer");
    assert_eq!(keys(get), ["customer", "expand"]);
    assert_eq!(required(get), json!(["customer"]));
    let delete = tool(&tools, "DeleteCustomersCustomer");
    assert_eq!(
        (delete.method.as_str(), keys(delete)),
        ("DELETE", vec!["customer"])
    );

    let intent = tool(&tools, "PostPaymentIntents");
    assert_eq!(required(intent), json!(["body"]));
    let body = &intent.input_schema["properties"]["body"];
    assert_eq!(body["required"], json!(["amount", "currency"]));
    let billing = &body["properties"]["payment_method_data"]["properties"]["billing_details"];
    assert_eq!(
        billing["properties"]["address"]["anyOf"][0]["properties"]["postal_code"]["maxLength"],
        5000
    );

    // A JSON body next to a header parameter.
    let dest = tool(&tools, "PostV2CoreEventDestinations");
    assert_eq!(keys(dest), ["Stripe-Version", "body"]);
    let body = &dest.input_schema["properties"]["body"];
    assert_eq!(body["x-loopgate-content-type"], "application/json");
    assert_eq!(
        body["properties"]["webhook_endpoint"]["required"],
        json!(["url"])
    );
    assert!(body["properties"].get("id").is_none(), "readOnly dropped");
}

#[test]
fn graph_like_31_yaml() {
    let tools = import(GRAPH.as_bytes()).unwrap();
    assert_well_formed(&tools);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "users_user_ListUser",
            "users_user_CreateUser",
            "users_user_GetUser",
            "users_user_UpdateUser",
            "users_user_DeleteUser",
            "users_ListMessages",
            "users_GetMessages",
            "drives_items_CreateChildren",
            "users_user_sendMail",
        ]
    );

    // OData `$` parameters become safe keys that remember their real names.
    let list = tool(&tools, "users_user_ListUser");
    assert_eq!(
        keys(list),
        [
            "top",
            "skip",
            "search",
            "filter",
            "count",
            "orderby",
            "select",
            "ConsistencyLevel"
        ]
    );
    let props = &list.input_schema["properties"];
    assert_eq!(props["top"]["x-loopgate-name"], "$top");
    assert_eq!(props["top"]["x-loopgate-in"], "query");
    assert_eq!(props["top"]["examples"], json!([50]));
    assert_eq!(props["filter"]["x-loopgate-name"], "$filter");
    assert_eq!(props["select"]["x-loopgate-explode"], false);
    assert_eq!(props["orderby"]["items"]["enum"][1], "id desc");
    assert!(props["ConsistencyLevel"].get("x-loopgate-name").is_none());
    assert_eq!(
        list.description,
        "List users. Retrieve a list of user objects."
    );

    // Path parameters with dashes; the path-level description is not the tool's.
    let get = tool(&tools, "users_user_GetUser");
    assert_eq!(get.path, "/users/{user-id}");
    assert_eq!(keys(get), ["user-id", "select", "expand"]);
    assert_eq!(required(get), json!(["user-id"]));
    assert_eq!(get.description, "Get user");

    // 3.1 types and a recursive schema: the manager is expanded once more, then cut.
    let create = tool(&tools, "users_user_CreateUser");
    let body = &create.input_schema["properties"]["body"];
    assert_eq!(body["description"], "New entity");
    let user = &body["allOf"][1]["properties"];
    assert_eq!(user["displayName"]["type"], json!(["string", "null"]));
    let inner_manager = &user["manager"]["anyOf"][0]["allOf"][1]["properties"]["manager"];
    assert_eq!(
        inner_manager["anyOf"][0]["description"],
        "(recursive reference to 'microsoft.graph.user'; not expanded further)"
    );
    assert!(
        body["allOf"][0]["properties"].get("id").is_none(),
        "readOnly dropped"
    );

    // A requestBody $ref whose schema $ref has a sibling description (3.1).
    let update = tool(&tools, "users_user_UpdateUser");
    assert_eq!(update.method, "PATCH");
    assert_eq!(required(update), json!(["user-id", "body"]));
    assert_eq!(
        update.input_schema["properties"]["body"]["description"],
        "New property values"
    );

    let delete = tool(&tools, "users_user_DeleteUser");
    assert_eq!(keys(delete), ["user-id", "If-Match"]);

    let messages = tool(&tools, "users_ListMessages");
    assert_eq!(
        messages.input_schema["properties"]["Prefer"]["type"],
        json!(["string", "null"])
    );
    let message = tool(&tools, "users_GetMessages");
    assert_eq!(required(message), json!(["user-id", "message-id"]));

    // Recursive children stop after two levels.
    let children = tool(&tools, "drives_items_CreateChildren");
    assert_eq!(keys(children), ["drive-id", "driveItem-id", "body"]);
    let text = children.input_schema.to_string();
    assert!(text.contains("(recursive reference to 'microsoft.graph.driveItem'"));

    // A path item that is a $ref to components/pathItems.
    let send = tool(&tools, "users_user_sendMail");
    assert_eq!(send.path, "/users/{user-id}/microsoft.graph.sendMail");
    assert_eq!(keys(send), ["user-id", "body"]);
    let mail = &send.input_schema["properties"]["body"]["properties"];
    assert_eq!(mail["SaveToSentItems"]["type"], json!(["boolean", "null"]));
    assert_eq!(
        mail["Message"]["allOf"][1]["properties"]["body"]["properties"]["contentType"],
        json!({"title": "bodyType", "enum": ["text", "html"], "type": "string", "description": "The type of the content."})
    );
}
