//! The live lookups against real upstreams on loopback (tests/live_support): RDAP over
//! TLS from a test CA, WHOIS on its own port, every failure an upstream can produce.
//! No HTTP server of tldsnap: the room is tested on its own.

mod live_support;

use std::time::{Duration, Instant};

use live_support::Upstreams;
use tldsnap::live::registry::{Protocol, StatusAnswer};
use tldsnap::live::{Failure, Live};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn rdap_registered_reserved_and_available() {
    let up = Upstreams::start();
    let live = Live::new(up.config()).unwrap();
    runtime().block_on(async {
        let a = live.registry("taken.lvt", live.deadline()).await.unwrap();
        assert_eq!(a.registered, Some(true));
        assert!(!a.reserved);
        assert_eq!(a.source.protocol, Protocol::Rdap);
        assert_eq!(
            a.source.server,
            format!(
                "https://localhost:{}/rdap/domain/taken.lvt",
                up.rdap["good"].port()
            )
        );
        let r = a.registration.as_ref().unwrap();
        assert_eq!(r.created.as_deref(), Some("2001-02-03T04:05:06.000Z"));
        assert_eq!(r.expires.as_deref(), Some("2030-02-03T04:05:06.000Z"));
        assert_eq!(r.statuses, ["clientTransferProhibited", "autoRenewPeriod"]);
        assert_eq!(r.nameservers, ["ns1.taken.lvt", "ns2.taken.lvt"]);
        assert_eq!(
            r.registrar.as_ref().unwrap().name.as_deref(),
            Some("Test Registrar")
        );
        // Redacted stays redacted: the registry's replacement text, and its list.
        assert_eq!(
            r.registrant.as_ref().unwrap().name.as_deref(),
            Some("REDACTED FOR PRIVACY")
        );
        let redacted: Vec<&str> = r.redacted.iter().map(|x| x.field.as_str()).collect();
        assert_eq!(redacted, ["Registrant Name", "Registrant Email"]);

        let nic = live.registry("nic.lvt", live.deadline()).await.unwrap();
        assert_eq!((nic.registered, nic.reserved), (Some(true), true));

        let free = live.registry("free.lvt", live.deadline()).await.unwrap();
        assert_eq!(free.registered, Some(false));
        assert!(free.registration.is_none());

        // The status answer of the registered name.
        let s = StatusAnswer::of(&a);
        assert!(s.grace_period && !s.on_hold && !s.pending_delete);
        assert_eq!(
            s.statuses[0].meaning,
            Some(
                "the registrar refuses requests to transfer the domain to another registrar (a registrar lock)"
            )
        );

        // Answers are cached: asking again sends nothing.
        let before = up.hits("/rdap/domain/taken.lvt");
        let again = live.registry("taken.lvt", live.deadline()).await.unwrap();
        assert_eq!(again.learnt_at, a.learnt_at);
        assert_eq!(up.hits("/rdap/domain/taken.lvt"), before);
        assert_eq!(before, 1);
    });
}

#[test]
fn whois_where_there_is_no_rdap() {
    let up = Upstreams::start();
    let live = Live::new(up.config()).unwrap();
    runtime().block_on(async {
        let a = live.registry("taken.lvw", live.deadline()).await.unwrap();
        assert_eq!(a.registered, Some(true));
        assert_eq!(a.source.protocol, Protocol::Whois);
        assert_eq!(a.source.server, "localhost");
        let r = a.registration.as_ref().unwrap();
        assert_eq!(r.statuses, ["clientHold"]);
        assert_eq!(r.expires.as_deref(), Some("2031-05-06T07:08:09.000Z"));
        assert!(StatusAnswer::of(&a).on_hold);

        let held = live.registry("held.lvw", live.deadline()).await.unwrap();
        assert!(held.reserved);
        let free = live.registry("free.lvw", live.deadline()).await.unwrap();
        assert_eq!(free.registered, Some(false));
        let odd = live.registry("odd.lvw", live.deadline()).await.unwrap();
        assert_eq!(odd.registered, None);
        assert_eq!(
            odd.raw.as_deref(),
            Some("Welcome to the LVW registry. holder: someone\n")
        );

        // A TLD without RDAP whose WHOIS server IANA does not name.
        let none = live.registry("a.lvx", live.deadline()).await.unwrap_err();
        assert_eq!(none, Failure::NoService { tld: "lvx".into() });
    });
}

#[test]
fn every_upstream_failure_is_named_and_in_budget() {
    let up = Upstreams::start();
    let live = Live::new(up.config()).unwrap();
    let port = |name: &str| up.rdap[name].port();
    runtime().block_on(async {
        // Slow: a timeout at the first byte, well inside the 3 s budget.
        let started = Instant::now();
        let err = live.registry("a.lvs", live.deadline()).await.unwrap_err();
        let took = started.elapsed();
        assert_eq!(
            err,
            Failure::Timeout {
                upstream: format!("localhost:{}", port("slow")),
                detail: "first byte".into()
            }
        );
        println!("slow upstream answered as a timeout in {took:?}");

        // Garbage, 10 MiB with a length, 10 MiB chunked: errors, never "registered".
        for (name, want) in [
            ("x.lvg", "not RDAP"),
            ("huge.lvg", "larger than 1048576 bytes"),
            ("flood.lvg", "larger than 1048576 bytes"),
        ] {
            let err = live.registry(name, live.deadline()).await.unwrap_err();
            let Failure::Upstream {
                upstream, detail, ..
            } = &err
            else {
                panic!("{name}: {err:?}")
            };
            assert_eq!(upstream, &format!("localhost:{}", port("garbage")));
            assert!(detail.contains(want), "{name}: {detail}");
        }

        // 429: the Retry-After is passed on and obeyed — the next lookup of that
        // registry is refused without a request.
        let err = live.registry("a.lvr", live.deadline()).await.unwrap_err();
        assert!(
            matches!(&err, Failure::Upstream { retry_after: Some(120), detail, .. } if detail.contains("429")),
            "{err:?}"
        );
        let err = live.registry("b.lvr", live.deadline()).await.unwrap_err();
        assert!(
            matches!(&err, Failure::Upstream { retry_after: Some(s), detail, .. } if *s > 100 && detail.contains("Retry-After")),
            "{err:?}"
        );
        assert_eq!(up.hits("/rdap/domain/b.lvr"), 0);
    });
}

#[test]
fn rdap_connections_are_kept_and_reused() {
    let up = Upstreams::start();
    let live = Live::new(up.config()).unwrap();
    runtime().block_on(async {
        for name in ["taken.lvt", "free.lvt", "nic.lvt"] {
            live.registry(name, live.deadline()).await.unwrap();
        }
        assert_eq!(up.handshakes("good"), 1, "three lookups, one connection");
        // An answer cut short (10 MiB announced) closes its connection; an answer read
        // whole (HTML: not RDAP, still an answer) leaves it open for the next.
        for name in ["huge.lvg", "x.lvg", "y.lvg"] {
            assert!(live.registry(name, live.deadline()).await.is_err());
        }
        assert_eq!(up.handshakes("garbage"), 2);
        // A server that closed the idle connection meanwhile: a new one, no failure.
        live.registry("taken.lvc", live.deadline()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(600)).await;
        let free = live.registry("free.lvc", live.deadline()).await.unwrap();
        assert_eq!(free.registered, Some(false));
        assert_eq!(up.handshakes("closing"), 2);
    });
}

#[test]
fn the_breaker_stops_asking_a_failing_upstream() {
    let up = Upstreams::start();
    let mut config = up.config();
    config.limits.breaker_failures = 2;
    let live = Live::new(config).unwrap();
    runtime().block_on(async {
        for name in ["a.lvg", "b.lvg"] {
            assert!(live.registry(name, live.deadline()).await.is_err());
        }
        let started = Instant::now();
        let err = live.registry("c.lvg", live.deadline()).await.unwrap_err();
        assert!(
            matches!(&err, Failure::Upstream { detail, retry_after: Some(_), .. } if detail.contains("circuit breaker")),
            "{err:?}"
        );
        // Refused without a request (the breaker answers at once; nothing was sent).
        assert_eq!(up.hits("/rdap/domain/c.lvg"), 0);
        println!("breaker refusal in {:?}", started.elapsed());
        // Other registries are not affected.
        assert!(live.registry("taken.lvt", live.deadline()).await.is_ok());
    });
}

/// A TLS server whose connects time out (a listener with a full accept queue drops
/// further SYNs) trips the breaker like one that refuses, by the connect guard's
/// timeout and by the step's: the third lookup is answered at once, without a connect.
#[test]
fn tls_connect_timeouts_trip_the_breaker() {
    let up = Upstreams::start();
    let stalled = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    stalled
        .bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
    stalled.listen(0).unwrap();
    let port = stalled.local_addr().unwrap().as_socket().unwrap().port();
    // Fill the accept queue (never accepted) until a connect no longer completes.
    let mut queued = Vec::new();
    while let Ok(c) = std::net::TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(200),
    ) {
        queued.push(c);
        assert!(queued.len() < 64, "the listener's queue never filled");
    }
    let mut config = up.config();
    config.tls_port = port;
    config.limits.breaker_failures = 2;
    config.timeouts.connect = Duration::from_millis(200);
    let live = Live::new(config).unwrap();
    runtime().block_on(async {
        // The connect guard's own timeout (200 ms), then the step's: a lookup whose
        // deadline comes first (100 ms) times out in the step.
        for deadline in [Duration::from_secs(3), Duration::from_millis(100)] {
            let deadline = tokio::time::Instant::now() + deadline;
            let err = live.tls("secure.lvt", deadline).await.unwrap_err();
            let timed_out = match &err {
                Failure::Timeout { detail, .. } => detail == "connect",
                Failure::Upstream {
                    detail,
                    retry_after: None,
                    ..
                } => detail.contains("no connection within"),
                _ => false,
            };
            assert!(timed_out, "{err:?}");
        }
        let started = Instant::now();
        let err = live.tls("secure.lvt", live.deadline()).await.unwrap_err();
        let held_back = matches!(&err, Failure::Upstream { detail, retry_after: Some(_), .. }
            if detail.contains("holding back"));
        assert!(held_back, "{err:?}");
        assert!(
            started.elapsed() < Duration::from_millis(150),
            "it waited for a connect"
        );
    });
}

#[test]
fn untrusted_certificates_and_private_targets_are_refused() {
    let up = Upstreams::start();
    // Mozilla's roots do not know the test CA: the TLS handshake fails.
    let mut untrusted = up.config();
    untrusted.tls_roots = None;
    let live = Live::new(untrusted).unwrap();
    runtime().block_on(async {
        let err = live
            .registry("taken.lvt", live.deadline())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Failure::Upstream { detail, .. } if detail.contains("TLS")),
            "{err:?}"
        );
    });
    // Without --allow-private-targets, a registry on loopback is not connected to.
    let mut strict = up.config();
    strict.allow_private_targets = false;
    let live = Live::new(strict).unwrap();
    runtime().block_on(async {
        let err = live
            .registry("taken.lvt", live.deadline())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Failure::Refused { detail, .. } if detail.contains("loopback")),
            "{err:?}"
        );
    });
    assert_eq!(up.hits("/rdap/domain/taken.lvt"), 0);
}

#[test]
fn dns_records_with_ttls_and_every_response_code_told_apart() {
    use tldsnap::live::dns::Type;
    let up = Upstreams::start();
    let live = Live::new(up.config()).unwrap();
    runtime().block_on(async {
        let a = live.dns("taken.lvt", &Type::ALL, false, live.deadline()).await.unwrap();
        assert_eq!(a.status, "NOERROR");
        assert_eq!(a.resolver, format!("resolver {}", up.dns));
        let set = |t: &str| a.records.iter().find(|s| s.kind == t).unwrap();
        assert_eq!(set("A").records, [serde_json::json!({"address": "127.0.0.1", "ttl": 300})]);
        assert_eq!(set("A").ttl, Some(300));
        assert_eq!(set("AAAA").records[0]["address"], "::1");
        let mx: Vec<(u64, &str)> = set("MX")
            .records
            .iter()
            .map(|r| (r["preference"].as_u64().unwrap(), r["exchange"].as_str().unwrap()))
            .collect();
        assert_eq!(mx, [(10, "mail.taken.lvt"), (20, "backup.taken.lvt")]);
        assert_eq!(set("NS").records[0]["host"], "ns1.taken.lvt");
        assert_eq!(set("NS").ttl, Some(86400));
        assert_eq!(set("TXT").records[0]["text"], "v=spf1 -all");
        assert_eq!(set("CAA").records[0]["tag"], "issue");
        assert_eq!(set("CAA").records[0]["value"], "letsencrypt.org");
        assert_eq!(set("SOA").records[0]["serial"], 7);
        assert_eq!(set("SOA").records[0]["mname"], "ns1.taken.lvt");

        // The name exists, not this type: NOERROR without records, the SOA's TTL.
        let nodata = live.dns("secure.lvt", &[Type::Mx], false, live.deadline()).await.unwrap();
        assert_eq!(nodata.status, "NOERROR");
        assert_eq!(nodata.records[0].status, "NOERROR");
        assert!(nodata.records[0].records.is_empty());
        assert_eq!(nodata.records[0].ttl, Some(60));

        // No such name.
        let nx = live.dns("free.lvt", &[Type::A, Type::Ns], false, live.deadline()).await.unwrap();
        assert_eq!(nx.status, "NXDOMAIN");
        assert!(nx.records.iter().all(|s| s.status == "NXDOMAIN" && s.ttl == Some(60)));

        // The resolver could not get an answer: SERVFAIL, not NXDOMAIN.
        let sf = live.dns("servfail.lvt", &[Type::A, Type::Ns], false, live.deadline()).await.unwrap();
        assert_eq!(sf.status, "SERVFAIL");
        assert!(sf.records.iter().all(|s| s.status == "SERVFAIL"));

        // No answer at all: a timeout naming the resolver, within the budget.
        let started = Instant::now();
        let err = live.dns("slowdns.lvt", &[Type::A], false, live.deadline()).await.unwrap_err();
        println!("silent resolver answered as {err:?} in {:?}", started.elapsed());
        assert!(
            matches!(&err, Failure::Timeout { upstream, .. } if *upstream == format!("resolver {}", up.dns)),
            "{err:?}"
        );

        // Cached for the TTL: the same answer, learnt at the same time.
        let again = live.dns("taken.lvt", &Type::ALL, false, live.deadline()).await.unwrap();
        assert_eq!(again.learnt_at, a.learnt_at);
        assert_eq!(again.records, a.records);
    });
}

#[test]
fn dnssec_verdicts_are_the_resolvers() {
    use tldsnap::live::dns::{Dnssec, Type};
    let up = Upstreams::start();
    let live = Live::new(up.config()).unwrap();
    runtime().block_on(async {
        let ask = |name: &'static str, types: &'static [Type]| {
            let live = &live;
            async move { live.dns(name, types, true, live.deadline()).await.unwrap() }
        };
        // A validating resolver: AD on a signed zone's records and on its NXDOMAIN.
        let signed = ask("signed.lvt", &[Type::A, Type::Ns]).await;
        assert_eq!(signed.records[0].records[0]["address"], "127.0.0.1");
        assert!(
            signed
                .records
                .iter()
                .all(|s| s.dnssec == Some(Dnssec::Secure))
        );
        let summary = signed.dnssec.unwrap();
        assert_eq!(summary.verdict, Dnssec::Secure);
        assert_eq!(summary.resolver_validates, Some(true));
        let denied = ask("www.signed.lvt", &[Type::A]).await;
        assert_eq!(denied.status, "NXDOMAIN");
        assert_eq!(denied.records[0].ttl, Some(60));
        assert_eq!(denied.records[0].dnssec, Some(Dnssec::Secure));
        // No AD from a resolver that validates: an unsigned zone.
        let plain = ask("taken.lvt", &[Type::Mx]).await;
        assert_eq!(plain.records[0].records.len(), 2);
        assert_eq!(plain.dnssec.unwrap().verdict, Dnssec::Insecure);
        // SERVFAIL, and records with checking disabled: the validation failed.
        let bogus = ask("bogus.lvt", &[Type::A, Type::Mx]).await;
        assert_eq!(bogus.status, "SERVFAIL");
        assert!(
            bogus
                .records
                .iter()
                .all(|s| s.status == "SERVFAIL" && s.records.is_empty())
        );
        assert!(
            bogus
                .records
                .iter()
                .all(|s| s.dnssec == Some(Dnssec::Bogus))
        );
        // SERVFAIL either way is no verdict; the weakest type decides the name's.
        let broken = ask("servfail.lvt", &[Type::A]).await;
        assert_eq!(broken.records[0].dnssec, Some(Dnssec::Indeterminate));
        // Without the question, no verdict is given (and none is asked for).
        let unasked = live
            .dns("signed.lvt", &[Type::A], false, live.deadline())
            .await
            .unwrap();
        assert_eq!(unasked.dnssec, None);
        assert_eq!(unasked.records[0].dnssec, None);
        // Cached like any answer: the same verdict, learnt at the same time.
        let again = ask("signed.lvt", &[Type::A, Type::Ns]).await;
        assert_eq!(
            (again.learnt_at, again.records),
            (signed.learnt_at, signed.records)
        );
    });

    // A resolver that does not validate: no AD anywhere, so no verdict at all — not
    // "insecure", which would claim the zones are unsigned.
    let mut config = up.config();
    config.resolver = Some(up.dns_plain);
    let live = Live::new(config).unwrap();
    runtime().block_on(async {
        for name in ["signed.lvt", "taken.lvt", "bogus.lvt"] {
            let a = live
                .dns(name, &[Type::A], true, live.deadline())
                .await
                .unwrap();
            assert_eq!(a.status, "NOERROR", "{name}");
            assert_eq!(a.records[0].dnssec, Some(Dnssec::Indeterminate), "{name}");
            let summary = a.dnssec.unwrap();
            assert_eq!(summary.verdict, Dnssec::Indeterminate);
            assert_eq!(summary.resolver_validates, Some(false));
        }
        // A silent resolver: the lookup fails as before, naming it.
        let err = live
            .dns("slowdns.lvt", &[Type::A], true, live.deadline())
            .await
            .unwrap_err();
        assert!(matches!(err, Failure::Timeout { .. }), "{err:?}");
    });
}

#[test]
fn availability_needs_the_registry_and_the_dns_to_agree() {
    use tldsnap::live::availability::Verdict;
    let up = Upstreams::start();
    let live = Live::new(up.config()).unwrap();
    runtime().block_on(async {
        let v = |name: &'static str| {
            let live = &live;
            async move { live.availability(name, live.deadline()).await }
        };
        let taken = v("taken.lvt").await;
        assert_eq!(taken.availability, Verdict::Registered);
        assert_eq!(taken.evidence[0].source, "rdap");
        assert_eq!(taken.evidence[0].answer, "found: registered");
        assert_eq!(taken.evidence[1].answer, "2 NS records");
        assert_eq!(v("nic.lvt").await.availability, Verdict::Reserved);
        let free = v("free.lvt").await;
        assert_eq!(free.availability, Verdict::Available, "{free:?}");
        assert_eq!(free.evidence[0].answer, "not found (RDAP 404)");
        assert_eq!(free.evidence[1].answer, "NXDOMAIN");
        // RDAP says no such name, the resolver fails: not "available".
        let servfail = v("servfail.lvt").await;
        assert_eq!(servfail.availability, Verdict::Unknown);
        assert_eq!(servfail.evidence[1].answer, "SERVFAIL");
        // A slow registry: unknown, with the timeout as evidence, within the budget.
        let started = Instant::now();
        let slow = v("free.lvs").await;
        assert_eq!(slow.availability, Verdict::Unknown);
        assert!(slow.evidence[0].answer.starts_with("timeout"), "{slow:?}");
        println!("slow registry: unknown in {:?}", started.elapsed());
        // WHOIS registries answer availability too.
        assert_eq!(v("taken.lvw").await.availability, Verdict::Registered);
        assert_eq!(v("held.lvw").await.availability, Verdict::Reserved);
        assert_eq!(v("free.lvw").await.availability, Verdict::Available);
        let odd = v("odd.lvw").await;
        assert_eq!(odd.availability, Verdict::Unknown);
        assert_eq!(odd.evidence[0].source, "whois");
        // No service, NXDOMAIN: the DNS alone never says "available".
        assert_eq!(v("free.lvx").await.availability, Verdict::Unknown);
    });
}

#[test]
fn tls_certificates_valid_expired_wrong_host_and_self_signed() {
    let up = Upstreams::start();
    let live = Live::new(up.config()).unwrap();
    runtime().block_on(async {
        let ok = live.tls("secure.lvt", live.deadline()).await.unwrap();
        assert!(ok.valid, "{ok:?}");
        assert_eq!(ok.error, None);
        assert_eq!(ok.port, up.tls.port());
        assert_eq!(ok.address, "127.0.0.1");
        assert_eq!(ok.protocol, "TLS 1.3");
        assert_eq!(ok.certificate.sans, ["secure.lvt"]);
        assert_eq!(ok.certificate.subject, "CN=secure.lvt");
        assert_eq!(ok.certificate.issuer, "CN=tldsnap test CA");
        assert_eq!(ok.certificate.not_after, "4096-01-01T00:00:00.000Z");
        assert!(ok.certificate.days_to_expiry > 365 * 2000);
        assert_eq!(ok.chain.len(), 1, "the CA, as the server sent it");
        assert_eq!(ok.chain[0].subject, "CN=tldsnap test CA");

        let expired = live.tls("expired.lvt", live.deadline()).await.unwrap();
        assert!(!expired.valid);
        assert_eq!(expired.error, Some("expired"));
        assert_eq!(expired.certificate.not_after, "2020-01-01T00:00:00.000Z");
        assert!(expired.certificate.days_to_expiry < -365);

        let wrong = live.tls("wronghost.lvt", live.deadline()).await.unwrap();
        assert!(!wrong.valid);
        assert_eq!(wrong.error, Some("not_valid_for_name"));
        assert_eq!(wrong.certificate.sans, ["other.example"]);

        let selfsigned = live.tls("selfsigned.lvt", live.deadline()).await.unwrap();
        assert_eq!(selfsigned.error, Some("unknown_issuer"));

        // A name that resolves to a metadata address is never connected to.
        let err = live.tls("intranet.lvt", live.deadline()).await.unwrap_err();
        assert!(
            matches!(&err, Failure::Refused { detail, .. } if detail.contains("metadata")),
            "{err:?}"
        );
        // A name without addresses, and a server that does not answer in time.
        let err = live.tls("free.lvt", live.deadline()).await.unwrap_err();
        assert!(
            matches!(&err, Failure::Upstream { detail, .. } if detail.contains("no address")),
            "{err:?}"
        );
    });
    // Without --allow-private-targets, loopback is refused too.
    let mut strict = up.config();
    strict.allow_private_targets = false;
    let live = Live::new(strict).unwrap();
    runtime().block_on(async {
        let err = live.tls("secure.lvt", live.deadline()).await.unwrap_err();
        assert!(
            matches!(&err, Failure::Refused { detail, .. } if detail.contains("loopback")),
            "{err:?}"
        );
    });
}

#[test]
fn names_under_a_private_suffix_have_no_registry_witness() {
    use tldsnap::live::availability::Verdict;
    let up = Upstreams::start();
    let live = Live::new(up.config()).unwrap();
    // `free.us.lvt` under a PRIVATE-section suffix `us.lvt` (like CentralNic's us.com):
    // the .lvt registry never held it, so its "404" would say nothing.
    let split = tldsnap::audit::Split {
        domain: "free.us.lvt".into(),
        suffix_at: 5,
        private: true,
    };
    runtime().block_on(async {
        let err = live.registry_of(&split, live.deadline()).await.unwrap_err();
        assert_eq!(
            err,
            Failure::NoService {
                tld: "us.lvt".into()
            }
        );
        let a = live.availability_of(&split, live.deadline()).await;
        assert_eq!(a.availability, Verdict::Unknown, "{a:?}");
        assert_eq!(a.evidence[1].answer, "NXDOMAIN");
    });
    assert_eq!(up.hits("/rdap/domain/free.us.lvt"), 0);
}
