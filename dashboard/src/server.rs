//! The dashboard on its own address: checked (no public address without a
//! token), bound, served until shut down; over HTTPS (rustls, through axum-server) when
//! given a certificate and key, so tokens and session cookies never cross the network in
//! cleartext.

use std::net::SocketAddr;

use captcha_dlq_client::Client;
use tokio::sync::oneshot;

use crate::config::{DashboardOptions, TlsFiles};
use crate::error::DashboardError;

/// A running dashboard.
#[derive(Debug)]
pub struct DashboardHandle {
    addr: SocketAddr,
    https: bool,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl DashboardHandle {
    /// The address it listens on (the real port when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:8787/` (`https://…` when served with TLS).
    pub fn url(&self) -> String {
        format!("{}://{}/", if self.https { "https" } else { "http" }, self.addr)
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
/// tokio runtime. Refuses a non-loopback address without a token, saying why. With
/// `options.tls` it serves HTTPS only, and its session cookie is `Secure`.
pub async fn serve(client: Client, options: DashboardOptions) -> Result<DashboardHandle, DashboardError> {
    options.validate()?;
    let mut config = options.config.clone();
    // Listening on loopback without a token: answer only loopback names (DNS rebinding).
    config.loopback_only = !config.has_tokens();
    // Loaded before anything is bound, so a wrong file is named at start.
    let tls = match &options.tls {
        Some(files) => Some(load_tls(files).await?),
        None => None,
    };
    config.https |= tls.is_some();
    let app = crate::router(client, config)?;
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|error| DashboardError::Bind { listen: options.listen, error })?;
    let addr = listener.local_addr().map_err(|error| DashboardError::Bind { listen: options.listen, error })?;
    let (tx, rx) = oneshot::channel::<()>();
    let service = app.into_make_service_with_connect_info::<SocketAddr>();
    let https = tls.is_some();
    let task = match tls {
        None => tokio::spawn(async move {
            axum::serve(listener, service)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await
        }),
        Some(tls) => {
            let std_listener =
                listener.into_std().map_err(|error| DashboardError::Bind { listen: options.listen, error })?;
            let server = axum_server::from_tcp_rustls(std_listener, tls)
                .map_err(|error| DashboardError::Bind { listen: options.listen, error })?;
            let handle = axum_server::Handle::new();
            let stopper = handle.clone();
            tokio::spawn(async move {
                let _ = rx.await;
                // Requests being answered finish; a connection left open is closed after this.
                stopper.graceful_shutdown(Some(std::time::Duration::from_secs(10)));
            });
            tokio::spawn(async move { server.handle(handle).serve(service).await })
        }
    };
    tracing::info!(target: "captcha_dlq", %addr, https, "dashboard listening");
    Ok(DashboardHandle { addr, https, shutdown: Some(tx), task })
}

/// The rustls configuration of `files`; an error names the file that could not be used.
async fn load_tls(files: &TlsFiles) -> Result<axum_server::tls_rustls::RustlsConfig, DashboardError> {
    for (what, path) in [("tls_cert", &files.cert), ("tls_key", &files.key)] {
        if let Err(e) = std::fs::metadata(path) {
            return Err(DashboardError::Config(format!("{what}: cannot read {}: {e}", path.display())));
        }
    }
    axum_server::tls_rustls::RustlsConfig::from_pem_file(&files.cert, &files.key).await.map_err(|e| {
        DashboardError::Config(format!(
            "tls_cert/tls_key: {} and {} are not a PEM certificate chain and its private key: {e}",
            files.cert.display(),
            files.key.display()
        ))
    })
}
