//! The `loopgate` binary: `serve` runs the HTTP service, `migrate` applies migrations.

use anyhow::Context;
use clap::{Parser, Subcommand};
use secrecy::ExposeSecret;

use loopgate::app::startup::Application;
use loopgate::config::settings::Settings;

#[derive(Parser)]
#[command(name = "loopgate", version, about = "Tool-call gateway for AI agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Migrate the database, then serve HTTP on the configured bind address.
    Serve,
    /// Apply pending database migrations and exit.
    Migrate,
    /// Print the OpenAPI document (as committed in openapi/openapi.json).
    Openapi,
}

/// A failure is one line on stderr — what failed and why, e.g. `loopgate: invalid
/// configuration: LOOPGATE_TOKEN_SIGNING_KEY must be at least 32 bytes` — never a
/// backtrace, whatever `RUST_BACKTRACE` says, and exit status 1.
#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            let line = format!("{e:#}")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            eprintln!("loopgate: {line}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let telemetry = loopgate::telemetry::init();
    let outcome = serve(Cli::parse()).await;
    // queued spans are sent before the process ends
    telemetry.shutdown().await;
    outcome
}

async fn serve(cli: Cli) -> anyhow::Result<()> {
    if let Command::Openapi = cli.command {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", loopgate::api::openapi_doc::openapi_json())?;
        return Ok(());
    }
    let settings = Settings::load()?;
    match cli.command {
        Command::Serve => {
            let app = Application::build(settings).await?;
            tracing::info!(port = app.port(), "loopgate listening");
            app.run_until_signalled().await?;
        }
        Command::Migrate => {
            let url = settings.database_url.context(
                "missing required configuration: DATABASE_URL (or LOOPGATE_DATABASE_URL)",
            )?;
            let pool = loopgate::store::connect(url.expose_secret(), 2)
                .await
                .context("could not connect to Postgres")?;
            loopgate::store::migrate(&pool)
                .await
                .context("migration failed")?;
            tracing::info!("migrations applied");
        }
        Command::Openapi => {}
    }
    Ok(())
}
