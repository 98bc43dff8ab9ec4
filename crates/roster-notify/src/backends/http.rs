//! The backends that post over HTTP(S), through ureq with rustls: `ntfy`
//! (a notice published to a topic URL, self-hosted or public, which the
//! ntfy app on a phone shows: title, tags, priority and a click URL in
//! headers, the body as the message, a token from an environment variable
//! as a bearer) and `webhook` (the notice as JSON, `NoticeMessage`). A
//! certificate authority of one's own (a self-hosted server's) may be
//! given as a PEM file; otherwise Mozilla's roots decide. Every request is
//! bounded by the timeout, connecting and TLS included.

use std::path::Path;
use std::time::Duration;

use super::{Backend, BackendError, NoticeMessage};
use crate::notice::Notice;

/// What both share: the URL, the client, the token.
struct Poster {
    url: String,
    agent: ureq::Agent,
    /// `Authorization: Bearer …`, read from the environment at start.
    token: Option<String>,
}

impl Poster {
    fn new(
        url: &str,
        ca_certificate: Option<&Path>,
        token: Option<String>,
        timeout: Duration,
    ) -> Result<Poster, String> {
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(format!("{url:?} is no http:// or https:// URL"));
        }
        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some(path) = ca_certificate {
            let pem = std::fs::read(path).map_err(|error| {
                format!("the certificate file {} cannot be read: {error}", path.display())
            })?;
            let certificates: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(certificate)) => Some(certificate),
                    _ => None,
                })
                .collect();
            if certificates.is_empty() {
                return Err(format!("{} holds no PEM certificate", path.display()));
            }
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certificates));
        }
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .tls_config(tls.build())
            .build();
        Ok(Poster { url: url.to_owned(), agent: ureq::Agent::new_with_config(config), token })
    }

    fn post(&self, headers: &[(&str, String)], body: &[u8]) -> Result<(), BackendError> {
        let mut request = self.agent.post(&self.url);
        for (name, value) in headers {
            request = request.header(*name, value.as_str());
        }
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response =
            request.send(body).map_err(|error| BackendError::new(format!("POST {}: {error}", self.url)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let mut said = response.into_body().read_to_string().unwrap_or_default();
        said.truncate(200);
        Err(BackendError::new(format!("POST {} answered {status}: {}", self.url, said.trim())))
    }
}

/// The settings of the ntfy backend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NtfySettings {
    /// The topic's URL: `https://ntfy.sh/TOPIC` or a server of one's own.
    pub url: String,
    /// ntfy's tags (emoji short codes or words).
    pub tags: Vec<String>,
    /// Where a tap on the notice goes.
    pub click: Option<String>,
    /// The environment variable holding the access token.
    pub token_variable: Option<String>,
    pub ca_certificate: Option<std::path::PathBuf>,
}

pub struct NtfyBackend {
    poster: Poster,
    settings: NtfySettings,
}

impl NtfyBackend {
    pub fn new(
        settings: NtfySettings,
        environment: &dyn Fn(&str) -> Option<String>,
        timeout: Duration,
    ) -> Result<NtfyBackend, String> {
        let token = match &settings.token_variable {
            None => None,
            Some(name) => Some(environment(name).filter(|token| !token.is_empty()).ok_or_else(|| {
                format!("the ntfy token is to be read from the environment variable {name}, which is not set")
            })?),
        };
        let poster = Poster::new(&settings.url, settings.ca_certificate.as_deref(), token, timeout)
            .map_err(|why| format!("ntfy: {why}"))?;
        Ok(NtfyBackend { poster, settings })
    }
}

/// The headers of an ntfy publish of `notice`: values are sent as UTF-8
/// (ntfy reads them so), with control characters out.
pub fn ntfy_headers(notice: &Notice, settings: &NtfySettings) -> Vec<(&'static str, String)> {
    let clean = |text: &str| text.chars().filter(|character| !character.is_control()).collect::<String>();
    let mut tags = vec![notice.trigger.as_str().to_owned()];
    tags.extend(settings.tags.iter().cloned());
    let mut headers = vec![
        ("Title", clean(&notice.title)),
        ("Priority", notice.urgency.ntfy_priority().to_string()),
        ("Tags", clean(&tags.join(","))),
    ];
    if let Some(click) = &settings.click {
        headers.push(("Click", clean(click)));
    }
    headers
}

impl Backend for NtfyBackend {
    fn name(&self) -> &'static str {
        "ntfy"
    }

    fn leaves_the_machine(&self) -> bool {
        true
    }

    fn show(&self, notice: &Notice) -> Result<(), BackendError> {
        self.poster.post(&ntfy_headers(notice, &self.settings), notice.body.as_bytes())
    }

    /// ntfy cannot take a published message back: a phone keeps it.
    fn withdraw(&self, _: &Notice) -> Result<(), BackendError> {
        Ok(())
    }
}

pub struct WebhookBackend {
    poster: Poster,
}

impl WebhookBackend {
    pub fn new(
        url: &str,
        ca_certificate: Option<&Path>,
        timeout: Duration,
    ) -> Result<WebhookBackend, String> {
        Ok(WebhookBackend {
            poster: Poster::new(url, ca_certificate, None, timeout)
                .map_err(|why| format!("webhook: {why}"))?,
        })
    }

    fn post(&self, message: NoticeMessage<'_>) -> Result<(), BackendError> {
        self.poster.post(&[("Content-Type", "application/json".to_owned())], &message.to_json())
    }
}

impl Backend for WebhookBackend {
    fn name(&self) -> &'static str {
        "webhook"
    }

    fn leaves_the_machine(&self) -> bool {
        true
    }

    fn show(&self, notice: &Notice) -> Result<(), BackendError> {
        self.post(NoticeMessage::new("show", notice))
    }

    fn replace(&self, notice: &Notice) -> Result<(), BackendError> {
        self.post(NoticeMessage::new("replace", notice))
    }

    fn withdraw(&self, notice: &Notice) -> Result<(), BackendError> {
        self.post(NoticeMessage::new("withdraw", notice))
    }
}
