//! `captcha-dlq accounts resume [--provider P]`: ends an account hold at once. A zero balance
//! holds a provider's tasks (waiting for a top-up, one balance check for the whole fleet every
//! `circuit.account_probe_ms`); after a top-up an operator says so here instead of waiting for
//! that check. The client tells the fleet ledger (its last sync as it closes), so every client
//! on the store holding for the account resumes; the resume is audited under `--as`.
//!
//! The account is the key's at the provider the global options name: `--provider P` (a preset
//! or a v1 URL, with `--api-key`), or each of `--providers` (one of them with `--only NAME`).

use captcha_dlq::{Error, Operator};
use clap::Subcommand;
use serde_json::json;

use super::{audit::operator_name, client, exit, Global};

#[derive(Debug, Subcommand)]
pub enum AccountsCommand {
    /// End the hold of a provider's account (after a top-up) for every client on the store.
    Resume {
        /// With `--providers`: only the provider of this name (every one without it).
        #[arg(long, value_name = "NAME")]
        only: Option<String>,
    },
}

pub(crate) async fn run(global: &Global, command: AccountsCommand) -> Result<u8, Error> {
    let AccountsCommand::Resume { only: provider } = command;
    let operator = Operator::new(&operator_name(global))?;
    let client = client(global).await?;
    let resumed = client.resume_accounts(provider.as_deref(), &operator).await;
    // Closing sends the client's last fleet report, which carries the resume to the ledger.
    client.close().await;
    let resumed = resumed?;
    if global.json {
        println!("{}", json!({ "ok": true, "resumed": resumed, "provider": provider, "operator": operator.as_str() }));
    } else if resumed.is_empty() {
        println!("no provider of this client was holding; every client on the store is told the account works");
    } else {
        println!("resumed: {} (every client on the store resumes with its next sync)", resumed.join(", "));
    }
    Ok(exit::OK)
}
