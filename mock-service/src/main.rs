//! `captcha-dlq-mock`: runs the mock solver for tests in other languages.
//!
//! Prints exactly one line, `listening http://127.0.0.1:PORT`, once bound, then serves until killed.

use std::io::Write as _;
use std::process::ExitCode;

use captcha_dlq_mock::{MockConfig, MockSolver};
use clap::Parser;

/// A scriptable mock CAPTCHA solving service (2captcha v1 and createTask JSON) on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(name = "captcha-dlq-mock", version)]
struct Args {
    /// Port to listen on; 0 picks a free port (overrides the config's port).
    #[arg(long)]
    port: Option<u16>,
    /// The script: a JSON object, or the path of a file holding one.
    #[arg(long)]
    config: Option<String>,
}

fn load(config: Option<&str>) -> Result<MockConfig, String> {
    let Some(config) = config else {
        return Ok(MockConfig::default());
    };
    let text = if config.trim_start().starts_with('{') {
        config.to_string()
    } else {
        std::fs::read_to_string(config).map_err(|e| format!("cannot read config file {config}: {e}"))?
    };
    MockConfig::from_json(&text)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let mut config = match load(args.config.as_deref()) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("captcha-dlq-mock: {message}");
            return ExitCode::from(2);
        }
    };
    if let Some(port) = args.port {
        config.port = port;
    }
    let mock = match MockSolver::start(config).await {
        Ok(mock) => mock,
        Err(e) => {
            eprintln!("captcha-dlq-mock: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "listening {}", mock.base_url()).and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    drop(stdout);
    let _ = tokio::signal::ctrl_c().await;
    mock.shutdown().await;
    ExitCode::SUCCESS
}
