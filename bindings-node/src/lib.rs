//! captcha-dlq node binding (placeholder, being written).
