//! `captcha-dlq`: solve CAPTCHAs from the shell and operate the dead-letter queue.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    cli::init_logging(args.global.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(cli::exit::INTERNAL);
        }
    };
    let code = runtime.block_on(cli::run(args));
    ExitCode::from(code)
}
