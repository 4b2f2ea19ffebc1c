//! Which clients are alive, in the browser: each open client holds a Web Lock
//! (`navigator.locks`) named after its owner id; the browser releases it when
//! the client closes or its page or worker dies (a reload, a stopped service
//! worker). A journal entry's owner is gone when no such lock is held, so
//! `recover` takes over only what dead clients left, never the tasks of a live
//! client in another tab or worker sharing the same IndexedDB.
//!
//! Where Web Locks are missing, only this realm's open clients count as alive.
//! Owners that are not browser clients (a custom store shared with a native
//! process) cannot be seen from here: they count as gone once their entry is
//! older than the grace period, as the trait documents.

use core::time::Duration;
use std::cell::RefCell;
use std::collections::HashMap;

use captcha_dlq_client::core::Timestamp;
use captcha_dlq_client::{BoxFuture, Liveness};
use js_sys::{Function, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::convert::{absent, from_js};
use crate::runtime::random_bytes;

/// Owner ids of browser clients start with this.
const OWNER_PREFIX: &str = "web/";
/// Web Lock names are this plus the owner id.
const LOCK_PREFIX: &str = "captcha-dlq-owner:";

#[wasm_bindgen]
extern "C" {
    /// `navigator.locks`.
    type LockManager;
    #[wasm_bindgen(method, catch)]
    fn request(this: &LockManager, name: &str, callback: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn query(this: &LockManager) -> Result<Promise, JsValue>;
}

thread_local! {
    /// Clients of this realm that are open, with what releases their lock.
    static LIVE: RefCell<HashMap<String, Option<Function>>> = RefCell::new(HashMap::new());
}

fn lock_manager() -> Option<LockManager> {
    let navigator = Reflect::get(&js_sys::global(), &JsValue::from_str("navigator")).ok()?;
    if absent(&navigator) {
        return None;
    }
    let locks = Reflect::get(&navigator, &JsValue::from_str("locks")).ok()?;
    (!absent(&locks)).then(|| locks.unchecked_into())
}

/// Holds the lock `name` until the returned function is called; `None` without Web Locks.
fn hold(name: &str) -> Option<Function> {
    let locks = lock_manager()?;
    let mut release = None;
    let held = Promise::new(&mut |resolve, _reject| release = Some(resolve));
    // The lock is held while the promise its callback returns is pending.
    let callback = Closure::once_into_js(move |_lock: JsValue| -> JsValue { held.into() });
    let granted = locks.request(name, &callback).ok()?;
    // Settles when the lock is released; a rejection (the realm going away) needs no handling.
    wasm_bindgen_futures::spawn_local(async move {
        let _ = JsFuture::from(granted).await;
    });
    release
}

/// Whether a lock named `name` is held by anyone; `None` when that cannot be asked.
async fn held(name: &str) -> Option<bool> {
    let snapshot = JsFuture::from(lock_manager()?.query().ok()?).await.ok()?;
    let snapshot = from_js(snapshot).ok()?;
    let held = snapshot.get("held")?.as_array()?;
    Some(held.iter().any(|lock| lock.get("name").and_then(Value::as_str) == Some(name)))
}

/// Web Locks liveness (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct WebLocksLiveness;

impl Liveness for WebLocksLiveness {
    fn register(&self) -> String {
        let random: String = random_bytes::<10>().iter().map(|b| format!("{b:02x}")).collect();
        let owner = format!("{OWNER_PREFIX}{}-{random}", js_sys::Date::now() as u64);
        let release = hold(&format!("{LOCK_PREFIX}{owner}"));
        LIVE.with(|live| live.borrow_mut().insert(owner.clone(), release));
        owner
    }

    fn release(&self, owner: &str) {
        if let Some(Some(release)) = LIVE.with(|live| live.borrow_mut().remove(owner)) {
            let _ = release.call0(&JsValue::UNDEFINED);
        }
    }

    fn is_gone(&self, owner: &str, updated_at: Timestamp, now: Timestamp, grace: Duration) -> BoxFuture<'static, bool> {
        let owner = owner.to_string();
        Box::pin(async move {
            if LIVE.with(|live| live.borrow().contains_key(&owner)) {
                return false;
            }
            let stale = now.since(updated_at) > grace;
            if !owner.starts_with(OWNER_PREFIX) {
                return stale;
            }
            if lock_manager().is_none() {
                return true;
            }
            match held(&format!("{LOCK_PREFIX}{owner}")).await {
                Some(held) => !held,
                // Web Locks are there but would not answer: judge by age rather than take over a
                // client that may be alive.
                None => stale,
            }
        })
    }
}
