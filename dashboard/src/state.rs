//! What every handler shares: the client, the configuration, the secrets, the
//! cached overview, the replay requests and recoveries, and the last balance read.

use core::time::Duration;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use captcha_dlq_client::Client;
use captcha_dlq_core::Timestamp;

use crate::config::DashboardConfig;
use crate::error::DashboardError;
use crate::overview::OverviewCache;
use crate::recoveries::Recoveries;
use crate::replays::ReplayJobs;
use crate::roles::{all_tokens, Roles};
use crate::secrets::Secrets;

/// How long an overview's breakdowns are shared between requests.
const OVERVIEW_FRESH_FOR: Duration = Duration::from_secs(5);
/// How long a page waits for a new overview scan before it shows the previous one.
pub(crate) const OVERVIEW_WAIT: Duration = Duration::from_millis(300);
/// How long a balance read is shown before the provider is asked again.
pub(crate) const BALANCE_FRESH_FOR: Duration = Duration::from_secs(60);

pub(crate) struct AppState {
    pub(crate) client: Client,
    pub(crate) config: DashboardConfig,
    pub(crate) secrets: Secrets,
    pub(crate) overview: Arc<OverviewCache>,
    pub(crate) replays: ReplayJobs,
    pub(crate) recoveries: Recoveries,
    pub(crate) balance: Mutex<Option<(Instant, Result<f64, String>)>>,
    /// The tokens and the sessions of their holders.
    pub(crate) roles: Roles,
}

pub(crate) type Shared = Arc<AppState>;

impl AppState {
    pub(crate) fn new(client: Client, config: DashboardConfig) -> Result<Shared, DashboardError> {
        config.validate()?;
        let tokens = all_tokens(config.token.as_deref(), &config.tokens)?;
        Ok(Arc::new(AppState {
            roles: Roles::new(
                tokens,
                crate::roles::SessionLimits {
                    idle: std::time::Duration::from_millis(config.session_idle_ms),
                    max: std::time::Duration::from_millis(config.session_max_ms),
                },
            ),
            client,
            config,
            secrets: Secrets::new()?,
            overview: Arc::new(OverviewCache::new(OVERVIEW_FRESH_FOR)),
            replays: ReplayJobs::default(),
            recoveries: Recoveries::default(),
            balance: Mutex::new(None),
        }))
    }

    pub(crate) fn now(&self) -> Timestamp {
        self.client.backends().runtime.now()
    }

    /// Whether a key is configured, so that a balance can be asked for.
    pub(crate) fn has_key(&self) -> bool {
        self.config.solving && !self.client.options().api_key().expose().is_empty()
    }

    /// A callback that drops the cached overview (records changed).
    pub(crate) fn changed(&self) -> Arc<dyn Fn() + Send + Sync> {
        let cache = self.overview.clone();
        Arc::new(move || cache.invalidate())
    }
}
