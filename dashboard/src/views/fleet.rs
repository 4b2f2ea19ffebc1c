//! The fleet: every client sharing the store (host, pid, start, last heartbeat, tasks in
//! flight, live or gone) and each provider account's shared limits (window, pause, account
//! error), as the store's fleet ledger holds them; and the spend. Read only: the ledger is the
//! clients' to write.

use captcha_dlq_client::FleetStatus;
use captcha_dlq_core::fleet::HEARTBEAT_MS;
use maud::{html, Markup};

use super::{age, count, page, when, Chrome, Nav};
use crate::fleet::{error_text, heartbeat_text, money, pause_text, FleetRead, NO_LEDGER, SPEND_NOTE};

pub(crate) fn render(chrome: &Chrome, fleet: &FleetRead) -> Markup {
    let body = html! {
        h1 { "Fleet" }
        @match &fleet.status {
            None => p.message #no-fleet { (NO_LEDGER) },
            Some(status) => (ledger(chrome, fleet, status)),
        }
        (spend(fleet))
    };
    page(chrome, "Fleet", Nav::Fleet, body)
}

fn ledger(chrome: &Chrome, fleet: &FleetRead, s: &FleetStatus) -> Markup {
    let secs = |ms: u64| age(core::time::Duration::from_millis(ms));
    let in_flight: u64 = s.accounts.iter().map(|a| u64::from(a.in_flight)).sum();
    html! {
        section #fleet data-fleet-url=(chrome.url("/api/fleet")) data-fleet-signature=(fleet.signature()) {
            p.note {
                "The clients sharing this store and each provider account's shared limits, as the store's fleet ledger "
                "holds them. Times are on the ledger's clock (" (when(s.now)) "): each client syncs at least every "
                (secs(HEARTBEAT_MS)) " and is gone after " (secs(s.owner_ttl_ms)) " without one; its tasks then no longer "
                "count against the window."
            }
            section.cards {
                (card("Live clients", "live", s.live() as u64))
                (card("Gone clients", "gone", s.gone() as u64))
                (card("Accounts", "accounts", s.accounts.len() as u64))
                (card("In flight (fleet)", "in_flight", in_flight))
            }
            h2 { "Clients" }
            @if s.owners.is_empty() {
                p.empty { "No client has synced yet: a client's row appears with its first sync, as it starts." }
            } @else {
                table.fleet-owners {
                    thead { tr { th { "Owner" } th { "Host" } th.num { "PID" } th { "Started" } th { "Last heartbeat" } th.num { "In flight" } th { "State" } } }
                    tbody {
                        @for o in &s.owners {
                            tr data-owner=(o.owner) {
                                td {
                                    span.mono { (o.owner) }
                                    @if o.owner == fleet.mine { " " span.pill { "this dashboard's client" } }
                                }
                                td { (o.host) }
                                td.num { (o.pid) }
                                td { (when(o.started_at)) }
                                td { time data-field="heartbeat" datetime=(o.last_heartbeat_at.to_rfc3339()) title=(when(o.last_heartbeat_at)) { (heartbeat_text(o.heartbeat_age_ms)) } }
                                td.num data-field="in_flight" { (o.in_flight) }
                                td { @if o.alive { span.pill.good { "live" } } @else { span.pill.bad { "gone" } } }
                            }
                        }
                    }
                }
            }
            h2 { "Accounts" }
            p.note {
                "An account is a provider and a key; the store names it by a keyed hash of the two, never by the key. "
                "The window is how many tasks the fleet may have in flight there; each client's share is the window "
                "less the others' tasks."
            }
            @if s.accounts.is_empty() {
                p.empty { "No account has been synced yet." }
            } @else {
                table.fleet-accounts {
                    thead { tr { th { "Account" } th { "This client's provider" } th.num { "Window" } th.num { "In flight" } th.num { "Live clients" } th { "Paused" } th { "Account error" } } }
                    tbody {
                        @for a in &s.accounts {
                            tr data-account=(a.account) {
                                td.mono { (a.account) }
                                td { (fleet.own.get(&a.account).map(|p| p.join(", ")).unwrap_or_default()) }
                                td.num data-field="window" { (a.window) }
                                td.num data-field="in_flight" { (a.in_flight) }
                                td.num data-field="clients" { (a.clients) }
                                td data-field="paused" class=[(a.paused_ms > 0).then_some("bad")] { (pause_text(a.paused_ms, a.pause_code.as_deref())) }
                                td data-field="error" class=[a.account_error.is_some().then_some("bad")] {
                                    (error_text(a.account_error.as_ref()))
                                    // A held account this client has: an operator ends the hold at
                                    // once (after a top-up) instead of waiting for the balance probe.
                                    @if a.account_error.is_some() && !chrome.read_only {
                                        @for provider in fleet.own.get(&a.account).into_iter().flatten() {
                                            form.inline method="post" action=(chrome.url("/actions/resume-accounts")) {
                                                (chrome.csrf_field())
                                                input type="hidden" name="provider" value=(provider);
                                                button type="submit" title="the account works again (topped up): every client resumes now, without waiting for the balance check" { "Resume " (provider) " now" }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn spend(fleet: &FleetRead) -> Markup {
    html! {
        section.spend {
            h2 { "Spend" }
            p.note { (SPEND_NOTE) }
            @if let Some(status) = &fleet.status {
                h3 { "The fleet" }
                dl.facts {
                    dt { "All accounts" } dd #fleet-cost { (money(status.accounts.iter().map(|a| a.spent).sum::<f64>())) }
                    @for a in &status.accounts {
                        dt { (a.account) } dd { (money(a.spent)) }
                    }
                }
            }
            h3 { "This client" }
            @match &fleet.spend {
                None => p.empty { "The client is closed: no spend to show." },
                Some(r) => dl.facts {
                    dt { "Solved" } dd { (count(r.solved)) }
                    dt { "Cost" } dd #client-cost {
                        (money(r.cost))
                        @if let Some(b) = r.budget { " of a budget of " (money(b)) }
                    }
                    @if r.unpriced > 0 { dt { "Without a known cost" } dd { (count(r.unpriced)) " solved" } }
                    dt { "Dead-lettered" } dd { (count(r.dead_lettered)) }
                    @for row in &r.by_provider {
                        dt { (row.key) } dd { (money(row.cost)) " on " (count(row.solved)) " solved" }
                    }
                }
            }
        }
    }
}

fn card(label: &str, field: &str, value: u64) -> Markup {
    html! {
        div.card {
            span.label { (label) }
            span.value data-fleet-stat=(field) { (count(value)) }
        }
    }
}
