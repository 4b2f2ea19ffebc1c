//! Who works on a journal entry, so that `recover()` takes over only tasks of
//! clients that are gone (a reloaded page, a restarted service worker), never
//! those of a live client in another tab or worker sharing the database.
//!
//! Each client holds a Web Lock named after its owner id for as long as it is
//! open; the browser releases it when the page or worker dies. An owner is
//! alive while its lock is held. Where Web Locks are missing, only clients of
//! this JS realm are known to be alive.

use std::cell::RefCell;
use std::collections::HashSet;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

const LOCK_PREFIX: &str = "captcha-dlq-owner:";

thread_local! {
    static LIVE: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

/// A registered owner; its lock is released by [`Owner::release`] or when the realm dies.
#[derive(Debug)]
pub(crate) struct Owner {
    id: String,
    release: RefCell<Option<Function>>,
}

impl Owner {
    pub(crate) fn register() -> Owner {
        let id = format!("web/{}", random_id());
        LIVE.with(|live| live.borrow_mut().insert(id.clone()));
        let release = RefCell::new(None);
        if let Some(locks) = locks() {
            let holder = Promise::new(&mut |resolve, _reject| {
                release.replace(Some(resolve));
            });
            let callback = Closure::once_into_js(move |_lock: JsValue| -> JsValue { holder.into() });
            let request = Reflect::get(&locks, &"request".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
            if let Some(request) = request {
                let name = JsValue::from_str(&format!("{LOCK_PREFIX}{id}"));
                // The promise settles when the lock is released; nothing to wait for.
                let _ = request.call2(&locks, &name, &callback);
            }
        }
        Owner { id, release }
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn release(&self) {
        LIVE.with(|live| live.borrow_mut().remove(&self.id));
        if let Some(resolve) = self.release.borrow_mut().take() {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.release();
    }
}

/// Owner ids alive right now: this realm's clients plus every held owner lock.
pub(crate) async fn live_owners() -> HashSet<String> {
    let mut live = LIVE.with(|l| l.borrow().clone());
    if let Some(locks) = locks() {
        let query = Reflect::get(&locks, &"query".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
        if let Some(promise) = query.and_then(|q| q.call0(&locks).ok()).and_then(|p| p.dyn_into::<Promise>().ok()) {
            if let Ok(snapshot) = JsFuture::from(promise).await {
                let held = Reflect::get(&snapshot, &"held".into()).unwrap_or(JsValue::UNDEFINED);
                for lock in js_sys::Array::from(&held).iter() {
                    let name = Reflect::get(&lock, &"name".into()).ok().and_then(|n| n.as_string());
                    if let Some(owner) = name.as_deref().and_then(|n| n.strip_prefix(LOCK_PREFIX)) {
                        live.insert(owner.to_string());
                    }
                }
            }
        }
    }
    live
}

/// `navigator.locks`, if this global has it.
fn locks() -> Option<JsValue> {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let locks = Reflect::get(&navigator, &"locks".into()).ok()?;
    (!locks.is_undefined() && !locks.is_null()).then_some(locks)
}

/// A unique-enough instance id (time plus 80 bits of `Math.random`); it names, it does not protect.
fn random_id() -> String {
    let mut out = String::new();
    for _ in 0..5 {
        let word = (js_sys::Math::random() * 65536.0) as u32 & 0xffff;
        out.push_str(&format!("{word:04x}"));
    }
    format!("{}-{out}", js_sys::Date::now() as u64)
}
