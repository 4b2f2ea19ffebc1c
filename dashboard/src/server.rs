//! The dashboard on its own address: checked (no public address without a
//! token), bound, served until shut down.

use std::net::SocketAddr;

use captcha_dlq_client::Client;
use tokio::sync::oneshot;

use crate::config::DashboardOptions;
use crate::error::DashboardError;

/// A running dashboard.
#[derive(Debug)]
pub struct DashboardHandle {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl DashboardHandle {
    /// The address it listens on (the real port when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:8787/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops accepting connections and waits for the requests being answered.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
    }

    /// Waits until the server stops (an error if it failed).
    pub async fn wait(mut self) -> std::io::Result<()> {
        match (&mut self.task).await {
            Ok(result) => result,
            Err(e) => Err(std::io::Error::other(format!("the dashboard server stopped: {e}"))),
        }
    }
}

/// Serves the dashboard of `client` on `options.listen` in the background, on the current
/// tokio runtime. Refuses a non-loopback address without a token, saying why.
pub async fn serve(client: Client, options: DashboardOptions) -> Result<DashboardHandle, DashboardError> {
    options.validate()?;
    let mut config = options.config.clone();
    // Listening on loopback without a token: answer only loopback names (DNS rebinding).
    config.loopback_only = !config.has_tokens();
    let app = crate::router(client, config)?;
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|error| DashboardError::Bind { listen: options.listen, error })?;
    let addr = listener.local_addr().map_err(|error| DashboardError::Bind { listen: options.listen, error })?;
    let (tx, rx) = oneshot::channel::<()>();
    let service = app.into_make_service_with_connect_info::<SocketAddr>();
    let task = tokio::spawn(async move {
        axum::serve(listener, service)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await
    });
    tracing::info!(target: "captcha_dlq", %addr, "dashboard listening");
    Ok(DashboardHandle { addr, shutdown: Some(tx), task })
}
