//! `captcha-dlq dashboard`: the operator dashboard over the configured DLQ,
//! on loopback unless given a token, until interrupted.

use captcha_dlq::{Client, Error};
use captcha_dlq_dashboard::{parse_listen, DashboardConfig, DashboardOptions, DEFAULT_LISTEN, TOKEN_ENV};
use clap::Args as ClapArgs;

use super::{exit, Global};

#[derive(Debug, ClapArgs)]
pub struct DashboardArgs {
    /// Address to listen on. Anything but loopback needs --token.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: String,
    /// Hide and refuse every action (replay, park, purge, recover).
    #[arg(long)]
    pub read_only: bool,
    /// Token required to use the dashboard (at least 16 characters); needed off loopback.
    #[arg(long, env = TOKEN_ENV, hide_env_values = true)]
    pub token: Option<String>,
}

impl DashboardArgs {
    /// The checked options: a public address without a token is refused here, before
    /// anything is opened.
    pub fn options(&self) -> Result<DashboardOptions, Error> {
        let listen = parse_listen(&self.listen).map_err(|e| config_error(&e))?;
        let config =
            DashboardConfig { read_only: self.read_only, token: self.token.clone(), ..DashboardConfig::default() };
        let options = DashboardOptions { listen, config };
        options.validate().map_err(|e| config_error(&e))?;
        Ok(options)
    }
}

fn config_error(e: &captcha_dlq_dashboard::DashboardError) -> Error {
    Error::Config(captcha_dlq::core::ConfigError::new("dashboard", e.to_string()))
}

/// Stands in for the key of a dashboard started without one: `solving: false` keeps it
/// from ever being sent (replays, recovery and the balance are refused).
const NO_KEY: &str = "no-api-key-given";

pub async fn run(global: &Global, args: DashboardArgs) -> Result<u8, Error> {
    let mut options = args.options()?;
    let client = match &global.api_key {
        Some(_) => super::client(global).await?,
        None => {
            eprintln!(
                "no API key (--api-key or CAPTCHA_DLQ_API_KEY): replays, recovery and the balance are off; the rest works"
            );
            options.config.solving = false;
            let offline = Global { api_key: Some(NO_KEY.to_string()), ..global.clone() };
            super::client(&offline).await?
        }
    };
    let code = serve_until_interrupted(&client, options, &global.dlq).await;
    client.close().await;
    code
}

/// Serves the dashboard of `client` until Ctrl-C.
pub async fn serve_until_interrupted(client: &Client, options: DashboardOptions, dlq: &str) -> Result<u8, Error> {
    let read_only = options.config.read_only;
    let token = options.config.token.is_some();
    let handle = captcha_dlq_dashboard::serve(client.clone(), options)
        .await
        .map_err(|e| Error::Io(format!("dashboard: {e}")))?;
    let mut banner = format!("captcha-dlq dashboard for {dlq} at {}\n", handle.url());
    if read_only {
        banner.push_str("read-only: actions are hidden and refused\n");
    }
    if token {
        banner.push_str("log in with the token you gave (it is not printed)\n");
    }
    banner.push_str(&format!("metrics at {}metrics · Ctrl-C to stop\n", handle.url()));
    // A server outlives whoever read its banner: stdout closed (a supervisor that read the URL
    // and went away) is no reason to stop serving, so a failed write is only logged.
    if let Err(e) = std::io::Write::write_all(&mut std::io::stdout().lock(), banner.as_bytes())
        .and_then(|()| std::io::Write::flush(&mut std::io::stdout()))
    {
        tracing::debug!(target: "captcha_dlq", error = %e, "the dashboard's banner could not be written");
    }
    let _ = tokio::signal::ctrl_c().await;
    handle.shutdown().await;
    Ok(exit::OK)
}
