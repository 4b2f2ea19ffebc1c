//! What a lane is, as configured: [`Service`].

use crate::engine::config::EngineConfig;
use crate::http::Secret;
use crate::provider::{Provider, SubmitOptions};
use crate::spend::Prices;

/// A lane's provider as configured: its name, provider and key, its settings and prices, and
/// what its submissions carry besides the task.
///
/// Calling contract: made once from the lane's `LaneSpec`; only the submit options change,
/// once, when the client gives its own ([`set_submit_options`](Self::set_submit_options)).
#[derive(Debug)]
pub(in crate::engine) struct Service {
    name: String,
    provider: Provider,
    key: Secret,
    config: EngineConfig,
    prices: Prices,
    /// What its submissions carry besides the task: its own `soft_id`, the client's pingback.
    submit_options: SubmitOptions,
}

impl Service {
    pub(in crate::engine) fn new(
        name: String,
        provider: Provider,
        key: Secret,
        config: EngineConfig,
        prices: Prices,
        soft_id: Option<String>,
    ) -> Service {
        let submit_options = SubmitOptions { soft_id, ..SubmitOptions::default() };
        Service { name, provider, key, config, prices, submit_options }
    }

    pub(in crate::engine) fn name(&self) -> &str {
        &self.name
    }

    pub(in crate::engine) fn provider(&self) -> &Provider {
        &self.provider
    }

    pub(in crate::engine) fn key(&self) -> &Secret {
        &self.key
    }

    pub(in crate::engine) fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub(in crate::engine) fn prices(&self) -> &Prices {
        &self.prices
    }

    pub(in crate::engine) fn submit_options(&self) -> &SubmitOptions {
        &self.submit_options
    }

    /// The client's `pingback` and `header_acao`; `soft_id` is the lane's own, else (`only`:
    /// the engine's one lane) the one given here.
    pub(in crate::engine) fn set_submit_options(&mut self, options: &SubmitOptions, only: bool) {
        let soft_id = self.submit_options.soft_id.take().or_else(|| options.soft_id.clone().filter(|_| only));
        self.submit_options = SubmitOptions { soft_id, ..options.clone() };
    }
}
