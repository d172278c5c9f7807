//! P5 against hostile upstreams: endless cursors, cycles, next URLs off the provider's
//! origin, a last page repeated forever, a silently capped page size. No row twice, no
//! request off origin, and a verdict that names why the walk stopped.

use crate::support::cursor_rig::*;
use crate::support::cursor_servers::{
    rid, CAPPED, CYCLE_TOTAL, HOSTILE_PAGE, ROWS, STICKY_MAX, STICKY_ROWS,
};
use crate::support::helpers::spawn_app;

#[tokio::test]
async fn cursor_endless_cursor_with_the_same_rows_stops_as_a_loop() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "endless_list").await;
    let want: Vec<String> = (0..HOSTILE_PAGE).map(rid).collect();
    assert_rows(&res, &want, "endless");
    assert_eq!(res["_stoppedBy"], "loop", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false, "{}", verdict(&res));
    assert_eq!(
        res["_likelyMoreRows"],
        false,
        "the same ten rows every time: every distinct row was fetched: {}",
        verdict(&res)
    );
    let note = res["_note"].as_str().unwrap();
    assert!(
        note.contains("distinct row"),
        "the note says whether every distinct row seems fetched: {note}"
    );
    assert_eq!(
        rig.servers.main.count("/hostile/endless"),
        2,
        "the second identical page ends the walk"
    );
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_never_ending_new_rows_stop_at_the_page_bound() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "forever_list").await;
    let pages = rig.servers.main.count("/hostile/forever");
    assert_eq!(pages, 20, "20 pages per collection by default");
    let want: Vec<String> = (0..pages)
        .flat_map(|k| (0..HOSTILE_PAGE).map(move |j| format!("fv_{k:04}_{j}")))
        .collect();
    assert_rows(&res, &want, "forever");
    assert_eq!(res["_stoppedBy"], "pages", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(res["_likelyMoreRows"], true);
    assert!(res["_note"].as_str().unwrap().contains("partial"));
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_cycle_stops_as_a_loop_and_counts_what_is_missing() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "cycle_list").await;
    let want: Vec<String> = (0..3 * HOSTILE_PAGE).map(rid).collect();
    assert_rows(&res, &want, "cycle");
    assert_eq!(res["_stoppedBy"], "loop", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(res["_likelyMoreRows"], true, "30 of an announced 50");
    assert_eq!(res["_total"], CYCLE_TOTAL);
    let note = res["_note"].as_str().unwrap();
    assert!(
        note.contains(&CYCLE_TOTAL.to_string()) && note.contains("20"),
        "the note says how many are missing: {note}"
    );
    assert_eq!(
        rig.servers.main.count("/hostile/cycle"),
        3,
        "cursor A is not requested twice"
    );
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_next_url_to_another_origin_is_not_followed() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "offsite_list").await;
    let want: Vec<String> = (0..HOSTILE_PAGE).map(rid).collect();
    assert_rows(&res, &want, "offsite");
    assert_eq!(res["_stoppedBy"], "off_origin", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(res["_likelyMoreRows"], true);
    assert_eq!(rig.servers.main.count("/hostile/offsite"), 1);
    assert_eq!(
        rig.servers.elsewhere.count("/hostile/offsite"),
        0,
        "the other origin was never asked"
    );

    let res = rig.walk(&app, "scheme_list").await;
    assert_rows(&res, &want, "scheme change");
    assert_eq!(res["_stoppedBy"], "off_origin", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(res["_likelyMoreRows"], true);
    assert_eq!(rig.servers.main.count("/hostile/scheme"), 1);
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_last_page_repeated_forever_stops_without_duplicates() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "sticky_list").await;
    let want: Vec<String> = (0..STICKY_ROWS).map(rid).collect();
    assert_rows(&res, &want, "sticky");
    assert_eq!(res["_stoppedBy"], "loop", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(
        res["_likelyMoreRows"],
        false,
        "every distinct row was fetched: {}",
        verdict(&res)
    );
    let note = res["_note"].as_str().unwrap();
    assert!(note.contains("distinct row"), "{note}");
    assert_eq!(
        rig.servers.main.count("/hostile/sticky"),
        STICKY_ROWS / STICKY_MAX + 1,
        "one repeated page is enough to stop"
    );
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_silently_capped_page_size_is_walked_to_the_total() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let pages = ROWS.div_ceil(CAPPED);

    let res = rig.walk(&app, "capped_list").await;
    assert_complete(&res, Some(ROWS), "capped page numbers");
    let hits = rig.servers.main.hits("/hostile/capped");
    assert_eq!(hits.len(), pages);
    assert!(hits
        .iter()
        .all(|h| query_of(h).get("limit").map(String::as_str) == Some("100")));

    let res = rig.walk(&app, "capped_offset_list").await;
    assert_complete(&res, Some(ROWS), "capped offsets");
    let hits = rig.servers.main.hits("/hostile/capped_offset");
    assert_eq!(hits.len(), pages);
    // P9: pages after the first may be in flight together, so they arrive in any order;
    // each offset is still asked for exactly once
    let mut offsets: Vec<usize> = hits
        .iter()
        .filter_map(|h| query_of(h).get("offset")?.parse().ok())
        .collect();
    offsets.sort_unstable();
    let stepped: Vec<usize> = (0..pages).map(|p| p * CAPPED).collect();
    assert_eq!(offsets, stepped, "the offset steps by rows received");
    rig.assert_stayed_home();
}
