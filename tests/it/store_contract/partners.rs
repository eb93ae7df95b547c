//! Partners on both back ends: a token is shown once and kept only as a
//! hash; it names its partner from any connection; revoking closes it;
//! names are checked and never reused.

use super::*;
use partner::policy::partners::{PartnerError, Partners, TOKEN_PREFIX, token_hash};

#[test]
fn partners_are_added_identified_by_token_and_revoked_on_both() {
    let (pairs, _kept) = pairs(
        |path| -> Box<dyn Partners> { Box::new(MemoryStore::open(path).unwrap()) },
        |url| -> Box<dyn Partners> { Box::new(PgStore::connect(url).unwrap()) },
    );
    for (on, one, two) in &pairs {
        let alice = one.add_partner("alice", T).unwrap();
        let bob = two.add_partner("bob", T + 1).unwrap();
        assert!(alice.starts_with(TOKEN_PREFIX), "{on}: {alice}");
        assert_ne!(alice, bob, "{on}");
        // Each token names its partner, from either connection.
        assert_eq!(
            two.partner_of(&alice).unwrap().as_deref(),
            Some("alice"),
            "{on}"
        );
        assert_eq!(
            one.partner_of(&bob).unwrap().as_deref(),
            Some("bob"),
            "{on}"
        );
        // A made-up token, an empty one, or the stored hash itself opens nothing.
        for wrong in [
            format!("{TOKEN_PREFIX}{}", "0".repeat(64)),
            String::new(),
            token_hash(&alice),
            alice[..alice.len() - 1].to_string(),
        ] {
            assert_eq!(one.partner_of(&wrong).unwrap(), None, "{on}: {wrong}");
        }
        // A name is taken once, even after it is revoked.
        assert!(
            matches!(
                two.add_partner("alice", T + 2),
                Err(PartnerError::Exists(_))
            ),
            "{on}"
        );
        for bad in [
            "",
            "Alice",
            "9lives",
            "a b",
            "x".repeat(33).as_str(),
            "al:ice",
        ] {
            assert!(
                matches!(one.add_partner(bad, T), Err(PartnerError::BadName(_))),
                "{on}: {bad:?}"
            );
        }
        assert!(two.revoke_partner("alice", T + 5).unwrap(), "{on}");
        assert!(
            !one.revoke_partner("alice", T + 6).unwrap(),
            "{on}: already revoked"
        );
        assert!(
            matches!(
                one.revoke_partner("carol", T),
                Err(PartnerError::NoPartner(_))
            ),
            "{on}"
        );
        assert_eq!(one.partner_of(&alice).unwrap(), None, "{on}: revoked");
        assert!(!one.is_active("alice").unwrap(), "{on}");
        assert!(one.is_active("bob").unwrap(), "{on}");
        let listed = two.partners().unwrap();
        let names: Vec<_> = listed
            .iter()
            .map(|p| (p.name.as_str(), p.revoked_at))
            .collect();
        assert_eq!(names, [("alice", Some(T + 5)), ("bob", None)], "{on}");
        assert!(matches!(
            two.add_partner("alice", T + 7),
            Err(PartnerError::Exists(_))
        ));
    }
}
