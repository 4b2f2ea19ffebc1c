//! Limits a service documents on what it accepts, checked when a request for
//! it is built ([`Provider::submit_request`]), so a task it would refuse is
//! refused here, with the service's own figure and where it is written.
//!
//! The core's limits for every service are in `task::limits`. Services not
//! listed document no image size limit: anti-captcha mentions only "GIF
//! animations are supported, up to 500kb"
//! (<https://anti-captcha.com/apidoc/task-types/ImageToTextTask>); CapSolver's
//! and CapMonster's ImageToTextTask pages give none.

use super::Provider;
use crate::error::InvalidTask;
use crate::task::{base64_decoded_len, Task};

/// The largest image (decoded) a service takes.
struct ImageLimit {
    service: &'static str,
    /// The service's domain; the provider's base URL host is it or a subdomain.
    domain: &'static str,
    max_bytes: usize,
    /// The figure as the service writes it, and where.
    documented: &'static str,
}

/// "kB" is read as 1024 bytes, so an image the service takes is never
/// refused here (one of 100,000-102,400 bytes may still be refused there).
const IMAGE_LIMITS: &[ImageLimit] = &[
    ImageLimit {
        service: "2captcha",
        domain: "2captcha.com",
        max_bytes: 100 * 1024,
        documented: "\"Max file size: 100 kB\", https://2captcha.com/api-docs/normal-captcha",
    },
    ImageLimit {
        service: "CaptchaAI",
        domain: "captchaai.com",
        max_bytes: 100 * 1024,
        documented: "ERROR_TOO_BIG_CAPTCHA_FILESIZE \"Image size is more than 100 kB\", \
                     https://docs.captchaai.com/api/api-error-handling",
    },
];

/// Checks `task` against what `provider`'s service documents.
pub(super) fn check(provider: &Provider, task: &Task) -> Result<(), InvalidTask> {
    let Task::Image(image) = task else { return Ok(()) };
    let Some(limit) = image_limit(provider) else { return Ok(()) };
    let bytes = base64_decoded_len(&image.body);
    if bytes > limit.max_bytes {
        return Err(InvalidTask::new(
            "body",
            format!(
                "an image of {bytes} bytes; {} takes at most {} ({})",
                limit.service, limit.max_bytes, limit.documented
            ),
        ));
    }
    Ok(())
}

fn image_limit(provider: &Provider) -> Option<&'static ImageLimit> {
    let host = crate::weburl::host_of(provider.base_url())?;
    IMAGE_LIMITS.iter().find(|l| host == l.domain || host.strip_suffix(l.domain).is_some_and(|sub| sub.ends_with('.')))
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;
    use crate::http::Secret;
    use crate::provider::SubmitOptions;

    fn image(bytes: usize) -> Task {
        let body = base64::engine::general_purpose::STANDARD.encode(vec![1u8; bytes]);
        Task::from_json_value(serde_json::json!({"type": "image", "body": body})).unwrap()
    }

    fn submit(provider: &Provider, task: &Task) -> Result<(), String> {
        provider
            .submit_request(&Secret::new("KEY"), task, &SubmitOptions::default())
            .map(drop)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn documented_image_limits_are_checked_when_the_request_is_built() {
        for name in ["2captcha", "2captcha-v2", "captchaai"] {
            let p = Provider::preset(name).unwrap();
            assert_eq!(submit(&p, &image(100 * 1024)), Ok(()), "{name}");
            let e = submit(&p, &image(100 * 1024 + 1)).unwrap_err();
            assert!(e.starts_with("invalid task: body: an image of 102401 bytes;"), "{name}: {e}");
            assert!(e.contains("at most 102400") && e.contains("https://"), "{name}: {e}");
        }
        // The same service behind a custom base URL is the same service.
        let custom = Provider::custom_v1("https://api.2captcha.com").unwrap();
        assert!(submit(&custom, &image(200 * 1024)).unwrap_err().contains("2captcha takes at most"));
        // No documented limit: the core's own.
        for name in ["anti-captcha", "capsolver", "capmonster"] {
            assert_eq!(submit(&Provider::preset(name).unwrap(), &image(200 * 1024)), Ok(()), "{name}");
        }
        // A look-alike domain is not the service.
        let other = Provider::custom_v1("https://not2captcha.com").unwrap();
        assert_eq!(submit(&other, &image(200 * 1024)), Ok(()));
    }
}
