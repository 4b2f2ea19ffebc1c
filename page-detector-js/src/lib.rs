//! The page detector and injector's source text, `page-detector.js` beside this crate's `Cargo.toml`.
//!
//! The script is written once, in JavaScript, and runs inside the pages every front end drives. This crate is
//! where the one checked-in copy lives, so that each package carries it without a second copy in the tree:
//! - the Python extension embeds it ([`SOURCE`], `captcha_dlq._native.PAGE_DETECTOR_SOURCE`); a crate of its own
//!   because maturin's sdist carries the crates the extension depends on, so the sdist (and the wheel built from
//!   it outside the repository) has it too, and editing the script recompiles only this crate and the extension;
//! - the npm package's build (`bindings-node/scripts/build.cjs`) copies it to `lib/page-detector.js`, which the
//!   tarball ships as a file usable as a content script;
//! - the browser package's build (`bindings-wasm/build.sh`) copies it to `pkg/lib/page-detector.js`.
//!
//! No symlinks: the Windows wheels are built from a checkout where git symlinks may be plain files.

/// The text of `page-detector.js`.
pub const SOURCE: &str = include_str!("../page-detector.js");

#[cfg(test)]
mod tests {
    #[test]
    fn the_source_installs_the_page_api() {
        assert!(
            super::SOURCE.contains("global.__captchaDlqPage = { version: 1, hook, detect, inject, expired, waiting };")
        );
    }
}
