//! An answer before it becomes an HTTP response, so that faults can rewrite it (e.g. cut its JSON short).

use serde_json::Value;

/// Status, content type and body of one answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

impl Reply {
    pub fn text(body: impl Into<String>) -> Reply {
        Reply { status: 200, content_type: "text/plain; charset=utf-8", body: body.into() }
    }

    pub fn json(value: &Value) -> Reply {
        Reply { status: 200, content_type: "application/json", body: value.to_string() }
    }

    pub fn with_status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }

    pub fn is_json(&self) -> bool {
        self.content_type.starts_with("application/json")
    }

    /// The answer's JSON cut in half, so that no parser accepts it; plain-text answers are first put in the
    /// v1 JSON envelope so that the cut body is always broken JSON, never a shorter valid id.
    pub fn truncated(self) -> Reply {
        let full = if self.is_json() {
            self.body
        } else {
            serde_json::json!({ "status": 1, "request": self.body }).to_string()
        };
        let mut cut = full.len() / 2;
        while cut > 0 && !full.is_char_boundary(cut) {
            cut -= 1;
        }
        let body = full.get(..cut).unwrap_or_default().to_string();
        Reply { status: 200, content_type: "application/json", body }
    }
}

/// The nginx page a proxy in front of a solving service answers when its upstream is down.
pub(crate) const NGINX_502: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n\
<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
