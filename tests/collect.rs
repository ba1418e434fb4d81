//! `tldsnap collect` against stand-ins of the registrars' APIs on 127.0.0.1:0, built from
//! the real response shapes: the shipped raw answers of Porkbun and Route 53, and the
//! other registrars' documented shapes filled with their shipped prices. Then `tldsnap
//! import` on the collected feeds.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");

fn root(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

// ---------------------------------------------------------------- the stand-in server

/// A request as the stand-in saw it.
#[derive(Debug, Clone)]
struct Req {
    method: String,
    /// Path and query.
    target: String,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

impl Req {
    fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
    fn query(&self, name: &str) -> Option<String> {
        let q = self.target.split_once('?')?.1;
        q.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == name).then(|| v.to_string())
        })
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// What the stand-in answers.
enum Reply {
    /// Status, extra headers, content type, body.
    Full(u16, Vec<(&'static str, String)>, &'static str, Vec<u8>),
    /// A Content-Length larger than the bytes sent, then the connection closed.
    Truncated(Vec<u8>),
    /// Never answers (until long after the client gave up).
    Hang,
}

fn json_reply(v: &Value) -> Reply {
    Reply::Full(200, vec![], "application/json", v.to_string().into_bytes())
}

type Handler = dyn Fn(&Req, usize) -> Reply + Send + Sync;

struct StandIn {
    port: u16,
    seen: Arc<Mutex<Vec<Req>>>,
}

impl StandIn {
    fn start(handler: impl Fn(&Req, usize) -> Reply + Send + Sync + 'static) -> StandIn {
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
    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
    fn requests(&self) -> Vec<Req> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, handler: &Handler, seen: &Mutex<Vec<Req>>) {
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

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(root(rel)).unwrap()
}

fn read_json(rel: &str) -> Value {
    serde_json::from_slice(&read(rel)).unwrap()
}

/// The shipped Porkbun answer with `com`'s first year set to `com`.
fn porkbun_body(com: &str) -> Vec<u8> {
    let mut v = read_json("snapshots/feeds/porkbun/porkbun-pricing.json");
    v["pricing"]["com"]["registration"] = json!(com);
    serde_json::to_vec(&v).unwrap()
}

/// The shipped Route 53 answer cut into pages of 100, `com`'s registration set to `com`.
fn route53_pages(com: f64) -> Vec<Value> {
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

fn csv_rows(rel: &str) -> Vec<(String, String, String)> {
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
fn namesilo_body(com: &str) -> Value {
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
fn namecom_pages(com: f64, per_page: usize) -> Vec<Value> {
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

/// Dynadot REST pages from the shipped Dynadot list.
fn dynadot_list(com: f64) -> Vec<Value> {
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
                   "restorePrice": p["restore_price"], "onSale": false, "isIdn": false})
        })
        .collect()
}

/// Openprovider `tlds` results from the shipped Openprovider list.
fn openprovider_list(com: f64) -> Vec<Value> {
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
fn namecheap_xml(com: &str) -> Vec<u8> {
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
            cats.entry(cat).or_default().push_str(&format!(
                "<Product Name=\"{tld}\"><Price Duration=\"1\" DurationType=\"YEAR\" Price=\"{price}\" PricingType=\"MULTIPLE\" AdditionalCost=\"0.18\" RegularPrice=\"{}\" RegularPriceType=\"MULTIPLE\" YourPrice=\"{price}\" YourAdditonalCost=\"0.18\" PromotionPrice=\"0.0\" Currency=\"USD\" /></Product>\n",
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

struct Tmp(PathBuf);

impl Tmp {
    fn new(tag: &str) -> Tmp {
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

fn copy_dir(from: &Path, to: &Path) {
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
fn feeds(tmp: &Tmp, folders: &[&str]) -> PathBuf {
    let dir = tmp.0.join("feeds");
    std::fs::create_dir_all(&dir).unwrap();
    for f in folders {
        copy_dir(&root(&format!("snapshots/feeds/{f}")), &dir.join(f));
    }
    std::fs::copy(root("snapshots/feeds/dates.csv"), dir.join("dates.csv")).unwrap();
    dir
}

/// Writes the configuration, owner-only.
fn config(tmp: &Tmp, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = tmp.0.join("collect.toml");
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// Quick HTTP rules for tests: short timeout, fast retries.
const FAST: &str = "[collect]\ntimeout_secs = 2\nretries = 2\nbackoff_ms = 20\n\n";

fn collect(config: &Path, feeds: &Path, extra: &[&str]) -> Output {
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

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn import(feeds: &Path, out: &Path) -> Output {
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
fn prices(out: &Path, registrar: &str) -> BTreeMap<String, Vec<String>> {
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

fn files_under(dir: &Path) -> Vec<PathBuf> {
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

fn collected(feeds: &Path, folder: &str) -> Vec<String> {
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

fn provenance(feeds: &Path, folder: &str, key: &str) -> Vec<Value> {
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

// ---------------------------------------------------------------- the tests

/// Porkbun's real answer (com changed) becomes a new version that import serves; the
/// same answer again writes nothing new but is recorded as seen again.
#[test]
fn porkbun_new_version_then_unchanged_and_import_serves_it() {
    let tmp = Tmp::new("porkbun");
    let feeds = feeds(&tmp, &["porkbun"]);
    let body = porkbun_body("8.11");
    let server = StandIn::start(move |req, _| {
        if req.method == "POST" && req.path() == "/api/json/v3/pricing/get" {
            Reply::Full(200, vec![], "application/json", body.clone())
        } else {
            Reply::Full(404, vec![], "text/plain", b"not found".to_vec())
        }
    });
    let cfg = config(
        &tmp,
        &format!("{FAST}[porkbun]\nbase_url = \"{}\"\n", server.base()),
    );
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("porkbun: new version porkbun/collected/porkbun_"),
        "{}",
        text(&o)
    );
    let files = collected(&feeds, "porkbun");
    assert_eq!(files.len(), 1, "{files:?}");
    // Unedited: byte for byte what the source answered.
    assert_eq!(
        std::fs::read(feeds.join("porkbun/collected").join(&files[0])).unwrap(),
        porkbun_body("8.11")
    );
    let prov = provenance(&feeds, "porkbun", "porkbun");
    assert_eq!(prov.len(), 1);
    assert_eq!(prov[0]["outcome"], "new");
    assert_eq!(prov[0]["requests"][0]["status"], 200);
    assert_eq!(
        prov[0]["requests"][0]["url"],
        format!("{}/api/json/v3/pricing/get", server.base())
    );
    assert_eq!(prov[0]["bytes"], porkbun_body("8.11").len());
    assert_eq!(prov[0]["sha256"].as_str().unwrap().len(), 64);
    assert!(prov[0]["collector"].as_str().unwrap().contains("porkbun/1"));

    let out = tmp.0.join("source");
    import(&feeds, &out);
    let p = prices(&out, "porkbun");
    assert_eq!(p["com"][0], "8.11");
    assert_eq!(p.len(), 571, "the Handshake names are still dropped");
    let first_updated = p["com"][3].clone();
    assert!(first_updated.starts_with("20"), "{first_updated}");
    let history = std::fs::read_to_string(out.join("history.csv")).unwrap();
    let com_rows: Vec<&str> = history
        .lines()
        .filter(|l| l.contains(",com,porkbun,"))
        .collect();
    assert_eq!(
        com_rows.len(),
        2,
        "the 2025 price and the collected one: {com_rows:?}"
    );

    std::thread::sleep(Duration::from_millis(1100));
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("porkbun: unchanged"), "{}", text(&o));
    assert_eq!(collected(&feeds, "porkbun").len(), 1, "no new version");
    let prov = provenance(&feeds, "porkbun", "porkbun");
    assert_eq!(prov.len(), 2);
    assert_eq!(prov[1]["outcome"], "unchanged");
    assert_eq!(prov[1]["version"], prov[0]["version"]);
    import(&feeds, &out);
    let p = prices(&out, "porkbun");
    assert_eq!(p["com"][0], "8.11");
    assert!(
        p["com"][3] > first_updated,
        "last seen moves on: {} then {}",
        first_updated,
        p["com"][3]
    );
}

/// Every collector against its stand-in, with pagination where the source pages; import
/// then serves each registrar's collected prices; no secret of the configuration is in
/// any output or file.
#[test]
fn every_collector_then_import_and_no_secret_leaks() {
    let tmp = Tmp::new("all");
    let feeds = feeds(
        &tmp,
        &[
            "porkbun",
            "aws-route53",
            "namecheap",
            "dynadot",
            "openprovider",
            "domainpricing",
        ],
    );
    let porkbun = porkbun_body("8.12");
    let r53 = route53_pages(8.13);
    let xml = namecheap_xml("8.14");
    let silo = namesilo_body("8.15");
    let dyn_list = dynadot_list(8.16);
    let ncom = namecom_pages(8.17, 200);
    let op = openprovider_list(8.18);
    let server = StandIn::start(move |req, _| {
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
    });
    let b = server.base();
    let secrets = [
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
    let cfg = config(
        &tmp,
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
    );
    let o = collect(&cfg, &feeds, &[]);
    let out_text = text(&o);
    assert!(o.status.success(), "{out_text}");
    for key in [
        "dynadot",
        "namecheap",
        "namecom",
        "namesilo",
        "openprovider",
        "porkbun",
        "route53",
    ] {
        assert!(
            out_text.contains(&format!("{key}: new version ")),
            "{key}: {out_text}"
        );
    }
    // Pagination to the end.
    let reqs = server.requests();
    let count = |p: &str| reqs.iter().filter(|r| r.path() == p).count();
    assert_eq!(count("/"), 4, "351 Route 53 prices in pages of 100");
    assert_eq!(
        count("/restful/v1/domains/get_tld_price"),
        3,
        "809 Dynadot TLDs in pages of 300"
    );
    assert_eq!(
        count("/core/v1/tldpricing"),
        3,
        "563 Name.com TLDs in pages of 200"
    );
    assert_eq!(
        count("/v1beta/tlds"),
        4,
        "1835 Openprovider TLDs in pages of 500"
    );
    assert_eq!(count("/v1beta/auth/login"), 1);

    let src = tmp.0.join("source");
    let imp = import(&feeds, &src);
    for (registrar, com) in [
        ("porkbun", "8.12"),
        ("route53", "8.13"),
        ("namecheap", "8.14"),
        ("namesilo", "8.15"),
        ("dynadot", "8.16"),
        ("namecom", "8.17"),
        ("openprovider", "8.18"),
    ] {
        let p = prices(&src, registrar);
        assert_eq!(p["com"][0], com, "{registrar}");
        let today = tldsnap::time::date_string(
            tldsnap::time::now_ms().div_euclid(tldsnap::time::MS_PER_DAY),
        );
        assert!(
            p["com"][3].starts_with(&today),
            "{registrar} dated today: {}",
            p["com"][3]
        );
    }
    // The whole lists came through, not only com.
    assert_eq!(prices(&src, "route53").len(), 351);
    assert_eq!(prices(&src, "namesilo").len(), 459);
    assert_eq!(prices(&src, "namecom").len(), 563);
    assert_eq!(prices(&src, "dynadot").len(), 802);
    assert_eq!(prices(&src, "openprovider").len(), 1784);
    assert_eq!(prices(&src, "namecheap").len(), 563);
    let shipped = tmp_import_shipped(&tmp);
    for registrar in [
        "route53",
        "namesilo",
        "dynadot",
        "openprovider",
        "namecheap",
        "namecom",
        "porkbun",
    ] {
        let (now, then) = (prices(&src, registrar), prices(&shipped, registrar));
        assert_eq!(
            now["net"][..2],
            then["net"][..2],
            "{registrar} net as shipped"
        );
    }

    // No secret anywhere: outputs, --help, every file written.
    let help = Command::new(BIN)
        .args(["collect", "--help"])
        .output()
        .unwrap();
    let mut haystacks = vec![
        ("collect output".to_string(), out_text.into_bytes()),
        ("import output".into(), text(&imp).into_bytes()),
        ("help".into(), help.stdout),
    ];
    for f in files_under(&feeds).into_iter().chain(files_under(&src)) {
        haystacks.push((f.display().to_string(), std::fs::read(&f).unwrap()));
    }
    for (what, bytes) in &haystacks {
        let s = String::from_utf8_lossy(bytes);
        for secret in secrets {
            assert!(!s.contains(secret), "{secret} appears in {what}");
        }
    }
}

/// The shipped feeds imported as they are (for comparing unchanged rows).
fn tmp_import_shipped(tmp: &Tmp) -> PathBuf {
    let out = tmp.0.join("shipped-source");
    if !out.join("prices.csv").exists() {
        import(&root("snapshots/feeds"), &out);
    }
    out
}

fn namesilo_setup(
    tag: &str,
    handler: impl Fn(&Req, usize) -> Reply + Send + Sync + 'static,
    settings: &str,
) -> (Tmp, PathBuf, PathBuf, StandIn) {
    let tmp = Tmp::new(tag);
    let feeds = feeds(&tmp, &["domainpricing"]);
    let server = StandIn::start(handler);
    let cfg = config(
        &tmp,
        &format!(
            "{settings}[namesilo]\nbase_url = \"{}\"\napi_key = \"ns-key-SECRET-55\"\nmin_interval_ms = 0\n",
            server.base()
        ),
    );
    (tmp, feeds, cfg, server)
}

fn assert_failed(o: &Output, feeds: &Path, needle: &str) {
    let t = text(o);
    assert!(!o.status.success(), "exit 0: {t}");
    assert!(t.contains("namesilo: failed: "), "{t}");
    assert!(t.contains(needle), "{needle:?} not in: {t}");
    assert!(!t.contains("ns-key-SECRET-55"), "{t}");
    assert!(
        collected(feeds, "domainpricing").is_empty(),
        "nothing written"
    );
}

#[test]
fn refused_credentials_401_and_403_fail() {
    for status in [401u16, 403] {
        let (_tmp, feeds, cfg, server) = namesilo_setup(
            "auth",
            move |_, _| {
                Reply::Full(
                    status,
                    vec![],
                    "application/json",
                    br#"{"error":"denied"}"#.to_vec(),
                )
            },
            FAST,
        );
        let o = collect(&cfg, &feeds, &[]);
        assert_failed(
            &o,
            &feeds,
            &format!("HTTP {status}: the credentials were refused"),
        );
        assert_eq!(
            server.requests().len(),
            1,
            "no retry of refused credentials"
        );
    }
}

#[test]
fn rate_limited_429_waits_for_retry_after_then_succeeds() {
    let (_tmp, feeds, cfg, server) = namesilo_setup(
        "429",
        |_, n| {
            if n == 1 {
                Reply::Full(
                    429,
                    vec![("retry-after", "1".to_string())],
                    "application/json",
                    b"{}".to_vec(),
                )
            } else {
                json_reply(&namesilo_body("8.15"))
            }
        },
        FAST,
    );
    let started = std::time::Instant::now();
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("namesilo: new version"), "{}", text(&o));
    assert_eq!(server.requests().len(), 2);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After: 1 was honoured"
    );
    // A Retry-After longer than allowed fails at once.
    let (_tmp, feeds, cfg, _server) = namesilo_setup(
        "429b",
        |_, _| {
            Reply::Full(
                429,
                vec![("retry-after", "3600".to_string())],
                "application/json",
                b"{}".to_vec(),
            )
        },
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "Retry-After of 3600 s");
}

#[test]
fn server_errors_are_retried_then_fail() {
    let (_tmp, feeds, cfg, server) = namesilo_setup(
        "5xx",
        |_, n| {
            if n <= 2 {
                Reply::Full(503, vec![], "text/plain", b"busy".to_vec())
            } else {
                json_reply(&namesilo_body("8.15"))
            }
        },
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(server.requests().len(), 3);
    let (_tmp, feeds, cfg, server) = namesilo_setup(
        "5xxb",
        |_, _| Reply::Full(502, vec![], "text/plain", b"bad gateway".to_vec()),
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "HTTP 502");
    assert_eq!(
        server.requests().len(),
        3,
        "the first attempt and two retries"
    );
}

#[test]
fn a_source_that_never_answers_times_out() {
    let (_tmp, feeds, cfg, _server) = namesilo_setup(
        "hang",
        |_, _| Reply::Hang,
        "[collect]\ntimeout_secs = 0.5\nretries = 1\nbackoff_ms = 10\n\n",
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "no complete answer within 0.5 s");
}

#[test]
fn a_truncated_body_fails() {
    let (_tmp, feeds, cfg, server) = namesilo_setup(
        "trunc",
        |_, _| Reply::Truncated(br#"{"request":{},"reply":{"code":300,"#.to_vec()),
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "cut short");
    assert_eq!(server.requests().len(), 3, "a broken body is retried");
}

#[test]
fn an_html_page_with_200_fails() {
    let (_tmp, feeds, cfg, _server) = namesilo_setup(
        "html",
        |_, _| {
            Reply::Full(
                200,
                vec![],
                "text/html; charset=utf-8",
                b"<!DOCTYPE html><html><body>Maintenance</body></html>".to_vec(),
            )
        },
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "is an HTML page, not the API's JSON");
}

#[test]
fn an_error_inside_a_200_body_fails() {
    let (_tmp, feeds, cfg, _server) = namesilo_setup(
        "err200",
        |_, _| {
            json_reply(
                &json!({"request": {"operation": "getPrices"}, "reply": {"code": 110, "detail": "Invalid API Key"}}),
            )
        },
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "NameSilo reply code 110 (\"Invalid API Key\")");
    // Porkbun's form of it.
    let tmp = Tmp::new("err200p");
    let feeds = self::feeds(&tmp, &["porkbun"]);
    let server = StandIn::start(|_, _| {
        json_reply(&json!({"status": "ERROR", "message": "Invalid API key. (002)"}))
    });
    let cfg = config(
        &tmp,
        &format!("{FAST}[porkbun]\nbase_url = \"{}\"\n", server.base()),
    );
    let o = collect(&cfg, &feeds, &[]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("porkbun: failed: Porkbun status ERROR: Invalid API key. (002)"),
        "{}",
        text(&o)
    );
}

/// A list that lost half its TLDs is quarantined with a report, the previous version
/// stays in use, and `--accept` takes it.
#[test]
fn a_list_that_lost_half_its_tlds_is_quarantined_until_accepted() {
    let tmp = Tmp::new("half");
    let feeds = feeds(&tmp, &["porkbun"]);
    let mut v: Value = serde_json::from_slice(&porkbun_body("8.19")).unwrap();
    let pricing = v["pricing"].as_object_mut().unwrap();
    let keys: Vec<String> = pricing.keys().cloned().collect();
    for (i, k) in keys.iter().enumerate() {
        if i % 2 == 1 && k != "com" {
            pricing.remove(k);
        }
    }
    let half = serde_json::to_vec(&v).unwrap();
    let server =
        StandIn::start(move |_, _| Reply::Full(200, vec![], "application/json", half.clone()));
    let cfg = config(
        &tmp,
        &format!("{FAST}[porkbun]\nbase_url = \"{}\"\n", server.base()),
    );
    let src = tmp.0.join("source");
    import(&feeds, &src);
    let before = prices(&src, "porkbun");

    let o = collect(&cfg, &feeds, &[]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("porkbun: quarantined porkbun/quarantine/porkbun_"),
        "{t}"
    );
    assert!(t.contains("keeps the TLDs"), "{t}");
    assert!(collected(&feeds, "porkbun").is_empty());
    let reports: Vec<PathBuf> = files_under(&feeds.join("porkbun/quarantine"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".report.txt"))
        .collect();
    assert_eq!(reports.len(), 1);
    let report = std::fs::read_to_string(&reports[0]).unwrap();
    assert!(report.contains("Rule failed: keeps the TLDs"), "{report}");
    assert!(report.contains("--accept porkbun"), "{report}");
    assert!(report.contains(": no longer listed"), "{report}");

    import(&feeds, &src);
    assert_eq!(
        prices(&src, "porkbun"),
        before,
        "the previous version is still served"
    );

    let o = collect(&cfg, &feeds, &["--accept", "porkbun"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("porkbun: accepted porkbun/collected/porkbun_"),
        "{}",
        text(&o)
    );
    assert_eq!(server.requests().len(), 1, "accepting fetches nothing");
    import(&feeds, &src);
    let after = prices(&src, "porkbun");
    assert!(
        after.len() < before.len() * 6 / 10,
        "{} then {}",
        before.len(),
        after.len()
    );
    assert_eq!(after["com"][0], "8.19");
    let prov = provenance(&feeds, "porkbun", "porkbun");
    assert_eq!(
        prov.iter()
            .map(|p| p["outcome"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["quarantined", "accepted"]
    );
}

#[test]
fn a_configuration_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = Tmp::new("perm");
    let cfg = config(&tmp, "[namesilo]\napi_key = \"ns-key-SECRET-55\"\n");
    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = collect(&cfg, &tmp.0, &[]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("chmod 600"), "{t}");
    assert!(!t.contains("ns-key-SECRET-55"), "{t}");
    // Unknown tables and a broken file name no secret either.
    let cfg = config(&tmp, "[namesilo]\napi_key = \"ns-key-SECRET-55\n");
    let o = collect(&cfg, &tmp.0, &[]);
    assert!(!o.status.success());
    assert!(!text(&o).contains("ns-key-SECRET-55"), "{}", text(&o));
}

/// The source answering exactly the shipped list writes nothing, but its prices are
/// dated by when they were seen again.
#[test]
fn the_shipped_list_answered_again_is_seen_again() {
    let tmp = Tmp::new("again");
    let feeds = feeds(&tmp, &["porkbun"]);
    let body = read("snapshots/feeds/porkbun/porkbun-pricing.json");
    let server =
        StandIn::start(move |_, _| Reply::Full(200, vec![], "application/json", body.clone()));
    let cfg = config(
        &tmp,
        &format!("{FAST}[porkbun]\nbase_url = \"{}\"\n", server.base()),
    );
    let src = tmp.0.join("source");
    import(&feeds, &src);
    assert!(prices(&src, "porkbun")["com"][3].starts_with("2025-03-22"));
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("porkbun: unchanged, same list as porkbun/porkbun-pricing.json"),
        "{}",
        text(&o)
    );
    assert!(collected(&feeds, "porkbun").is_empty());
    import(&feeds, &src);
    let today =
        tldsnap::time::date_string(tldsnap::time::now_ms().div_euclid(tldsnap::time::MS_PER_DAY));
    let p = prices(&src, "porkbun");
    assert!(p["com"][3].starts_with(&today), "{}", p["com"][3]);
    let history = std::fs::read_to_string(src.join("history.csv")).unwrap();
    assert_eq!(
        history
            .lines()
            .filter(|l| l.contains(",com,porkbun,"))
            .count(),
        1,
        "no change, no history"
    );
}

/// A page that fails in the middle of a paginated list leaves nothing written; an error
/// answer inside a 200 XML body (Namecheap) and a JSON error (Route 53) fail too.
#[test]
fn a_failing_page_or_error_answer_writes_nothing() {
    let tmp = Tmp::new("midpage");
    let feeds = feeds(&tmp, &["aws-route53", "namecheap", "dynadot"]);
    let r53 = route53_pages(8.13);
    let dyn_list = dynadot_list(8.16);
    let server = StandIn::start(move |req, _| {
        match req.path() {
        "/" => match req.json()["Marker"].as_str() {
            None => json_reply(&r53[0]),
            Some(_) => Reply::Full(400, vec![], "application/x-amz-json-1.1", br#"{"__type":"InvalidInput","message":"marker expired"}"#.to_vec()),
        },
        "/xml.response" => Reply::Full(200, vec![], "text/xml", br#"<?xml version="1.0" encoding="utf-8"?><ApiResponse Status="ERROR" xmlns="http://api.namecheap.com/xml.response"><Errors><Error Number="1011150">Parameter RequestIP is invalid</Error></Errors></ApiResponse>"#.to_vec()),
        _ => {
            let index: usize = req.query("page_index").unwrap().parse().unwrap();
            if index == 2 {
                return json_reply(&json!({"code": 429, "message": "too many requests"}));
            }
            let list: Vec<Value> = dyn_list.iter().take(300).cloned().collect();
            json_reply(&json!({"code": 200, "message": "Success", "data": {"tldPriceList": list}}))
        }
    }
    });
    let b = server.base();
    let cfg = config(
        &tmp,
        &format!(
            "{FAST}[route53]\nbase_url = \"{b}\"\naccess_key_id = \"AKIDSTANDIN7\"\nsecret_access_key = \"r53-secret-SECRET-44\"\npage_size = 100\nmin_interval_ms = 0\n\n[namecheap]\nbase_url = \"{b}\"\napi_user = \"u\"\napi_key = \"nc-key-SECRET-77\"\nclient_ip = \"203.0.113.77\"\nmin_interval_ms = 0\n\n[dynadot]\nbase_url = \"{b}\"\napi_key = \"dd-key-SECRET-33\"\npage_size = 300\nmin_interval_ms = 0\n"
        ),
    );
    let o = collect(&cfg, &feeds, &[]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("route53: failed: HTTP 400 from ") && t.contains("marker expired"),
        "{t}"
    );
    assert!(
        t.contains("namecheap: failed: ") && t.contains("Parameter RequestIP is invalid"),
        "{t}"
    );
    assert!(
        t.contains("dynadot: failed: ")
            && t.contains("Dynadot page 2: code 429 (too many requests), not 200"),
        "{t}"
    );
    assert!(
        t.contains("3 of 3 registrars failed or were quarantined"),
        "{t}"
    );
    for folder in ["aws-route53", "namecheap", "dynadot"] {
        assert!(collected(&feeds, folder).is_empty(), "{folder}");
        assert!(!feeds.join(folder).join("quarantine").exists(), "{folder}");
    }
    for secret in [
        "r53-secret-SECRET-44",
        "nc-key-SECRET-77",
        "dd-key-SECRET-33",
        "203.0.113.77",
    ] {
        assert!(!t.contains(secret), "{secret} in {t}");
    }
}
