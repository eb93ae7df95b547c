//! Numbers that are personal data: payment card numbers (a known issuer's
//! prefix and length, and the Luhn check digit) and US social security
//! numbers (three, two and four digits, in the ranges ever issued).

use std::sync::LazyLock;

use regex::Regex;

/// True when `digits` (ASCII digits only) pass the Luhn check.
pub fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            let d = u32::from(d - b'0');
            if i % 2 == 1 {
                let twice = d * 2;
                if twice > 9 { twice - 9 } else { twice }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// True when `digits` start as a card network's numbers do and are as
/// long as that network's are.
fn issued(digits: &[u8]) -> bool {
    let len = digits.len();
    let prefix = |n: usize| -> u32 {
        digits[..n]
            .iter()
            .fold(0, |acc, d| acc * 10 + u32::from(d - b'0'))
    };
    if len < 13 {
        return false;
    }
    match digits[0] {
        // Visa.
        b'4' => matches!(len, 13 | 16 | 19),
        // Mastercard, and its 2-series.
        b'5' => (51..=55).contains(&prefix(2)) && len == 16,
        b'2' => (2221..=2720).contains(&prefix(4)) && len == 16,
        // American Express; Diners Club; JCB.
        b'3' => match prefix(2) {
            34 | 37 => len == 15,
            36 | 38 | 39 => (14..=19).contains(&len),
            30 => (300..=305).contains(&prefix(3)) && (14..=19).contains(&len),
            35 => (3528..=3589).contains(&prefix(4)) && (16..=19).contains(&len),
            _ => false,
        },
        // Discover.
        b'6' => {
            (prefix(4) == 6011 || prefix(2) == 65 || (644..=649).contains(&prefix(3)))
                && (16..=19).contains(&len)
        }
        _ => false,
    }
}

/// True when `text` holds a payment card number: 13 to 19 digits, in one
/// run or in groups split by single spaces, hyphens, dots or underscores,
/// that an
/// issuer could have given and whose check digit holds.
pub fn has_card(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        // One number: digits, and single separators between them.
        let mut digits = Vec::with_capacity(19);
        let mut j = i;
        while j < bytes.len() {
            let b = bytes[j];
            if b.is_ascii_digit() {
                digits.push(b);
                j += 1;
            } else if matches!(b, b' ' | b'-' | b'.' | b'_')
                && bytes.get(j + 1).is_some_and(u8::is_ascii_digit)
                && bytes[j - 1].is_ascii_digit()
            {
                j += 1;
            } else {
                break;
            }
            if digits.len() > 19 {
                break;
            }
        }
        let ends_clean = !bytes.get(j).is_some_and(u8::is_ascii_alphanumeric);
        if ends_clean && (13..=19).contains(&digits.len()) && issued(&digits) && luhn(&digits) {
            return true;
        }
        i = j.max(i + 1);
    }
    false
}

static SSN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^0-9A-Za-z.-])(\d{3})([- .])(\d{2})([- .])(\d{4})(?:$|[^0-9A-Za-z-])")
        .expect("the SSN pattern compiles")
});

static SSN_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:ssn|social[ _-]?security(?:[ _-]?(?:number|no))?)\b\W{0,3}(\d{9})\b")
        .expect("the named SSN pattern compiles")
});

/// True when the three parts could be a social security number: never
/// area 000, 666 or 900–999, group 00 or serial 0000.
fn ssn_parts(area: &str, group: &str, serial: &str) -> bool {
    let area: u32 = area.parse().unwrap_or(0);
    area != 0 && area != 666 && area < 900 && group != "00" && serial != "0000"
}

/// True when `text` holds a US social security number: `AAA-GG-SSSS`
/// (hyphens, spaces or dots, the same both times), or nine digits named
/// as one (`ssn: 078051120`).
pub fn has_ssn(text: &str) -> bool {
    let written = SSN
        .captures_iter(text)
        .any(|c| c[2] == c[4] && ssn_parts(&c[1], &c[3], &c[5]));
    written
        || SSN_NAMED
            .captures_iter(text)
            .any(|c| ssn_parts(&c[1][..3], &c[1][3..5], &c[1][5..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_cards_of_each_network_are_found_in_any_grouping() {
        for card in [
            "4111111111111111",
            "4111 1111 1111 1111",
            "4111-1111-1111-1111",
            "41111.11111.11111.1",
            "5555555555554444",
            "2223003122003222",
            "378282246310005",
            "6011111111111117",
            "3530111333300000",
            "30569309025904",
        ] {
            assert!(has_card(&format!("card={card}&x=1")), "{card}");
        }
    }

    #[test]
    fn ids_and_numbers_that_are_not_cards_are_left_alone() {
        for text in [
            "4111111111111112",
            "1795640271347261440",
            "status/20",
            "2024-05-14",
            "v4111111111111111",
            "4111111111111111x",
            "41111111111111111111111",
            "https://www.ebay.com/itm/256123456789",
        ] {
            assert!(!has_card(text), "{text}");
        }
    }

    #[test]
    fn social_security_numbers_in_their_forms() {
        assert!(has_ssn("my ssn is 078-05-1120."));
        assert!(has_ssn("078 05 1120"));
        assert!(has_ssn("/c/219.09.9999"));
        assert!(has_ssn("SSN: 078051120"));
        assert!(!has_ssn("078-05 1120"));
        assert!(!has_ssn("666-05-1120"));
        assert!(!has_ssn("978-05-1120"));
        assert!(!has_ssn("s41586-024-07421-0"));
        assert!(!has_ssn("v1.123.45.6789"));
    }
}
