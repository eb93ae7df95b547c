//! The queue on both back ends: requests across connections, one
//! decision, standing rules; on PostgreSQL, notices and agent leases.

use super::*;

#[test]
fn a_request_crosses_connections_and_is_decided_once() {
    two_handles_on_both(|one, two, on| {
        let asked = ask(one, 0);
        assert_eq!(asked.status, RequestStatus::Waiting, "{on}");
        let seen = two.transaction(|tx| tx.waiting()).unwrap();
        assert_eq!(seen.len(), 1, "{on}: the other connection sees it");
        assert_eq!(seen[0].canonical, asked.canonical, "{on}");
        assert_eq!(
            seen[0].action.target.as_deref(),
            Some("bluesky"),
            "{on}: typed, as asked"
        );
        let approve = |by| Decided {
            status: RequestStatus::Approved,
            decision: "approve_once",
            by,
            note: None,
            claimant: None,
        };
        let decided = two
            .transaction(|tx| tx.decide(&asked.id, &approve("partner:ana"), T + 1))
            .unwrap();
        assert_eq!(decided.decided_by.as_deref(), Some("partner:ana"), "{on}");
        assert!(
            one.transaction(|tx| tx.waiting()).unwrap().is_empty(),
            "{on}"
        );
        let again = one
            .transaction(|tx| tx.decide(&asked.id, &approve("partner:ben"), T + 2))
            .unwrap_err();
        assert!(
            again.to_string().contains("already decided by partner:ana"),
            "{on}: {again}"
        );
        assert!(
            matches!(
                one.transaction(|tx| tx.decide("r999", &approve("partner:ben"), T)),
                Err(DecideError::NoRequest(_))
            ),
            "{on}"
        );
        // Decided at once from two connections, many times: one winner each.
        for n in 1..=20 {
            let id = ask(one, n).id;
            let (a, b) = std::thread::scope(|s| {
                let a = s
                    .spawn(|| one.transaction(|tx| tx.decide(&id, &approve("partner:ana"), T + 3)));
                let b = s
                    .spawn(|| two.transaction(|tx| tx.decide(&id, &approve("partner:ben"), T + 3)));
                (a.join().unwrap(), b.join().unwrap())
            });
            let (won, lost) = match (a, b) {
                (Ok(w), Err(l)) | (Err(l), Ok(w)) => (w, l),
                (a, b) => panic!("{on}: exactly one decision is recorded: {a:?} {b:?}"),
            };
            let winner = won.decided_by.unwrap();
            assert!(
                lost.to_string()
                    .contains(&format!("already decided by {winner}")),
                "{on}: {lost}"
            );
        }
    });
}

#[test]
fn standing_rules_are_added_listed_and_revoked_on_both() {
    two_handles_on_both(|one, two, on| {
        let rule = NewRule {
            agent: "ada",
            verb: "post",
            op: None,
            target: Some("bluesky"),
            allow: true,
            reason: Some("fine"),
            by: "partner:ana",
            expires_at: Some(T + 1_000),
        };
        let id = one.transaction(|tx| tx.add_rule(&rule, T)).unwrap();
        let rules = two.transaction(|tx| tx.rules(T)).unwrap();
        assert_eq!(rules.len(), 1, "{on}");
        assert_eq!(
            (rules[0].id, rules[0].created_by.as_str()),
            (id, "partner:ana"),
            "{on}"
        );
        assert!(
            two.transaction(|tx| tx.rules(T + 1_000))
                .unwrap()
                .is_empty(),
            "{on}: lapsed"
        );
        assert!(two.transaction(|tx| tx.revoke_rule(id, T)).unwrap(), "{on}");
        assert!(
            !one.transaction(|tx| tx.revoke_rule(id, T)).unwrap(),
            "{on}: not in force any more"
        );
        assert!(
            one.transaction(|tx| tx.rules(T)).unwrap().is_empty(),
            "{on}"
        );
    });
}

#[test]
fn a_request_and_its_decision_reach_a_listening_daemon_within_a_second() {
    use partner::store::postgres::channel;
    use std::time::{Duration, Instant};
    let Some(db) = postgres::scratch() else {
        return;
    };
    let here = PgStore::connect(&db.url).unwrap();
    let there = PgStore::connect(&db.url).unwrap();
    let mut listener = here
        .listen(&[channel::REQUESTS, channel::DECISIONS])
        .unwrap();
    assert!(
        listener
            .wait(Duration::from_millis(100))
            .unwrap()
            .is_empty(),
        "nothing yet"
    );
    let started = Instant::now();
    let there = Store::from(there);
    let asked = ask(&there, 1);
    let heard = listener.wait(Duration::from_secs(1)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(
        heard
            .iter()
            .map(|n| (n.channel.as_str(), n.payload.as_str()))
            .collect::<Vec<_>>(),
        vec![(channel::REQUESTS, asked.id.as_str())]
    );
    let approve = |by| Decided {
        status: RequestStatus::Approved,
        decision: "approve_once",
        by,
        note: None,
        claimant: None,
    };
    let started = Instant::now();
    there
        .transaction(|tx| tx.decide(&asked.id, &approve("partner:ana"), T))
        .unwrap();
    let heard = listener.wait(Duration::from_secs(1)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(
        (heard[0].channel.as_str(), heard[0].payload.as_str()),
        (channel::DECISIONS, asked.id.as_str())
    );
    // A decision that came second changes nothing and announces nothing.
    assert!(
        there
            .transaction(|tx| tx.decide(&asked.id, &approve("partner:ben"), T))
            .is_err()
    );
    assert!(
        listener
            .wait(Duration::from_millis(300))
            .unwrap()
            .is_empty()
    );
    assert!(
        here.listen(&["partner; DROP TABLE pending"]).is_err(),
        "channels are partner's own words"
    );
}

#[test]
fn an_agents_lease_has_one_holder_and_a_lapsed_one_is_taken_over() {
    use partner::store::postgres::LeaseError;
    use std::time::{Duration, Instant};
    let Some(db) = postgres::scratch() else {
        return;
    };
    let (h1, h2) = (
        PgStore::connect(&db.url).unwrap(),
        PgStore::connect(&db.url).unwrap(),
    );
    let ttl = Duration::from_millis(1_500);
    let mine = h1.acquire("ada", "h1", ttl).unwrap();
    assert_eq!((mine.host.as_str(), mine.epoch), ("h1", 1));
    match h2.acquire("ada", "h2", ttl) {
        Err(LeaseError::HeldBy { host, .. }) => assert_eq!(host, "h1"),
        other => panic!("h1 holds it: {other:?}"),
    }
    // Asking again, or renewing, keeps it (and its epoch).
    assert_eq!(h1.acquire("ada", "h1", ttl).unwrap().epoch, 1);
    let mine = h1.renew(&mine, ttl).unwrap();
    // h1 stops renewing (it died): h2 has it once it lapses, not before.
    let started = Instant::now();
    let taken = loop {
        match h2.acquire("ada", "h2", ttl) {
            Ok(lease) => break lease,
            Err(LeaseError::HeldBy { .. }) => {
                assert!(started.elapsed() < ttl * 3, "never taken over");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert!(
        started.elapsed() >= ttl - Duration::from_millis(200),
        "not before it lapsed"
    );
    assert_eq!((taken.host.as_str(), taken.epoch), ("h2", 2));
    // The daemon that lost it hears so at its next renewal, and who has it.
    match h1.renew(&mine, ttl) {
        Err(LeaseError::Lost { by, .. }) => assert_eq!(by.as_deref(), Some("h2")),
        other => panic!("h1 lost it: {other:?}"),
    }
    assert!(!h1.release(&mine).unwrap(), "an old lease releases nothing");
    // Many daemons asking at once for a free agent: exactly one has it.
    let won: usize = std::thread::scope(|s| {
        let asks: Vec<_> = (0..4)
            .map(|i| {
                let url = db.url.clone();
                s.spawn(move || {
                    let store = PgStore::connect(&url).unwrap();
                    store.acquire("bo", &format!("d{i}"), ttl).is_ok()
                })
            })
            .collect();
        asks.into_iter()
            .map(|a| usize::from(a.join().unwrap()))
            .sum()
    });
    assert_eq!(won, 1);
    // A clean stop gives the lease up at once.
    assert!(h2.release(&taken).unwrap());
    assert!(!h2.release(&taken).unwrap(), "once");
    assert_eq!(
        h1.acquire("ada", "h1", ttl).unwrap().epoch,
        3,
        "the next holder's epoch is higher"
    );
    let hosts: Vec<(String, String, bool)> = h1
        .leases()
        .unwrap()
        .into_iter()
        .map(|(l, live)| (l.agent, l.host, live))
        .collect();
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    assert_eq!(hosts[0], ("ada".into(), "h1".into(), true));
}

#[test]
fn rate_buckets_give_each_token_once_on_both() {
    use partner::policy::RateLimit;
    let (pairs, _kept) = pairs(|path| Box::new(sqlite(path)), |url| Box::new(pg(url)));
    let two_a_minute = RateLimit {
        burst: 2,
        per_minute: 1.0,
    };
    for (on, one, two) in &pairs {
        for _ in 0..3 {
            assert_eq!(
                one.transaction(|tx| tx.available("ada", "post", two_a_minute, T))
                    .unwrap(),
                Ok(()),
                "{on}: looking takes nothing"
            );
        }
        assert_eq!(
            one.transaction(|tx| tx.take("ada", "post", two_a_minute, T))
                .unwrap(),
            Ok(()),
            "{on}"
        );
        assert_eq!(
            two.transaction(|tx| tx.take("ada", "post", two_a_minute, T))
                .unwrap(),
            Ok(()),
            "{on}"
        );
        assert_eq!(
            one.transaction(|tx| tx.take("ada", "post", two_a_minute, T))
                .unwrap(),
            Err(60_000),
            "{on}"
        );
        assert_eq!(
            two.transaction(|tx| tx.available("ada", "post", two_a_minute, T))
                .unwrap(),
            Err(60_000),
            "{on}"
        );
        assert_eq!(
            one.transaction(|tx| tx.take("bo", "post", two_a_minute, T))
                .unwrap(),
            Ok(()),
            "{on}: per agent"
        );
        assert_eq!(
            two.transaction(|tx| tx.take("ada", "post", two_a_minute, T + 60_000))
                .unwrap(),
            Ok(()),
            "{on}: refilled"
        );
        let none = RateLimit {
            burst: 0,
            per_minute: 0.0,
        };
        assert_eq!(
            one.transaction(|tx| tx.take("ada", "x", none, T)).unwrap(),
            Ok(()),
            "{on}"
        );
        assert_eq!(
            two.transaction(|tx| tx.take("ada", "x", none, T)).unwrap(),
            Err(i64::MAX),
            "{on}"
        );
        // Two connections taking at once from a bucket of five: five tokens.
        let five = RateLimit {
            burst: 5,
            per_minute: 0.0,
        };
        let taken: usize = std::thread::scope(|s| {
            let takers: Vec<_> = (0..12)
                .map(|i| {
                    let b: &Store = if i % 2 == 0 {
                        one.as_ref()
                    } else {
                        two.as_ref()
                    };
                    s.spawn(move || {
                        usize::from(
                            b.transaction(|tx| tx.take("cy", "web", five, T))
                                .unwrap()
                                .is_ok(),
                        )
                    })
                })
                .collect();
            takers.into_iter().map(|t| t.join().unwrap()).sum()
        });
        assert_eq!(taken, 5, "{on}");
    }
}
