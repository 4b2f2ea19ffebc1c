//! captcha-dlq python binding (placeholder, being written).
