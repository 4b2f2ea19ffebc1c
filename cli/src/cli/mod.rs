//! Command-line arguments, dispatch and exit codes.

mod accounts;
mod audit;
mod batch;
mod dashboard;
mod demo;
mod dlq;
mod edit;
mod fleet;
mod recover;
mod replay_print;
mod selection;
mod spend;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Arc;

use captcha_dlq::core::dlq::DlqStore;
use captcha_dlq::core::support::json_read::FromJson;
use captcha_dlq::core::ConfigError;
use captcha_dlq::options::Durability;
use captcha_dlq::{Client, ClientBuilder, Error, Task};
use clap::{Args as ClapArgs, Parser, Subcommand};
use serde_json::json;

/// Exit codes, documented in `--help` and the README.
pub mod exit {
    pub const OK: u8 = 0;
    /// At least one task was dead-lettered (its record is in the DLQ).
    pub const TASKS_FAILED: u8 = 1;
    /// Bad arguments or bad input (clap uses 2 as well).
    pub const USAGE: u8 = 2;
    /// The account cannot work: wrong key, no balance, IP not allowed.
    pub const ACCOUNT: u8 = 3;
    /// The DLQ store could not be opened or written (corrupt file, unreachable Redis), or a
    /// write was given up during the run (durability was lost for some task: see stderr).
    pub const STORE: u8 = 4;
    /// The provider could not be reached or answered garbage.
    pub const NETWORK: u8 = 5;
    pub const INTERNAL: u8 = 70;
}

const AFTER_HELP: &str = "\
Exit codes: 0 ok · 1 some task was dead-lettered · 2 bad arguments or input · 3 account error
            (wrong key, no balance) · 4 DLQ store error (could not open, or a write was given up)
            · 5 provider unreachable or garbled · 70 internal

The API key is read from --api-key or CAPTCHA_DLQ_API_KEY and is never printed.";

#[derive(Debug, Parser)]
#[command(name = "captcha-dlq", version, about = "Solve CAPTCHAs through solving services without losing a task", after_help = AFTER_HELP)]
pub struct Args {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Debug, ClapArgs)]
pub struct Global {
    /// API key of the solving service.
    #[arg(long, env = "CAPTCHA_DLQ_API_KEY", hide_env_values = true, global = true)]
    pub api_key: Option<String>,
    /// Provider preset (captchaai, 2captcha, rucaptcha, anti-captcha, capsolver, 2captcha-v2, capmonster) or a v1
    /// base URL [default: captchaai].
    #[arg(long, env = "CAPTCHA_DLQ_PROVIDER", global = true)]
    pub provider: Option<String>,
    /// Several providers, as JSON or @FILE: [{"provider": "capsolver", "api_key": "…"}, {"provider": "2captcha",
    /// "api_key": "…", "base_url"?, "name"?, "price"?}]. Tasks fail over in list order (see --routing).
    #[arg(long, env = "CAPTCHA_DLQ_PROVIDERS", hide_env_values = true, global = true)]
    pub providers: Option<String>,
    /// How tasks are spread over several providers: ordered (failover in list order), fastest, cheapest, accepted.
    #[arg(long, global = true, value_parser = ["ordered", "fastest", "cheapest", "accepted"])]
    pub routing: Option<String>,
    /// Stop submitting once this much was spent (reported costs, else configured prices).
    #[arg(long, global = true)]
    pub budget: Option<f64>,
    /// Send the provider's protocol to this base URL instead (a mock, a relay).
    #[arg(long, global = true)]
    pub base_url: Option<String>,
    /// The DLQ: a SQLite file, `memory`, or a Redis URL (`redis://`, `rediss://`, `redis+cluster://`,
    /// `rediss+cluster://`; `?namespace=NAME`, and `ca=FILE` for TLS: see the README).
    #[arg(long, env = "CAPTCHA_DLQ_PATH", default_value = "captcha-dlq.sqlite", global = true)]
    pub dlq: String,
    /// Client options as JSON, or @FILE: engine policy (retry, polling, rate, circuit), store,
    /// alerts (webhooks), dlq_retention (see the README).
    #[arg(long, global = true)]
    pub config: Option<String>,
    /// Machine-readable output (JSON).
    #[arg(long, global = true)]
    pub json: bool,
    /// Allow plain http to a non-loopback host (the key travels unencrypted).
    #[arg(long, global = true)]
    pub insecure_http: bool,
    /// HTTP or SOCKS5 proxy for this client's own traffic.
    #[arg(long, global = true)]
    pub proxy: Option<String>,
    /// What a committed DLQ write survives: process (the process being killed; default) or
    /// power_loss (a SQLite DLQ syncs every commit to disk; other DLQs refuse it).
    #[arg(long, env = "CAPTCHA_DLQ_DURABILITY", global = true)]
    pub durability: Option<String>,
    /// Who the `dlq` actions (replay, purge, park, unpark, import) are recorded as in the audit
    /// trail [default: cli:$USER@HOST].
    #[arg(long = "as", value_name = "NAME", env = "CAPTCHA_DLQ_OPERATOR", global = true)]
    pub operator: Option<String>,
    /// More log output on stderr (-v: info, -vv: debug).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the seeds' batch against the embedded mock solver (no key needed).
    Demo(demo::DemoArgs),
    /// Solve one task and print the answer.
    Solve(SolveArgs),
    /// Solve a JSON-lines file of tasks; one JSON line out per task as it ends (completion
    /// order). Resumable: run the same command again after a kill.
    Batch(batch::BatchArgs),
    /// Inspect, analyse and replay the dead-letter queue.
    #[command(subcommand)]
    Dlq(dlq::DlqCommand),
    /// Resume tasks a killed process left in flight (or dead-letter them with --interrupt).
    Recover(recover::RecoverArgs),
    /// Serve the operator dashboard over the DLQ (overview, records, groups, journal,
    /// replays) and Prometheus /metrics; loopback only unless given a token.
    Dashboard(dashboard::DashboardArgs),
    /// Print the account balance (of each provider, with several).
    Balance,
    /// The clients sharing the DLQ store (host, pid, started, last heartbeat, tasks in flight)
    /// and each provider account's shared limits (window, pause, account error).
    Fleet,
    /// Provider accounts: end a hold (a zero balance waiting for a top-up) at once.
    #[command(subcommand)]
    Accounts(accounts::AccountsCommand),
    /// What was spent, by provider, task kind and label, from saved `batch` results.
    Spend(spend::SpendArgs),
    /// Run the mock solving service until interrupted.
    MockServer {
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Mock script as JSON, or @FILE.
        #[arg(long)]
        config: Option<String>,
    },
}

#[derive(Debug, ClapArgs)]
pub struct SolveArgs {
    /// The task as JSON, e.g. '{"type":"recaptcha_v2","sitekey":"…","page_url":"https://…"}'.
    #[arg(long, conflicts_with_all = ["kind", "sitekey", "page_url"])]
    pub task: Option<String>,
    /// Task type when not using --task (every kind of docs/kinds.md; the list is the core's).
    #[arg(long = "type", value_parser = task_kinds())]
    pub kind: Option<String>,
    #[arg(long)]
    pub sitekey: Option<String>,
    #[arg(long)]
    pub page_url: Option<String>,
    /// Label the task (KEY=VALUE, repeatable); labels are kept in its DLQ record.
    #[arg(long = "label", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
}

/// The kinds `--type` takes, from the core's kind declarations.
fn task_kinds() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(captcha_dlq::core::TaskKind::ALL.map(|k| k.as_str()))
}

pub(crate) fn parse_label(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))
}

pub fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "captcha_dlq=warn",
        1 => "captcha_dlq=info",
        _ => "captcha_dlq=debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAPTCHA_DLQ_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}

pub async fn run(args: Args) -> u8 {
    let result = match args.command {
        Command::Demo(demo) => demo::run(&args.global, demo).await,
        Command::MockServer { port, config } => mock_server(port, config).await,
        Command::Dlq(cmd) => dlq::run(&args.global, cmd).await,
        Command::Solve(solve) => solve_one(&args.global, solve).await,
        Command::Batch(batch) => batch::run(&args.global, batch).await,
        Command::Recover(recover) => recover::run(&args.global, recover).await,
        Command::Dashboard(dashboard) => dashboard::run(&args.global, dashboard).await,
        Command::Balance => balance(&args.global).await,
        Command::Fleet => fleet::run(&args.global).await,
        Command::Accounts(command) => accounts::run(&args.global, command).await,
        Command::Spend(spend) => spend::run(&args.global, spend).await,
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            report_error(&e, args.global.json);
            exit_code_of(&e)
        }
    }
}

pub(crate) fn report_error(e: &Error, json_output: bool) {
    if json_output {
        println!("{}", json!({ "ok": false, "code": e.code(), "error": e.to_string() }));
    } else {
        eprintln!("error: {e}");
    }
}

pub(crate) fn exit_code_of(e: &Error) -> u8 {
    match e {
        _ if e.is_account_error() => exit::ACCOUNT,
        Error::SolveFailed { .. } => exit::TASKS_FAILED,
        Error::InvalidTask(_) | Error::Config(_) | Error::Io(_) => exit::USAGE,
        Error::Store(_) => exit::STORE,
        Error::Provider(_) => exit::NETWORK,
        Error::Cancelled { .. } | Error::Closed => exit::INTERNAL,
    }
}

/// How a run that solved or dead-lettered tasks ends: a store write given up beats
/// everything (durability was lost and the user must know), then an account error, then
/// an unreachable provider, then any dead-lettered task.
#[derive(Debug, Default)]
pub(crate) struct RunVerdict {
    pub failed: usize,
    pub account: bool,
    pub invalid: usize,
}

impl RunVerdict {
    pub(crate) fn count(&mut self, error: &Error) {
        self.failed += 1;
        self.account |= error.is_account_error();
    }

    /// The exit code, after telling stderr about a store failure.
    pub(crate) async fn exit_code(&self, client: &Client) -> u8 {
        let health = client.store_health();
        let unreachable = client.status().await.map(|s| s.unreachable_episodes > 0).unwrap_or(false);
        if health.failures > 0 {
            eprintln!(
                "error: {} write(s) to the DLQ store were given up ({}); the affected tasks are in the output with \"stored\": false or will be delivered again by `recover`",
                health.failures,
                health.last_error.as_deref().unwrap_or("unknown error")
            );
            exit::STORE
        } else if self.account {
            exit::ACCOUNT
        } else if unreachable && self.failed > 0 {
            exit::NETWORK
        } else if self.failed > 0 {
            exit::TASKS_FAILED
        } else if self.invalid > 0 {
            exit::USAGE
        } else {
            exit::OK
        }
    }
}

/// `--durability`, read by the core's rules (the default when not given).
fn durability(global: &Global) -> Result<Durability, Error> {
    let Some(given) = &global.durability else { return Ok(Durability::default()) };
    Durability::from_json(json!(given)).map_err(|e| Error::Config(ConfigError::new("--durability", e.problem)))
}

/// Reads `--config`: inline JSON, or `@path`.
pub(crate) fn read_json_arg(field: &str, value: &str) -> Result<String, Error> {
    match value.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|e| Error::Io(format!("{field}: cannot read {path}: {e}"))),
        None => Ok(value.to_string()),
    }
}

/// A client with the options the global flags give (`--config`, `--providers`, `--dlq`…).
pub(crate) async fn client(global: &Global) -> Result<Client, Error> {
    builder(global)?.build().await
}

/// The DLQ the global flags name, for the commands that only read or edit the store. Every
/// option is checked as for a client (a broken `--config` is reported here too), but no API
/// key is needed.
pub(crate) async fn store(global: &Global) -> Result<Arc<dyn DlqStore>, Error> {
    builder(global)?.open_store().await
}

/// The `dlq_retention` section of `--config`, checked, for `dlq retain`.
pub(crate) fn retention(global: &Global) -> Result<Option<captcha_dlq::core::dlq::retention::RetentionOptions>, Error> {
    Ok(builder(global)?.store_only_options()?.dlq_retention)
}

fn builder(global: &Global) -> Result<ClientBuilder, Error> {
    let mut builder = captcha_dlq::builder().dlq(global.dlq.clone()).allow_insecure_http(global.insecure_http);
    if let Some(list) = &global.providers {
        let text = read_json_arg("--providers", list)?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::Config(ConfigError::new("--providers", format!("not valid JSON: {e}"))))?;
        for (given, flag, env) in [
            (global.api_key.is_some(), "--api-key", " (unset CAPTCHA_DLQ_API_KEY if it comes from there)"),
            (global.provider.is_some(), "--provider", " (unset CAPTCHA_DLQ_PROVIDER if it comes from there)"),
            (global.base_url.is_some(), "--base-url", ""),
        ] {
            if given {
                return Err(Error::Config(ConfigError::new(
                    flag,
                    format!("cannot be combined with --providers: give each provider its own in the list{env}"),
                )));
            }
        }
        builder = builder.option("providers", value);
    }
    if let Some(provider) = &global.provider {
        builder = builder.provider(provider.clone());
    }
    if let Some(key) = &global.api_key {
        builder = builder.api_key(key.clone());
    }
    if let Some(url) = &global.base_url {
        builder = builder.base_url(url.clone());
    }
    if let Some(routing) = &global.routing {
        builder = builder.option("routing", json!(routing));
    }
    if let Some(budget) = global.budget {
        builder = builder.option("budget", json!(budget));
    }
    if let Some(proxy) = &global.proxy {
        builder = builder.proxy(proxy.clone());
    }
    // `store` from --config, with --durability added to it.
    let mut store_section: Option<serde_json::Value> = None;
    if let Some(cfg) = &global.config {
        // Sections of the engine policy, read over the provider's documented defaults.
        let text = read_json_arg("--config", cfg)?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::Config(ConfigError::new("--config", format!("not valid JSON: {e}"))))?;
        let serde_json::Value::Object(sections) = value else {
            return Err(Error::Config(ConfigError::new("--config", "expected a JSON object like {\"retry\": {…}}")));
        };
        for (name, section) in sections {
            if name == "store" {
                store_section = Some(section);
            } else {
                builder = builder.option(&name, section);
            }
        }
    }
    if let Some(given) = &global.durability {
        // The flag's own value is named as the flag; `store.durability` is --config's.
        durability(global)?;
        durability_option(&mut store_section, given)?;
    }
    if let Some(store) = store_section {
        builder = builder.option("store", store);
    }
    Ok(builder)
}

/// Puts `--durability` into the client's `store` options (beside what --config gave there).
fn durability_option(store: &mut Option<serde_json::Value>, durability: &str) -> Result<(), Error> {
    match store.get_or_insert_with(|| json!({})) {
        serde_json::Value::Object(section) => {
            section.insert("durability".into(), json!(durability));
            Ok(())
        }
        _ => Err(Error::Config(ConfigError::new("--config", "`store` must be an object like {\"timeout_ms\": 5000}"))),
    }
}

async fn solve_one(global: &Global, args: SolveArgs) -> Result<u8, Error> {
    let task = match args.task {
        Some(json) => Task::from_json_str(&json)?,
        None => {
            let mut obj = serde_json::Map::new();
            obj.insert("type".into(), json!(args.kind.unwrap_or_else(|| "recaptcha_v2".into())));
            if let Some(s) = args.sitekey {
                obj.insert("sitekey".into(), json!(s));
            }
            if let Some(p) = args.page_url {
                obj.insert("page_url".into(), json!(p));
            }
            Task::from_json_value(serde_json::Value::Object(obj))?
        }
    };
    let client = client(global).await?;
    let labels: BTreeMap<String, String> = args.labels.into_iter().collect();
    let outcome = match client.submit(task, labels, None).await {
        Ok(handle) => handle.outcome().await.and_then(captcha_dlq::Outcome::into_delivery),
        Err(e) => Err(e),
    };
    let mut verdict = RunVerdict::default();
    match outcome {
        Ok(delivery) => {
            if global.json {
                println!("{}", json!({ "ok": true, "id": delivery.id, "solution": delivery.solution }));
            } else {
                println!("{}", delivery.solution.text);
            }
            flush_stdout()?;
            delivery.receipt.ack();
        }
        Err(e) if matches!(e, Error::SolveFailed { .. }) => {
            verdict.count(&e);
            report_dead_letter(&e, global.json);
        }
        Err(e) => {
            client.close().await;
            return Err(e);
        }
    }
    let code = verdict.exit_code(&client).await;
    client.close().await;
    Ok(code)
}

/// Prints a dead-lettered task: JSON on stdout, or a line on stderr.
fn report_dead_letter(e: &Error, json_output: bool) {
    let Error::SolveFailed { record, stored } = e else { return };
    if json_output {
        println!("{}", json!({ "ok": false, "code": e.code(), "stored": stored, "record": record }));
    } else {
        eprintln!(
            "dead-lettered {}: {} ({}, attempts: {}){}",
            record.id,
            record.reason,
            record.description,
            record.attempts,
            if *stored { "" } else { " — the DLQ write failed; this line is the only copy of the record" }
        );
    }
}

/// Makes what was printed durable in the pipe before its journal entry may go.
pub(crate) fn flush_stdout() -> Result<(), Error> {
    use std::io::Write;
    std::io::stdout().flush().map_err(|e| Error::Io(format!("cannot write results: {e}")))
}

async fn balance(global: &Global) -> Result<u8, Error> {
    let client = client(global).await?;
    if client.options().providers().len() > 1 {
        let balances = client.balances().await;
        client.close().await;
        return print_balances(balances, global.json);
    }
    let balance = client.balance().await;
    client.close().await;
    let balance = balance?;
    if global.json {
        println!("{}", json!({ "ok": true, "balance": balance }));
    } else {
        println!("{balance}");
    }
    Ok(exit::OK)
}

/// One line per provider (`name: balance` or `name: error`); the exit code of the first
/// failure, if any.
fn print_balances(balances: Vec<(String, Result<f64, Error>)>, json_output: bool) -> Result<u8, Error> {
    let mut code = exit::OK;
    let mut out = serde_json::Map::new();
    for (name, balance) in balances {
        match balance {
            Ok(b) => {
                if !json_output {
                    println!("{name}: {b}");
                }
                out.insert(name, json!({ "ok": true, "balance": b }));
            }
            Err(e) => {
                if !json_output {
                    println!("{name}: error: {e}");
                }
                if code == exit::OK {
                    code = exit_code_of(&e);
                }
                out.insert(name, json!({ "ok": false, "code": e.code(), "error": e.to_string() }));
            }
        }
    }
    if json_output {
        println!("{}", json!({ "ok": code == exit::OK, "balances": out }));
    }
    Ok(code)
}

async fn mock_server(port: u16, config: Option<String>) -> Result<u8, Error> {
    let mut cfg = match config {
        Some(c) => captcha_dlq_mock::MockConfig::from_json(&read_json_arg("--config", &c)?).map_err(Error::Io)?,
        None => captcha_dlq_mock::MockConfig::default(),
    };
    if port != 0 {
        cfg.port = port;
    }
    let handle = captcha_dlq_mock::MockSolver::start(cfg).await.map_err(|e| Error::Io(format!("mock server: {e}")))?;
    println!("listening {}", handle.base_url());
    let _ = tokio::signal::ctrl_c().await;
    handle.shutdown().await;
    Ok(exit::OK)
}
