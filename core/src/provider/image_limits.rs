//! Limits a service documents on what it accepts, checked when a request for
//! it is built ([`Provider::submit_request`]), so a task it would refuse is
//! refused here, with the service's own figure and where it is written.
//!
//! The core's limits for every service are in `task::limits`. CapSolver
//! documents no image size limit (its ImageToTextTask page gives none);
//! CaptchaAI's is the core's own 1 MiB ("Uploaded image exceeds the allowed
//! size (1024 KB Max)", <https://docs.captchaai.com/pages/err_handling>; its
//! older page said 100 kB). Every
//! image a task carries is held to the limit: each image field of its kind (`body`,
//! `images[2]`). A build without the declared kinds (whose tasks are raw) has none to check.

use serde_json::Value;

use super::Provider;
use crate::error::InvalidTask;
use crate::task::kinds::FieldType;
use crate::task::{base64_decoded_len, Task, TaskKind};

/// The largest image (decoded) a service takes for some kinds, or for every other kind.
struct ImageLimit {
    service: &'static str,
    /// The service's domain; the provider's base URL host is it or a subdomain.
    domain: &'static str,
    /// The kinds the row is for; empty: every kind the service's rows above it do not name.
    kinds: &'static [TaskKind],
    max_bytes: usize,
    /// The figure as the service writes it, and where.
    documented: &'static str,
}

/// 100 kB, as 2captcha and rucaptcha write it (read as 1024 bytes a kB, see [`IMAGE_LIMITS`]).
const KB_100: usize = 100 * 1024;

/// One table, per (service, kind): a service's rows for named kinds come before its row for
/// every other kind, and the first row that matches holds. "kB" is read as 1024 bytes and "MB"
/// as 1024 kB, so an image the service takes is never refused here (one of 100,000-102,400
/// bytes may still be refused there). The core's own cap (`task::MAX_IMAGE_BYTES`, 1 MiB)
/// holds for every service.
const IMAGE_LIMITS: &[ImageLimit] = &[
    // 2captcha (also its createTask front door, api.2captcha.com): grid and click-on-image
    // images up to 600 kB, audio clips up to 1 MB, other images 100 kB (issue 43).
    ImageLimit {
        service: "2captcha",
        domain: "2captcha.com",
        kinds: &[TaskKind::Grid, TaskKind::Coordinates],
        max_bytes: 600 * 1024,
        documented: "600 kB for grid and coordinates images, as issue 43's audit quotes 2captcha's \
                     method pages (https://2captcha.com/api-docs/grid, .../coordinates)",
    },
    ImageLimit {
        service: "2captcha",
        domain: "2captcha.com",
        kinds: &[TaskKind::Audio],
        max_bytes: 1024 * 1024,
        documented: "1 MB for audio, as issue 43's audit quotes 2captcha's audio method \
                     (https://2captcha.com/api-docs/audio; 2captcha/2captcha-python twocaptcha/solver.py `audio`)",
    },
    ImageLimit {
        service: "2captcha",
        domain: "2captcha.com",
        kinds: &[],
        max_bytes: KB_100,
        documented: "\"Max file size: 100 kB\", https://2captcha.com/api-docs/normal-captcha",
    },
    // rucaptcha is 2captcha's Russian front door, with the same API and the same limits.
    ImageLimit {
        service: "rucaptcha",
        domain: "rucaptcha.com",
        kinds: &[TaskKind::Grid, TaskKind::Coordinates],
        max_bytes: 600 * 1024,
        documented: "600 kB, 2captcha's figure for grid and coordinates (one service)",
    },
    ImageLimit {
        service: "rucaptcha",
        domain: "rucaptcha.com",
        kinds: &[TaskKind::Audio],
        max_bytes: 1024 * 1024,
        documented: "1 MB, 2captcha's figure for audio (one service)",
    },
    ImageLimit {
        service: "rucaptcha",
        domain: "rucaptcha.com",
        kinds: &[],
        max_bytes: KB_100,
        documented: "\"Max file size: 100 kB\", https://rucaptcha.com/api-docs/normal-captcha",
    },
    ImageLimit {
        service: "anti-captcha",
        domain: "anti-captcha.com",
        kinds: &[],
        max_bytes: 500_000,
        documented:
            "ERROR_TOO_BIG_CAPTCHA_FILESIZE \"more than 500,000 bytes\", https://anti-captcha.com/apidoc/errors",
    },
    // CapMonster's (ZennoLab's) error types; no 50 kB figure was found in its docs.
    ImageLimit {
        service: "CapMonster Cloud",
        domain: "capmonster.cloud",
        kinds: &[],
        max_bytes: 500_000,
        documented: "ERROR_TOO_BIG_CAPTCHA_FILESIZE \"more than 500,000 bytes\", \
                     https://zennolab.atlassian.net/wiki/spaces/APIS/pages/295396/Error+Types",
    },
];

/// Checks each image of `task` (its `Image` fields, and each item of its `Images` fields) against
/// what `provider`'s service documents.
pub(super) fn check(provider: &Provider, task: &Task) -> Result<(), InvalidTask> {
    let Task::Declared(t) = task else { return Ok(()) };
    let Some(limit) = image_limit(provider, task.kind()) else { return Ok(()) };
    let check_one = |field: &str, base64: &str| {
        let bytes = base64_decoded_len(base64);
        if bytes > limit.max_bytes {
            return Err(InvalidTask::new(
                field,
                format!(
                    "an image of {bytes} bytes; {} takes at most {} ({})",
                    limit.service, limit.max_bytes, limit.documented
                ),
            ));
        }
        Ok(())
    };
    for field in crate::task::kinds::decl(t.kind()).fields {
        match (field.ty, t.get(field.name)) {
            (FieldType::Image, Some(Value::String(image))) => check_one(field.name, image)?,
            (FieldType::Images { .. }, Some(Value::Array(images))) => {
                for (i, image) in images.iter().enumerate() {
                    check_one(&format!("{}[{i}]", field.name), image.as_str().unwrap_or_default())?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The first row of `provider`'s service for `kind` (its own row, else the service's row for
/// every other kind).
fn image_limit(provider: &Provider, kind: TaskKind) -> Option<&'static ImageLimit> {
    let host = crate::support::weburl::host_of(provider.base_url())?;
    IMAGE_LIMITS.iter().find(|l| {
        (host == l.domain || host.strip_suffix(l.domain).is_some_and(|sub| sub.ends_with('.')))
            && (l.kinds.is_empty() || l.kinds.contains(&kind))
    })
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;
    use crate::http::Secret;
    use crate::provider::SubmitOptions;
    use crate::task::ValidTask;

    fn image(bytes: usize) -> ValidTask {
        let body = base64::engine::general_purpose::STANDARD.encode(vec![1u8; bytes]);
        Task::from_json_value(serde_json::json!({"type": "image", "body": body})).unwrap()
    }

    fn submit(provider: &Provider, task: &ValidTask) -> Result<(), String> {
        provider
            .submit_request(&Secret::new("KEY"), task, &SubmitOptions::default())
            .map(drop)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn documented_image_limits_are_checked_when_the_request_is_built() {
        for (name, max) in [
            ("2captcha", 100 * 1024),
            ("2captcha-v2", 100 * 1024),
            ("rucaptcha", 100 * 1024),
            ("anti-captcha", 500_000),
            ("capmonster", 500_000),
        ] {
            let p = Provider::preset(name).unwrap();
            assert_eq!(submit(&p, &image(max)), Ok(()), "{name}");
            let e = submit(&p, &image(max + 1)).unwrap_err();
            assert!(e.starts_with(&format!("invalid task: body: an image of {} bytes;", max + 1)), "{name}: {e}");
            assert!(e.contains(&format!("at most {max}")) && e.contains("https://"), "{name}: {e}");
        }
        // The same service behind a custom base URL is the same service.
        let custom = Provider::custom_v1("https://api.2captcha.com").unwrap();
        assert!(submit(&custom, &image(200 * 1024)).unwrap_err().contains("2captcha takes at most"));
        // No documented limit, or the core's own (CaptchaAI's 1024 KB).
        for name in ["capsolver", "captchaai"] {
            assert_eq!(
                submit(&Provider::preset(name).unwrap(), &image(crate::task::MAX_IMAGE_BYTES)),
                Ok(()),
                "{name}"
            );
        }
        // The images of a declared kind are held to it too, each named.
        let png = |bytes: usize| base64::engine::general_purpose::STANDARD.encode(vec![1u8; bytes]);
        let hcaptcha = Task::from_json_value(serde_json::json!({"type": "hcaptcha_classification",
            "images": [png(10), png(500_001)], "question": "q"}))
        .unwrap();
        let e = submit(&Provider::preset("capmonster").unwrap(), &hcaptcha).unwrap_err();
        assert!(e.starts_with("invalid task: images[1]: an image of 500001 bytes; CapMonster Cloud"), "{e}");
        // Per kind (issue 43): 2captcha and rucaptcha take grid and coordinates images up to
        // 600 kB and audio clips up to 1 MB; a canvas image stays at 100 kB.
        let kind = |ty: &str, bytes: usize| {
            let mut task = serde_json::json!({"type": ty, "body": png(bytes)});
            if ty == "audio" {
                task["lang"] = "en".into();
            }
            if ty == "canvas" {
                task["textinstructions"] = "draw around the car".into();
            }
            Task::from_json_value(task).unwrap()
        };
        for name in ["2captcha", "rucaptcha"] {
            let p = Provider::preset(name).unwrap();
            for (ty, max) in [("grid", 600 * 1024), ("coordinates", 600 * 1024), ("canvas", 100 * 1024)] {
                assert_eq!(submit(&p, &kind(ty, max)), Ok(()), "{name} {ty}");
                let e = submit(&p, &kind(ty, max + 1)).unwrap_err();
                assert!(e.contains(&format!("at most {max}")), "{name} {ty}: {e}");
            }
            assert_eq!(submit(&p, &kind("audio", crate::task::MAX_IMAGE_BYTES)), Ok(()), "{name} audio");
        }
        // A look-alike domain is not the service.
        let other = Provider::custom_v1("https://not2captcha.com").unwrap();
        assert_eq!(submit(&other, &image(200 * 1024)), Ok(()));
    }
}
