//! D4: a connected-app call the upstream answers 401 gets one forced refresh of the
//! user's connection and one retry; refused again, the connection is broken and the call
//! answers `connect_required`. Other tools' calls are fetched once, as they are.

use secrecy::ExposeSecret;

use crate::auth::Caller;
use crate::call::{BoundTool, Runtime, RuntimeError};
use crate::store::tools::ToolKind;
use crate::walk::run_tool::{CacheUse, Fetched};
use loopgate_engine::{CallPlan, EngineError, ProgressSink};

fn unauthorized(e: &RuntimeError) -> bool {
    matches!(
        e,
        RuntimeError::Engine(EngineError::Upstream {
            status: Some(401),
            ..
        })
    )
}

impl Runtime {
    /// The call's credential, then the walk; for a connected app, once more after a 401.
    /// What a walk learned of the tool's paging is kept (P14).
    pub(crate) async fn fetch_credentialed<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        plan: &CallPlan,
        cache: CacheUse,
        progress: &P,
    ) -> Result<Fetched, RuntimeError> {
        let fetched = self
            .fetch_once_or_refreshed(caller, bound, plan, cache, progress)
            .await?;
        if fetched.hit.is_none() {
            self.keep_learned(caller.org(), bound, &fetched.outcome)
                .await;
        }
        Ok(fetched)
    }

    async fn fetch_once_or_refreshed<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        plan: &CallPlan,
        cache: CacheUse,
        progress: &P,
    ) -> Result<Fetched, RuntimeError> {
        let credential = self.credential(caller, bound).await?;
        if bound.tool.kind != ToolKind::App {
            return self
                .walker
                .fetch(caller, bound, plan, credential, cache, progress)
                .await;
        }
        let sent = credential
            .secret()
            .map(|s| s.expose_secret().to_string())
            .unwrap_or_default();
        match self
            .walker
            .fetch(caller, bound, plan, credential, cache, progress)
            .await
        {
            Err(e) if unauthorized(&e) => {
                tracing::info!(provider = %bound.provider.id, "the upstream refused the connection's token (401); refreshing once");
                let again = self.connection_after_401(caller, bound, &sent).await?;
                match self
                    .walker
                    .fetch(caller, bound, plan, again, cache, progress)
                    .await
                {
                    Err(e) if unauthorized(&e) => {
                        Err(self.connection_refused(caller, bound).await?)
                    }
                    other => other,
                }
            }
            other => other,
        }
    }
}
