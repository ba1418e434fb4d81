//! Shared by `tests/collect.rs` and `tests/refresh.rs`: stand-ins of the registrars'
//! APIs on 127.0.0.1:0 and the real response shapes they answer (the shipped raw answers
//! of Porkbun and Route 53, the other registrars' documented shapes filled with their
//! shipped prices), and running `tldsnap collect` and `tldsnap import`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");

pub fn root(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

// ---------------------------------------------------------------- the stand-in server

/// A request as the stand-in saw it.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    /// Path and query.
    pub target: String,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Req {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
    pub fn query(&self, name: &str) -> Option<String> {
        let q = self.target.split_once('?')?.1;
        q.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == name).then(|| v.to_string())
        })
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// What the stand-in answers.
pub enum Reply {
    /// Status, extra headers, content type, body.
    Full(u16, Vec<(&'static str, String)>, &'static str, Vec<u8>),
    /// A Content-Length larger than the bytes sent, then the connection closed.
    Truncated(Vec<u8>),
    /// Never answers (until long after the client gave up).
    Hang,
}

pub fn json_reply(v: &Value) -> Reply {
    Reply::Full(200, vec![], "application/json", v.to_string().into_bytes())
}

pub type Handler = dyn Fn(&Req, usize) -> Reply + Send + Sync;

pub struct StandIn {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<Req>>>,
}

impl StandIn {
    pub fn start(handler: impl Fn(&Req, usize) -> Reply + Send + Sync + 'static) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen: Arc<Mutex<Vec<Req>>> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let s = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let handler = Arc::clone(&handler);
                let seen = Arc::clone(&s);
                std::thread::spawn(move || serve(stream, &*handler, &seen));
            }
        });
        StandIn { port, seen }
    }
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
    pub fn requests(&self) -> Vec<Req> {
        self.seen.lock().unwrap().clone()
    }
}

pub fn serve(stream: TcpStream, handler: &Handler, seen: &Mutex<Vec<Req>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok();
    let req = Req {
        method,
        target,
        headers,
        body,
    };
    let n = {
        let mut seen = seen.lock().unwrap();
        seen.push(req.clone());
        seen.iter().filter(|r| r.path() == req.path()).count()
    };
    let mut out = stream;
    match handler(&req, n) {
        Reply::Full(status, extra, ctype, body) => {
            let mut head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (k, v) in extra {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(&body);
        }
        Reply::Truncated(body) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len() * 2
            );
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(&body);
        }
        Reply::Hang => std::thread::sleep(Duration::from_secs(6)),
    }
    let _ = out.flush();
}

// ---------------------------------------------------------------- the sources' shapes

pub fn read(rel: &str) -> Vec<u8> {
    std::fs::read(root(rel)).unwrap()
}

pub fn read_json(rel: &str) -> Value {
    serde_json::from_slice(&read(rel)).unwrap()
}

/// The shipped Porkbun answer with `com`'s first year set to `com` and a registration
/// coupon of a dollar off on it (the API's coupon shape).
pub fn porkbun_body(com: &str) -> Vec<u8> {
    let mut v = read_json("snapshots/feeds/porkbun/porkbun-pricing.json");
    v["pricing"]["com"]["registration"] = json!(com);
    v["pricing"]["com"]["coupons"] = json!({"registration": {"code": "AWESOMENESS",
        "max_per_user": 1, "first_year_only": "yes", "type": "amount", "amount": 1}});
    serde_json::to_vec(&v).unwrap()
}

/// The shipped Route 53 answer cut into pages of 100, `com`'s registration set to `com`.
pub fn route53_pages(com: f64) -> Vec<Value> {
    let mut v = read_json("snapshots/feeds/aws-route53/tld-prices.json");
    let prices = v["Prices"].as_array_mut().unwrap();
    for p in prices.iter_mut() {
        if p["Name"] == "com" {
            p["RegistrationPrice"]["Price"] = json!(com);
        }
    }
    let chunks: Vec<Vec<Value>> = prices.chunks(100).map(<[Value]>::to_vec).collect();
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut page = json!({ "Prices": c });
            if i + 1 < n {
                page["NextPageMarker"] = json!(format!("marker-{}", i + 1));
            }
            page
        })
        .collect()
}

pub fn csv_rows(rel: &str) -> Vec<(String, String, String)> {
    let text = String::from_utf8(read(rel)).unwrap();
    text.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect()
}

/// NameSilo `getPrices` from the shipped NameSilo prices, `com` set to `com`.
pub fn namesilo_body(com: &str) -> Value {
    let mut reply = serde_json::Map::new();
    reply.insert("code".into(), json!(300));
    reply.insert("detail".into(), json!("success"));
    for (tld, reg, ren) in csv_rows("snapshots/feeds/domainpricing/namesilo.com.csv") {
        let reg = if tld == "com" { com.to_string() } else { reg };
        reply.insert(
            tld,
            json!({"registration": reg, "transfer": ren, "renew": ren}),
        );
    }
    json!({"request": {"operation": "getPrices", "ip": "127.0.0.1"}, "reply": reply})
}

/// Name.com `tldpricing` pages of `per_page` from the shipped Name.com prices.
pub fn namecom_pages(com: f64, per_page: usize) -> Vec<Value> {
    let rows = csv_rows("snapshots/feeds/domainpricing/name.com.csv");
    let chunks: Vec<_> = rows.chunks(per_page).collect();
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let pricing: Vec<Value> = c
                .iter()
                .map(|(tld, reg, ren)| {
                    let reg: f64 = if tld == "com" { com } else { reg.parse().unwrap() };
                    json!({"tld": tld, "duration": 1, "registrationPrice": reg,
                           "registrationOriginalPrice": reg, "renewalPrice": ren.parse::<f64>().unwrap(),
                           "transferInPrice": ren.parse::<f64>().unwrap()})
                })
                .collect();
            let mut page = json!({ "pricing": pricing });
            if i + 1 < n {
                page["nextPage"] = json!(i + 2);
            }
            page
        })
        .collect()
}

/// Dynadot REST pages from the shipped Dynadot list; `com` is on sale (`onSale` is the
/// documented string, `"Yes"` or `"No"`).
pub fn dynadot_list(com: f64) -> Vec<Value> {
    let v = read_json("snapshots/feeds/dynadot/dynadot.json");
    v["prices"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, p)| {
            let reg = if k == "com" {
                json!(com)
            } else {
                p["register_price"].clone()
            };
            json!({"tld": format!(".{k}"), "allYearsRegisterPrice": [reg],
                   "allYearsRenewPrice": [p["renew_price"]], "transferPrice": p["transfer_price"],
                   "restorePrice": p["restore_price"],
                   "onSale": if k == "com" { "Yes" } else { "No" }, "isIdn": "No"})
        })
        .collect()
}

/// Openprovider `tlds` results from the shipped Openprovider list.
pub fn openprovider_list(com: f64) -> Vec<Value> {
    let v = read_json("snapshots/feeds/openprovider/openprovider-prices.json");
    v["data"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, p)| {
            let r = &p["regular-price"];
            let price = |x: &Value| json!({"product": {"price": x, "currency": "USD"}, "reseller": {"price": x, "currency": "USD"}});
            let create = if k == "com" { json!(com) } else { r["create"].clone() };
            json!({"name": k, "is_premium": false,
                   "prices": {"create_price": price(&create), "renew_price": price(&r["renew"]),
                              "transfer_price": price(&r["transfer"]), "restore_price": price(&r["restore"])}})
        })
        .collect()
}

/// Namecheap `getPricing` XML from the shipped Namecheap list.
pub fn namecheap_xml(com: &str) -> Vec<u8> {
    let v = read_json("snapshots/feeds/namecheap/namecheap-prices.json");
    let mut cats: BTreeMap<&str, String> = BTreeMap::new();
    for (tld, p) in v["data"].as_object().unwrap() {
        for (cat, action) in [
            ("REGISTER", "create"),
            ("RENEW", "renew"),
            ("TRANSFER", "transfer"),
        ] {
            let regular = p["regular-price"][action].clone();
            let sale = p["sale-price"][action].clone();
            let price = if sale.is_null() {
                regular.clone()
            } else {
                sale
            };
            if price.is_null() {
                continue;
            }
            let num = |x: &Value| x.as_f64().map(|f| format!("{f:.2}")).unwrap_or_default();
            let price = if tld == "com" && cat == "REGISTER" {
                com.to_string()
            } else {
                num(&price)
            };
            // com's registration also for two years, at 10.88 a year (the shape of a
            // recorded answer: the first year's promotion does not hold for two).
            let two_years = if tld == "com" && cat == "REGISTER" {
                "<Price Duration=\"2\" DurationType=\"YEAR\" Price=\"10.88\" PricingType=\"MULTIPLE\" AdditionalCost=\"0.18\" RegularPrice=\"10.88\" RegularPriceType=\"MULTIPLE\" YourPrice=\"10.88\" PromotionPrice=\"0.0\" Currency=\"USD\" />"
            } else {
                ""
            };
            cats.entry(cat).or_default().push_str(&format!(
                "<Product Name=\"{tld}\"><Price Duration=\"1\" DurationType=\"YEAR\" Price=\"{price}\" PricingType=\"MULTIPLE\" AdditionalCost=\"0.18\" RegularPrice=\"{}\" RegularPriceType=\"MULTIPLE\" YourPrice=\"{price}\" YourAdditonalCost=\"0.18\" PromotionPrice=\"0.0\" Currency=\"USD\" />{two_years}</Product>\n",
                num(&regular)
            ));
        }
    }
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ApiResponse Status=\"OK\" xmlns=\"http://api.namecheap.com/xml.response\"><Errors /><Warnings /><RequestedCommand>namecheap.users.getPricing</RequestedCommand><CommandResponse Type=\"namecheap.users.getPricing\"><UserGetPricingResult><ProductType Name=\"domains\">\n",
    );
    for (cat, products) in cats {
        xml.push_str(&format!(
            "<ProductCategory Name=\"{}\">\n{products}</ProductCategory>\n",
            cat.to_lowercase()
        ));
    }
    xml.push_str("</ProductType></UserGetPricingResult></CommandResponse><Server>STANDIN</Server><GMTTimeDifference>--5:00</GMTTimeDifference><ExecutionTime>0.1</ExecutionTime></ApiResponse>\n");
    xml.into_bytes()
}

// ---------------------------------------------------------------- running the binary

pub struct Tmp(pub PathBuf);

impl Tmp {
    pub fn new(tag: &str) -> Tmp {
        let mut r = [0u8; 6];
        getrandom::fill(&mut r).unwrap();
        let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
        let p = std::env::temp_dir().join(format!(
            "tldsnap-collect-{tag}-{}-{hex}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).unwrap();
        Tmp(p)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A feeds directory with the shipped feed folders `folders` and `dates.csv`.
pub fn feeds(tmp: &Tmp, folders: &[&str]) -> PathBuf {
    let dir = tmp.0.join("feeds");
    std::fs::create_dir_all(&dir).unwrap();
    for f in folders {
        copy_dir(&root(&format!("snapshots/feeds/{f}")), &dir.join(f));
    }
    std::fs::copy(root("snapshots/feeds/dates.csv"), dir.join("dates.csv")).unwrap();
    dir
}

/// Writes the configuration, owner-only.
pub fn config(tmp: &Tmp, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = tmp.0.join("collect.toml");
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// Quick HTTP rules for tests: short timeout, fast retries.
pub const FAST: &str = "[collect]\ntimeout_secs = 2\nretries = 2\nbackoff_ms = 20\n\n";

pub fn collect(config: &Path, feeds: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("collect")
        .arg("--config")
        .arg(config)
        .arg("--feeds")
        .arg(feeds)
        .arg("--allow-private-targets")
        .args(extra)
        .output()
        .unwrap()
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn import(feeds: &Path, out: &Path) -> Output {
    let o = Command::new(BIN)
        .arg("import")
        .arg("--feeds")
        .arg(feeds)
        .arg("--output")
        .arg(out)
        .arg("--tlds")
        .arg(root("snapshots/tlds"))
        .arg("--fx")
        .arg(root("snapshots/fx"))
        .output()
        .unwrap();
    assert!(o.status.success(), "import failed: {}", text(&o));
    o
}

/// `prices.csv` rows of `registrar`: tld -> (register, renew, transfer, updated_at).
pub fn prices(out: &Path, registrar: &str) -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(out.join("prices.csv")).unwrap();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1] == registrar).then(|| {
                (
                    f[0].to_string(),
                    vec![
                        f[2].to_string(),
                        f[3].to_string(),
                        f[4].to_string(),
                        f[6].to_string(),
                    ],
                )
            })
        })
        .collect()
}

pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(files_under(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

pub fn collected(feeds: &Path, folder: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(feeds.join(folder).join("collected"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.ends_with(".jsonl"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

pub fn provenance(feeds: &Path, folder: &str, key: &str) -> Vec<Value> {
    let path = feeds
        .join(folder)
        .join("collected")
        .join(format!("{key}.provenance.jsonl"));
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

// ---------------------------------------------------------------- every source at once

/// The feed folders of every collector.
pub const EVERY_FEED: [&str; 6] = [
    "porkbun",
    "aws-route53",
    "namecheap",
    "dynadot",
    "openprovider",
    "domainpricing",
];

/// Every secret of [`every_source_config`].
pub const EVERY_SECRET: [&str; 10] = [
    "AKIDSTANDIN7",
    "r53-secret-SECRET-44",
    "nc-user-SECRET-66",
    "nc-key-SECRET-77",
    "203.0.113.77",
    "ns-key-SECRET-55",
    "dd-key-SECRET-33",
    "ncom-token-SECRET-11",
    "op-pass-SECRET-99",
    "op-token-SECRET-00",
];

/// One stand-in answering every collector's full-size list (the shipped lists, `com`'s
/// first year set to 8.12 … 8.18 by source), checking each one's credentials.
pub fn every_source() -> StandIn {
    let porkbun = porkbun_body("8.12");
    let r53 = route53_pages(8.13);
    let xml = namecheap_xml("8.14");
    let silo = namesilo_body("8.15");
    let dyn_list = dynadot_list(8.16);
    let ncom = namecom_pages(8.17, 200);
    let op = openprovider_list(8.18);
    StandIn::start(move |req, _| {
        let auth = req
            .headers
            .get("authorization")
            .cloned()
            .unwrap_or_default();
        match req.path() {
            "/api/json/v3/pricing/get" => {
                Reply::Full(200, vec![], "application/json", porkbun.clone())
            }
            "/" if req.headers.get("x-amz-target").map(String::as_str)
                == Some("Route53Domains_v20140515.ListPrices") =>
            {
                if !auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDSTANDIN7/")
                    || !auth.contains("/us-east-1/route53domains/aws4_request")
                    || !req.headers.contains_key("x-amz-date")
                {
                    return Reply::Full(
                        403,
                        vec![],
                        "application/json",
                        br#"{"__type":"InvalidSignatureException"}"#.to_vec(),
                    );
                }
                let i = match req.json()["Marker"].as_str() {
                    None => 0,
                    Some(m) => m.trim_start_matches("marker-").parse().unwrap(),
                };
                json_reply(&r53[i])
            }
            "/xml.response" => {
                if req.query("ApiKey").as_deref() != Some("nc-key-SECRET-77") {
                    return Reply::Full(200, vec![], "text/xml", br#"<ApiResponse Status="ERROR"><Errors><Error Number="1011102">API Key is invalid</Error></Errors></ApiResponse>"#.to_vec());
                }
                Reply::Full(200, vec![], "text/xml", xml.clone())
            }
            "/api/getPrices" => {
                if req.query("key").as_deref() != Some("ns-key-SECRET-55") {
                    return json_reply(
                        &json!({"request": {}, "reply": {"code": 110, "detail": "Invalid API Key"}}),
                    );
                }
                json_reply(&silo)
            }
            "/restful/v1/domains/get_tld_price" => {
                if auth != "Bearer dd-key-SECRET-33" {
                    return Reply::Full(
                        401,
                        vec![],
                        "application/json",
                        br#"{"code":401,"message":"unauthorized"}"#.to_vec(),
                    );
                }
                let index: usize = req.query("page_index").unwrap().parse().unwrap();
                let per: usize = req.query("count_per_page").unwrap().parse().unwrap();
                let list: Vec<Value> = dyn_list
                    .iter()
                    .skip((index - 1) * per)
                    .take(per)
                    .cloned()
                    .collect();
                json_reply(
                    &json!({"code": 200, "message": "Success", "data": {"tldPriceList": list}}),
                )
            }
            "/core/v1/tldpricing" => {
                // user "nc-user" : token "ncom-token-SECRET-11"
                if auth != "Basic bmNvbS11c2VyOm5jb20tdG9rZW4tU0VDUkVULTEx" {
                    return Reply::Full(
                        401,
                        vec![],
                        "application/json",
                        br#"{"message":"Unauthenticated"}"#.to_vec(),
                    );
                }
                let page: usize = req.query("page").unwrap().parse().unwrap();
                json_reply(&ncom[page - 1])
            }
            "/v1beta/auth/login" => {
                let b = req.json();
                if b["username"] != "op-user" || b["password"] != "op-pass-SECRET-99" {
                    return json_reply(
                        &json!({"code": 196, "desc": "Authentication/Authorization Failed"}),
                    );
                }
                json_reply(
                    &json!({"code": 0, "desc": "", "data": {"token": "op-token-SECRET-00", "reseller_id": 1}}),
                )
            }
            "/v1beta/tlds" => {
                if auth != "Bearer op-token-SECRET-00" {
                    return Reply::Full(
                        401,
                        vec![],
                        "application/json",
                        br#"{"code":196,"desc":"Authentication/Authorization Failed"}"#.to_vec(),
                    );
                }
                let limit: usize = req.query("limit").unwrap().parse().unwrap();
                let offset: usize = req.query("offset").unwrap().parse().unwrap();
                let list: Vec<Value> = op.iter().skip(offset).take(limit).cloned().collect();
                json_reply(
                    &json!({"code": 0, "desc": "", "data": {"results": list, "total": op.len()}}),
                )
            }
            _ => Reply::Full(404, vec![], "text/plain", b"not found".to_vec()),
        }
    })
}

/// The configuration of every collector against `server` (the secrets of
/// [`EVERY_SECRET`]), owner-only in `tmp`.
pub fn every_source_config(tmp: &Tmp, server: &StandIn) -> PathBuf {
    let b = server.base();
    config(
        tmp,
        &format!(
            r#"{FAST}
[porkbun]
base_url = "{b}"
min_interval_ms = 0

[route53]
base_url = "{b}"
access_key_id = "AKIDSTANDIN7"
secret_access_key = "r53-secret-SECRET-44"
page_size = 100
min_interval_ms = 0

[namecheap]
base_url = "{b}"
api_user = "nc-user-SECRET-66"
api_key = "nc-key-SECRET-77"
client_ip = "203.0.113.77"
min_interval_ms = 0

[namesilo]
base_url = "{b}"
api_key = "ns-key-SECRET-55"
min_interval_ms = 0

[dynadot]
base_url = "{b}"
api_key = "dd-key-SECRET-33"
page_size = 300
min_interval_ms = 0

[namecom]
base_url = "{b}"
username = "ncom-user"
token = "ncom-token-SECRET-11"
page_size = 200
min_interval_ms = 0

[openprovider]
base_url = "{b}"
username = "op-user"
password = "op-pass-SECRET-99"
page_size = 500
min_interval_ms = 0
"#
        ),
    )
}

// ---------------------------------------------------------------- the ECB's rates

/// The shipped ECB rate table.
pub const RATES: &str = "snapshots/fx/eurofxref-hist.csv";

/// The shipped rate table's header and rows (each line without its newline), newest first.
pub fn rate_lines() -> (String, Vec<String>) {
    let text = String::from_utf8(read(RATES)).unwrap();
    let mut lines = text.lines().map(str::to_string);
    let header = lines.next().unwrap();
    (header, lines.filter(|l| !l.is_empty()).collect())
}

/// `rows` of the shipped table (newest first) as the ECB's XML answer: one
/// `Cube time` per row, one `Cube currency rate` per quoted currency, `N/A` left out,
/// every other rate written with a trailing zero as the ECB's XML does (`0.87060`).
pub fn ecb_xml(header: &str, rows: &[String]) -> Vec<u8> {
    let names: Vec<&str> = header
        .split(',')
        .skip(1)
        .filter(|n| !n.is_empty())
        .collect();
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gesmes:Envelope xmlns:gesmes=\"http://www.gesmes.org/xml/2002-08-01\" xmlns=\"http://www.ecb.int/vocabulary/2002-08-01/eurofxref\">\n\t<gesmes:subject>Reference rates</gesmes:subject>\n\t<gesmes:Sender>\n\t\t<gesmes:name>European Central Bank</gesmes:name>\n\t</gesmes:Sender>\n\t<Cube>\n",
    );
    for row in rows {
        let f: Vec<&str> = row.split(',').collect();
        xml.push_str(&format!("\t\t<Cube time=\"{}\">\n", f[0]));
        for (i, name) in names.iter().enumerate() {
            let v = f[i + 1];
            if v == "N/A" || v.is_empty() {
                continue;
            }
            let v = if i % 2 == 0 && v.contains('.') {
                format!("{v}0")
            } else {
                v.to_string()
            };
            xml.push_str(&format!("\t\t\t<Cube currency=\"{name}\" rate=\"{v}\"/>\n"));
        }
        xml.push_str("\t\t</Cube>\n");
    }
    xml.push_str("\t</Cube>\n</gesmes:Envelope>\n");
    xml.into_bytes()
}

/// A rate directory in `tmp` holding the shipped table less its `drop` newest rows.
pub fn fx_dir(tmp: &Tmp, drop: usize) -> PathBuf {
    let (header, rows) = rate_lines();
    let dir = tmp.0.join("fx");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = header;
    text.push('\n');
    for r in &rows[drop..] {
        text.push_str(r);
        text.push('\n');
    }
    std::fs::write(dir.join("eurofxref-hist.csv"), text).unwrap();
    dir
}

pub const ECB_90D: &str = "/stats/eurofxref/eurofxref-hist-90d.xml";
pub const ECB_HIST: &str = "/stats/eurofxref/eurofxref-hist.xml";

/// An ECB stand-in answering `ninety` for the 90 days and `history` for the whole
/// history.
pub fn ecb_stand_in(ninety: Vec<u8>, history: Vec<u8>) -> StandIn {
    StandIn::start(move |req, _| match req.path() {
        ECB_90D => Reply::Full(200, vec![], "text/xml", ninety.clone()),
        ECB_HIST => Reply::Full(200, vec![], "text/xml", history.clone()),
        _ => Reply::Full(404, vec![], "text/plain", b"not found".to_vec()),
    })
}
