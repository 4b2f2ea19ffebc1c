//! `captcha-dlq dashboard`: the operator dashboard over the configured DLQ,
//! on loopback unless given a token, until interrupted.

use captcha_dlq::core::support::json_read::{read_cased, Casing};
use captcha_dlq::core::ConfigError;
use captcha_dlq::{Client, Error};
use captcha_dlq_dashboard::{
    parse_listen, DashboardConfig, DashboardOptions, NamedToken, TlsFiles, DEFAULT_LISTEN, TOKEN_ENV,
};
use clap::Args as ClapArgs;

use super::{exit, Global};

#[derive(Debug, ClapArgs)]
pub struct DashboardArgs {
    /// Address to listen on. Anything but loopback needs --token or --tokens-file.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: String,
    /// Hide and refuse every action (replay, park, purge, recover).
    #[arg(long)]
    pub read_only: bool,
    /// Token required to use the dashboard (at least 16 characters); needed off loopback.
    #[arg(long, env = TOKEN_ENV, hide_env_values = true)]
    pub token: Option<String>,
    /// Named tokens, each a viewer's (sees everything, changes nothing) or an operator's: a JSON
    /// file of [{"name": "alice", "token": "…", "role": "operator"}, …]. The audit trail names
    /// whoever acts by their token's name (--token is one more operator, named "default").
    #[arg(long, env = TOKENS_FILE_ENV)]
    pub tokens_file: Option<std::path::PathBuf>,
    /// Serve HTTPS (rustls) with this PEM certificate chain (leaf first); needs --tls-key.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Browsers reach this dashboard through a proxy that terminates HTTPS: the session cookie
    /// is marked Secure (as it is with --tls-cert).
    #[arg(long)]
    pub behind_https_proxy: bool,
    /// A login session unused this long ends (ms; default 30 minutes).
    #[arg(long, default_value_t = captcha_dlq_dashboard::DEFAULT_SESSION_IDLE_MS)]
    pub session_idle_ms: u64,
    /// A login session ends this long after the login, however much it is used (ms; default 12 hours).
    #[arg(long, default_value_t = captcha_dlq_dashboard::DEFAULT_SESSION_MAX_MS)]
    pub session_max_ms: u64,
}

/// The environment variable naming the tokens file.
pub const TOKENS_FILE_ENV: &str = "CAPTCHA_DLQ_DASHBOARD_TOKENS_FILE";

/// The named tokens of `file` (see `--tokens-file`); errors name the file and the field, never a
/// token.
fn read_tokens(file: &std::path::Path) -> Result<Vec<NamedToken>, Error> {
    let problem =
        |what: String| Error::Config(ConfigError::new("--tokens-file", format!("{}: {what}", file.display())));
    let text = std::fs::read_to_string(file).map_err(|e| problem(format!("cannot read it: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| problem(format!("not JSON (line {}): {}", e.line(), e.classify_name())))?;
    read_cased::<Vec<NamedToken>>(value, Casing::Snake)
        .map_err(|e| problem(format!("{}: {}", e.field_under("tokens"), e.problem)))
}

/// How a JSON error is named without quoting the text (which holds tokens).
trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "it could not be read",
            serde_json::error::Category::Syntax => "a syntax error",
            serde_json::error::Category::Data => "unexpected data",
            serde_json::error::Category::Eof => "it ends too early",
        }
    }
}

impl DashboardArgs {
    /// The checked options: a public address without a token is refused here, before
    /// anything is opened.
    pub fn options(&self) -> Result<DashboardOptions, Error> {
        let listen = parse_listen(&self.listen).map_err(|e| config_error(&e))?;
        let tokens = match &self.tokens_file {
            Some(file) => read_tokens(file)?,
            None => Vec::new(),
        };
        let config = DashboardConfig {
            read_only: self.read_only,
            token: self.token.clone(),
            tokens,
            https: self.behind_https_proxy,
            session_idle_ms: self.session_idle_ms,
            session_max_ms: self.session_max_ms,
            ..DashboardConfig::default()
        };
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert: cert.clone(), key: key.clone() }),
            _ => None,
        };
        let options = DashboardOptions { listen, config, tls };
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
    let token = options.config.has_tokens();
    let handle = captcha_dlq_dashboard::serve(client.clone(), options)
        .await
        .map_err(|e| Error::Io(format!("dashboard: {e}")))?;
    let mut banner = format!("captcha-dlq dashboard for {dlq} at {}\n", handle.url());
    if read_only {
        banner.push_str("read-only: actions are hidden and refused\n");
    }
    if token {
        banner.push_str("log in with a token you gave (none is printed)\n");
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
