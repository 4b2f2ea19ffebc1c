//! captcha-dlq wasm binding (placeholder, being written).
