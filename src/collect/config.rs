//! The collectors' configuration: one TOML file, readable by its owner only.
//!
//! ```toml
//! [collect]            # optional: the HTTP rules of every request
//! timeout_secs = 30    # one request, connection to last byte
//! max_body_bytes = 67108864
//! retries = 3          # after the first attempt, on 429, 5xx, timeouts, broken bodies
//! backoff_ms = 500     # first wait, doubled each retry, with full jitter
//! max_retry_after_secs = 120
//!
//! [gate]               # optional: the quality gate's thresholds
//! min_kept_share = 0.8
//! max_moved_share = 0.1
//! moved_by = 0.5
//! max_rate_factor = 2.0  # the ECB's rates: largest day-on-day factor
//!
//! [porkbun]            # one table per registrar to collect
//! base_url = "http://127.0.0.1:8080"   # optional: replaces scheme, host and port
//! min_interval_ms = 1000               # optional: overrides the documented rate limit
//! page_size = 500                      # optional: for paginated sources
//!
//! [ecb]                # the ECB's reference rates (no credential), merged into --fx
//! ```
//!
//! Credentials are [`Secret`]s: their `Debug` prints `***`, they have no `Display`, and
//! nothing in this module's errors quotes a value.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use url::Url;

use super::gate::Thresholds;

/// A credential. Shown as `***` by `Debug`; read with [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A secret holding `value`.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// The HTTP rules of every request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HttpSettings {
    /// Longest time of one attempt, connection to last byte.
    pub timeout: Duration,
    /// Largest body read.
    pub max_body: usize,
    /// Attempts after the first.
    pub retries: u32,
    /// First backoff, doubled each retry (full jitter).
    pub backoff: Duration,
    /// Longest `Retry-After` waited for; a longer one fails the collection.
    pub max_retry_after: Duration,
}

impl Default for HttpSettings {
    fn default() -> HttpSettings {
        HttpSettings {
            timeout: Duration::from_secs(30),
            max_body: 64 * 1024 * 1024,
            retries: 3,
            backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

/// One registrar's table.
#[derive(Debug, Clone)]
pub struct RegistrarConfig {
    /// Registrar key (the table's name).
    pub key: String,
    /// Replaces the scheme, host and port of the real endpoint.
    pub base_url: Option<Url>,
    /// Overrides the documented least interval between two requests.
    pub min_interval: Option<Duration>,
    /// Items per page of a paginated source.
    pub page_size: Option<u32>,
    /// Every other string value of the table: the credentials.
    secrets: BTreeMap<String, Secret>,
}

impl RegistrarConfig {
    /// The credential `name`, or an error naming it (never its value).
    pub fn secret(&self, name: &str) -> Result<&Secret, String> {
        self.secrets
            .get(name)
            .filter(|s| !s.expose().is_empty())
            .ok_or_else(|| format!("[{}] needs `{name}`", self.key))
    }

    /// The credential `name`, if set.
    pub fn optional(&self, name: &str) -> Option<&Secret> {
        self.secrets.get(name).filter(|s| !s.expose().is_empty())
    }

    /// Every credential value (to check that none leaks).
    pub fn secret_values(&self) -> impl Iterator<Item = &str> {
        self.secrets.values().map(Secret::expose)
    }

    /// `default` (`https://api.porkbun.com/api/json/v3/pricing/get`) with the scheme, host
    /// and port of `base_url` when one is set.
    pub fn endpoint(&self, default: &str) -> Result<Url, String> {
        let mut url = Url::parse(default).map_err(|e| format!("{default}: {e}"))?;
        if let Some(base) = &self.base_url {
            url.set_scheme(base.scheme())
                .map_err(|()| format!("[{}] base_url: scheme not usable", self.key))?;
            url.set_host(base.host_str())
                .map_err(|e| format!("[{}] base_url: {e}", self.key))?;
            url.set_port(base.port())
                .map_err(|()| format!("[{}] base_url: port not usable", self.key))?;
        }
        Ok(url)
    }
}

/// The whole file.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// HTTP rules.
    pub http: HttpSettings,
    /// Gate thresholds.
    pub gate: Thresholds,
    /// Registrar tables, by key.
    pub registrars: BTreeMap<String, RegistrarConfig>,
}

impl Config {
    /// Reads `path`, refusing it when its group or others may read it.
    pub fn load(path: &Path, known: &[&str]) -> Result<Config, String> {
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(format!(
                    "{}: holds credentials but can be read or written by others (mode {mode:04o}); make it owner-only: chmod 600 {}",
                    path.display(),
                    path.display()
                ));
            }
        }
        let _ = meta;
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Config::parse(&text, known).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the TOML text (see the module docs).
    pub fn parse(text: &str, known: &[&str]) -> Result<Config, String> {
        // toml's messages quote the offending line, which may hold a credential: only the
        // position is kept.
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let at = e
                .span()
                .map(|s| {
                    let line = text.get(..s.start).map_or(0, |t| t.matches('\n').count()) + 1;
                    format!(" at line {line}")
                })
                .unwrap_or_default();
            format!("not valid TOML{at}")
        })?;
        let mut config = Config::default();
        for (name, value) in table {
            let toml::Value::Table(t) = value else {
                return Err(format!("`{name}` must be a table ([{name}])"));
            };
            match name.as_str() {
                "collect" => config.http = http_settings(&t)?,
                "gate" => config.gate = thresholds(&t)?,
                key if known.contains(&key) => {
                    config
                        .registrars
                        .insert(key.to_string(), registrar(key, &t)?);
                }
                other => {
                    return Err(format!(
                        "[{other}] is not a registrar that can be collected (known: {})",
                        known.join(", ")
                    ));
                }
            }
        }
        Ok(config)
    }
}

fn number(t: &toml::Table, table: &str, name: &str) -> Result<Option<f64>, String> {
    match t.get(name) {
        None => Ok(None),
        Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(*i as f64)),
        Some(toml::Value::Float(f)) if *f >= 0.0 && f.is_finite() => Ok(Some(*f)),
        Some(_) => Err(format!("[{table}] {name} must be a number >= 0")),
    }
}

fn http_settings(t: &toml::Table) -> Result<HttpSettings, String> {
    let mut s = HttpSettings::default();
    for name in t.keys() {
        if ![
            "timeout_secs",
            "max_body_bytes",
            "retries",
            "backoff_ms",
            "max_retry_after_secs",
        ]
        .contains(&name.as_str())
        {
            return Err(format!("[collect] has no setting `{name}`"));
        }
    }
    if let Some(v) = number(t, "collect", "timeout_secs")? {
        s.timeout = Duration::from_secs_f64(v.max(0.001));
    }
    if let Some(v) = number(t, "collect", "max_body_bytes")? {
        s.max_body = v as usize;
    }
    if let Some(v) = number(t, "collect", "retries")? {
        s.retries = (v as u32).min(10);
    }
    if let Some(v) = number(t, "collect", "backoff_ms")? {
        s.backoff = Duration::from_millis(v as u64);
    }
    if let Some(v) = number(t, "collect", "max_retry_after_secs")? {
        s.max_retry_after = Duration::from_secs_f64(v);
    }
    Ok(s)
}

fn thresholds(t: &toml::Table) -> Result<Thresholds, String> {
    let mut g = Thresholds::default();
    for name in t.keys() {
        if ![
            "min_kept_share",
            "max_moved_share",
            "moved_by",
            "max_rate_factor",
        ]
        .contains(&name.as_str())
        {
            return Err(format!("[gate] has no setting `{name}`"));
        }
    }
    if let Some(v) = number(t, "gate", "min_kept_share")? {
        g.min_kept_share = v;
    }
    if let Some(v) = number(t, "gate", "max_moved_share")? {
        g.max_moved_share = v;
    }
    if let Some(v) = number(t, "gate", "moved_by")? {
        g.moved_by = v;
    }
    if let Some(v) = number(t, "gate", "max_rate_factor")? {
        if v <= 1.0 {
            return Err("[gate] max_rate_factor must be above 1".to_string());
        }
        g.max_rate_factor = v;
    }
    Ok(g)
}

fn registrar(key: &str, t: &toml::Table) -> Result<RegistrarConfig, String> {
    let mut r = RegistrarConfig {
        key: key.to_string(),
        base_url: None,
        min_interval: None,
        page_size: None,
        secrets: BTreeMap::new(),
    };
    for (name, value) in t {
        match (name.as_str(), value) {
            ("base_url", toml::Value::String(s)) => {
                let url = Url::parse(s).map_err(|e| format!("[{key}] base_url: {e}"))?;
                if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                    return Err(format!("[{key}] base_url must be http(s)://host[:port]"));
                }
                r.base_url = Some(url);
            }
            ("min_interval_ms", _) => {
                let v = number(t, key, name)?.unwrap_or(0.0);
                r.min_interval = Some(Duration::from_millis(v as u64));
            }
            ("page_size", _) => {
                let v = number(t, key, name)?.unwrap_or(0.0);
                if v < 1.0 {
                    return Err(format!("[{key}] page_size must be at least 1"));
                }
                r.page_size = Some(v as u32);
            }
            (_, toml::Value::String(s)) => {
                r.secrets.insert(name.clone(), Secret::new(s.clone()));
            }
            _ => return Err(format!("[{key}] `{name}` must be a string")),
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_base_url_keeps_the_path() {
        let c = Config::parse(
            "[namesilo]\napi_key = \"hunter2\"\nbase_url = \"http://127.0.0.1:9\"\n",
            &["namesilo"],
        )
        .unwrap();
        let r = &c.registrars["namesilo"];
        assert!(!format!("{c:?}").contains("hunter2"));
        assert_eq!(r.secret("api_key").unwrap().expose(), "hunter2");
        assert!(r.secret("password").unwrap_err().contains("password"));
        let url = r
            .endpoint("https://www.namesilo.com/api/getPrices?version=1")
            .unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:9/api/getPrices?version=1");
        let err = Config::parse("[namesilo]\napi_key = \"hunter2\n", &["namesilo"]).unwrap_err();
        assert!(!err.contains("hunter2"), "{err}");
        assert!(Config::parse("[nobody]\n", &["namesilo"]).is_err());
    }
}
