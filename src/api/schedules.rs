//! Automate: schedules on a workflow (W6). The cron and zone are checked when written
//! (`automate::cron`), a cron firing more often than `schedule_min_interval_seconds` is
//! refused, and `next_due_at` is set; the scheduler (`automate::scheduler`) does the rest.

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::audit::{self, Acting};
use super::error::{or_not_found, ApiError, Problem};
use super::extract::Studio;
use super::list::{ListParams, ListResponse};
use crate::api::state::AppState;
use crate::automate::cron::Spec;
use crate::crypto::new_id;
use crate::store::api_keys::Scope;
use crate::store::schedules::{self, Fields, Schedule};
use crate::store::{workflow_runs, workflows, OrgId};

/// The scheduler claims due schedules in batches across all orgs, so one org's
/// schedules are bounded.
pub const MAX_SCHEDULES_PER_ORG: i64 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Overlap {
    /// A due time that falls while the previous run still goes is recorded as `skipped`.
    Skip,
    /// It runs beside the other.
    Allow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CatchUp {
    /// Due times missed (an outage) are not run.
    None,
    /// The latest missed due time runs once.
    Latest,
}

/// Whose connections and credentials the runs use.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunAs {
    pub user_id: String,
}

/// `POST /v1/workflows/{workflow_id}/schedules` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleInput {
    /// 5 fields (`minute hour day-of-month month day-of-week`), or 6 with leading seconds.
    pub cron: String,
    /// An IANA time zone name; default `UTC`.
    pub timezone: Option<String>,
    /// The run input (`$.input…`); default `{}`.
    #[schema(value_type = Option<Object>)]
    pub input: Option<Value>,
    /// The end user whose connections and credentials the runs use; absent: the org's.
    pub run_as: Option<RunAs>,
    /// Default `skip`.
    pub overlap: Option<Overlap>,
    /// Default `latest`.
    pub catch_up: Option<CatchUp>,
    /// Default `false`.
    #[serde(default)]
    pub paused: bool,
}

/// Present (even `null`) versus absent.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `PATCH /v1/schedules/{schedule_id}` body: what is given changes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SchedulePatch {
    pub cron: Option<String>,
    pub timezone: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub input: Option<Value>,
    /// `{user_id}`, or `null` for the org's credentials.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<RunAs>)]
    pub run_as: Option<Value>,
    pub overlap: Option<Overlap>,
    pub catch_up: Option<CatchUp>,
    /// `true` pauses; `false` resumes from the next due time after now (missed ones
    /// while paused are not run).
    pub paused: Option<bool>,
}

/// The last run a schedule made.
#[derive(Debug, Serialize, ToSchema)]
pub struct LastRun {
    pub id: String,
    pub status: String,
    pub scheduled_for: Option<DateTime<Utc>>,
}

/// A schedule as returned.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScheduleView {
    /// `sch_…`
    pub id: String,
    pub workflow_id: String,
    pub cron: String,
    pub timezone: String,
    #[schema(value_type = Object)]
    pub input: Value,
    pub run_as: Option<RunAs>,
    pub overlap: String,
    pub catch_up: String,
    pub paused: bool,
    /// The next three due times (empty while paused).
    pub next_runs: Vec<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run: Option<LastRun>,
    pub created_at: DateTime<Utc>,
}

/// The pattern checked, off the async workers: a rare pattern (`0 0 29 2 *`) makes the
/// search for its next due times walk years of days.
async fn spec(cron: &str, timezone: &str, min_interval: u64) -> Result<Spec, ApiError> {
    let (cron, timezone) = (cron.to_string(), timezone.to_string());
    web::block(move || checked(&cron, &timezone, min_interval))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("schedule check: {e}")))?
}

fn checked(cron: &str, timezone: &str, min_interval: u64) -> Result<Spec, ApiError> {
    let spec = Spec::parse(cron, timezone).map_err(|e| ApiError::invalid(e.to_string()))?;
    let min = chrono::Duration::seconds(min_interval as i64);
    match spec.min_gap(Utc::now()) {
        Some(gap) if gap < min => Err(ApiError::invalid(format!(
            "cron '{cron}' fires every {} s at times; the shortest interval allowed is {min_interval} s \
             (schedule_min_interval_seconds)",
            gap.num_seconds()
        ))),
        _ => Ok(spec),
    }
}

fn check_user(user: &str) -> Result<(), ApiError> {
    if user.is_empty() || user.len() > 200 || user.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            "run_as.user_id must be 1 to 200 characters without control characters",
        ));
    }
    // `key:<id>` names an org key's own connections; no user may take it
    if user.starts_with("key:") {
        return Err(ApiError::invalid(
            "run_as.user_id may not start with 'key:'",
        ));
    }
    Ok(())
}

fn check_input(input: &Value) -> Result<(), ApiError> {
    if !input.is_object() {
        return Err(ApiError::invalid("input must be an object"));
    }
    Ok(())
}

async fn view(state: &AppState, org: &OrgId, s: Schedule) -> Result<ScheduleView, ApiError> {
    let next_runs = match (s.paused, s.next_due_at) {
        (false, Some(first)) => {
            let mut v = vec![first];
            if let Ok(spec) = Spec::parse(&s.cron, &s.timezone) {
                v.extend(spec.upcoming(first, 2));
            }
            v
        }
        _ => Vec::new(),
    };
    let last_run = workflow_runs::last_of_schedule(&state.pool, org, &s.id)
        .await?
        .map(|r| LastRun {
            id: r.id,
            status: r.status,
            scheduled_for: r.scheduled_for,
        });
    Ok(ScheduleView {
        id: s.id,
        workflow_id: s.workflow_id,
        cron: s.cron,
        timezone: s.timezone,
        input: s.input.0,
        run_as: s.run_as_user.map(|user_id| RunAs { user_id }),
        overlap: s.overlap,
        catch_up: s.catch_up,
        paused: s.paused,
        next_runs,
        last_run,
        created_at: s.created_at,
    })
}

fn overlap_str(o: Overlap) -> &'static str {
    match o {
        Overlap::Skip => "skip",
        Overlap::Allow => "allow",
    }
}

fn catch_up_str(c: CatchUp) -> &'static str {
    match c {
        CatchUp::None => "none",
        CatchUp::Latest => "latest",
    }
}

/// Create a schedule on a workflow.
///
/// The workflow then runs at every due time of `cron` in `timezone`, with nobody
/// present: runs have `trigger: "schedule"`, `schedule_id` and `scheduled_for`, and at
/// most one exists per due time however many replicas run. Daylight-saving changes
/// follow the zone's clocks: a fixed time in a skipped hour runs once right after the
/// gap, a fixed time in a repeated hour runs once (its first pass).
#[utoipa::path(post, operation_id = "createSchedule", path = "/v1/workflows/{workflow_id}/schedules", tag = "studio",
    request_body(content = ScheduleInput, example = json!({"cron": "0 7 * * 1-5", "timezone": "Europe/Paris", "input": {"status": "open"}})),
    responses((status = 201, body = ScheduleView, example = json!({"id": "sch_AyPGm3wYX1644wEXma69tk", "workflow_id": "wf_rg7j9PlGoSheTglV8fcZWE", "cron": "0 7 * * 1-5", "timezone": "Europe/Paris", "input": {"status": "open"}, "run_as": null, "overlap": "skip", "catch_up": "latest", "paused": false, "next_runs": ["2026-12-08T06:00:00Z", "2026-12-09T06:00:00Z", "2026-12-10T06:00:00Z"], "created_at": "2026-12-07T21:27:02.806646Z"})), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn create(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<ScheduleInput>,
) -> Result<HttpResponse, ApiError> {
    let wf = workflows::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("workflow"))?;
    let body = body.into_inner();
    let timezone = body.timezone.unwrap_or_else(|| "UTC".into());
    let spec = spec(
        &body.cron,
        &timezone,
        state.settings.schedule_min_interval_seconds,
    )
    .await?;
    let input = body
        .input
        .unwrap_or_else(|| Value::Object(Default::default()));
    check_input(&input)?;
    if let Some(r) = &body.run_as {
        check_user(&r.user_id)?;
        may_act_as_users(&key)?;
    }
    let fields = Fields {
        cron: body.cron.trim(),
        timezone: &timezone,
        input: &input,
        run_as_user: body.run_as.as_ref().map(|r| r.user_id.as_str()),
        overlap: overlap_str(body.overlap.unwrap_or(Overlap::Skip)),
        catch_up: catch_up_str(body.catch_up.unwrap_or(CatchUp::Latest)),
        paused: body.paused,
        next_due_at: spec.next_after(Utc::now()),
    };
    if schedules::count(&state.pool, &key.org).await? >= MAX_SCHEDULES_PER_ORG {
        return Err(ApiError::Conflict(format!(
            "an org has at most {MAX_SCHEDULES_PER_ORG} schedules; delete one first"
        )));
    }
    let s = schedules::create(&state.pool, &key.org, &new_id("sch"), &wf.id, &fields).await?;
    audit::created(&state, &key.org, key.actor(), ("schedule", &s.id), &s, &[]).await?;
    Ok(HttpResponse::Created().json(view(&state, &key.org, s).await?))
}

/// List a workflow's schedules.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listSchedules", path = "/v1/workflows/{workflow_id}/schedules", tag = "studio", params(ListParams),
    responses((status = 200, body = ListResponse<ScheduleView>, example = json!({"data": [{"id": "sch_AyPGm3wYX1644wEXma69tk", "workflow_id": "wf_rg7j9PlGoSheTglV8fcZWE", "cron": "0 7 * * 1-5", "timezone": "Europe/Paris", "input": {"status": "open"}, "run_as": null, "overlap": "skip", "catch_up": "latest", "paused": true, "next_runs": [], "created_at": "2026-12-07T21:28:54.586117Z"}], "has_more": false, "cursor": null, "total": 1})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn list(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let wf = workflows::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("workflow"))?;
    let page = schedules::list(&state.pool, &key.org, &wf.id, &q.page()?).await?;
    let mut data = Vec::with_capacity(page.items.len());
    for s in page.items {
        data.push(view(&state, &key.org, s).await?);
    }
    Ok(HttpResponse::Ok().json(ListResponse {
        data,
        has_more: page.has_more,
        cursor: page.cursor,
        total: page.total,
    }))
}

/// Get a schedule, with its next three due times and its last run.
///
/// Its cron expression and time zone, whether it is paused, its overlap and catch-up policies,
/// the next three due times and the last run it made.
#[utoipa::path(get, operation_id = "getSchedule", path = "/v1/schedules/{schedule_id}", tag = "studio",
    responses((status = 200, body = ScheduleView, example = json!({"id": "sch_AyPGm3wYX1644wEXma69tk", "workflow_id": "wf_rg7j9PlGoSheTglV8fcZWE", "cron": "0 7 * * 1-5", "timezone": "Europe/Paris", "input": {"status": "open"}, "run_as": null, "overlap": "skip", "catch_up": "latest", "paused": false, "next_runs": ["2026-12-08T06:00:00Z", "2026-12-09T06:00:00Z", "2026-12-10T06:00:00Z"], "created_at": "2026-12-07T21:27:02.806646Z"})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn get(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let s = schedules::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("schedule"))?;
    Ok(HttpResponse::Ok().json(view(&state, &key.org, s).await?))
}

/// Change a schedule; `paused: true` pauses it, `paused: false` resumes it.
///
/// A new `cron` or `timezone`, or a resume, starts from the next due time after now.
#[utoipa::path(patch, operation_id = "updateSchedule", path = "/v1/schedules/{schedule_id}", tag = "studio",
    request_body(content = SchedulePatch, example = json!({"paused": true})),
    responses((status = 200, body = ScheduleView, example = json!({"id": "sch_AyPGm3wYX1644wEXma69tk", "workflow_id": "wf_rg7j9PlGoSheTglV8fcZWE", "cron": "0 7 * * 1-5", "timezone": "Europe/Paris", "input": {"status": "open"}, "run_as": null, "overlap": "skip", "catch_up": "latest", "paused": true, "next_runs": [], "created_at": "2026-12-07T21:28:54.586117Z"})), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn update(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<SchedulePatch>,
) -> Result<HttpResponse, ApiError> {
    let cur = schedules::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("schedule"))?;
    let body = body.into_inner();
    let cron = body.cron.as_deref().map(str::trim).unwrap_or(&cur.cron);
    let timezone = body.timezone.as_deref().unwrap_or(&cur.timezone);
    let spec = spec(cron, timezone, state.settings.schedule_min_interval_seconds).await?;
    let input = body.input.unwrap_or_else(|| cur.input.0.clone());
    check_input(&input)?;
    let run_as = match body.run_as {
        None => cur.run_as_user.clone(),
        Some(Value::Null) => None,
        Some(v) => {
            let r: RunAs = serde_json::from_value(v)
                .map_err(|_| ApiError::invalid("run_as must be {\"user_id\": <string>} or null"))?;
            check_user(&r.user_id)?;
            may_act_as_users(&key)?;
            Some(r.user_id)
        }
    };
    let paused = body.paused.unwrap_or(cur.paused);
    let moved = cron != cur.cron || timezone != cur.timezone || (cur.paused && !paused);
    let next_due_at = if moved {
        spec.next_after(Utc::now())
    } else {
        cur.next_due_at
    };
    let fields = Fields {
        cron,
        timezone,
        input: &input,
        run_as_user: run_as.as_deref(),
        overlap: body.overlap.map(overlap_str).unwrap_or(&cur.overlap),
        catch_up: body.catch_up.map(catch_up_str).unwrap_or(&cur.catch_up),
        paused,
        next_due_at,
    };
    let s = schedules::update(&state.pool, &key.org, &cur.id, &fields)
        .await
        .map_err(or_not_found("schedule"))?;
    audit::updated(
        &state,
        &key.org,
        key.actor(),
        ("schedule", &s.id),
        &cur,
        &s,
        &[],
    )
    .await?;
    Ok(HttpResponse::Ok().json(view(&state, &key.org, s).await?))
}

/// Delete a schedule; the runs it made are kept (until retention).
///
/// Answers `204`.
#[utoipa::path(delete, operation_id = "deleteSchedule", path = "/v1/schedules/{schedule_id}", tag = "studio",
    responses((status = 204), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn delete(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let before = schedules::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("schedule"))?;
    schedules::delete(&state.pool, &key.org, &before.id)
        .await
        .map_err(or_not_found("schedule"))?;
    audit::deleted(
        &state,
        &key.org,
        key.actor(),
        ("schedule", &before.id),
        Some(&before),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `run_as` makes runs act as an end user, with that user's connections: only a key that
/// could already act as any of the org's users (scope `mint`, which mints their runtime
/// tokens) may name one; a `studio`-only key would otherwise gain what it never had.
fn may_act_as_users(key: &Studio) -> Result<(), ApiError> {
    if key.scopes.contains(&Scope::Mint) {
        Ok(())
    } else {
        Err(ApiError::Forbidden(
            "run_as acts as an end user: it needs a key with scope `mint` as well as `studio`"
                .into(),
        ))
    }
}
