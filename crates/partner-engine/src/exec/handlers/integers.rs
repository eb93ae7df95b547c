//! Whole-number arithmetic for `/calc`, answered without fend when the
//! expression is nothing but integers, `+`, `-`, `*` and brackets: the
//! exact value in decimal, which is what fend prints for such an
//! expression (a property test compares the two on generated expressions).
//! fend reads a number digit by digit through its unit-aware arithmetic,
//! tens of microseconds for an expression like `41 * 3 + 1`; agents write
//! many of these, and replaying a trace redoes every one. Anything else
//! (a division, a unit, a variable, a number past 128 bits) returns `None`
//! and is left to fend.

/// The value of `expr` when it is whole-number arithmetic that fits in
/// 128 bits; `None` when fend has to answer.
pub(super) fn evaluate(expr: &str) -> Option<String> {
    let mut reader = Reader {
        bytes: expr.as_bytes(),
        at: 0,
        depth: 0,
    };
    let value = reader.sum()?;
    reader.spaces();
    (reader.at == reader.bytes.len()).then(|| value.to_string())
}

/// Deepest nesting taken (the caller bounds it already; this keeps the
/// recursion bounded on its own).
const MAX_DEPTH: usize = 64;

/// Most digits in one number (beyond, fend answers).
const MAX_DIGITS: usize = 30;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl Reader<'_> {
    fn spaces(&mut self) {
        while self.bytes.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
    }

    /// The next byte after spaces, without taking it.
    fn peek(&mut self) -> Option<u8> {
        self.spaces();
        self.bytes.get(self.at).copied()
    }

    /// `term (('+' | '-') term)*`
    fn sum(&mut self) -> Option<i128> {
        let mut value = self.product()?;
        loop {
            match self.peek() {
                Some(b'+') => {
                    self.at += 1;
                    value = value.checked_add(self.product()?)?;
                }
                Some(b'-') => {
                    self.at += 1;
                    value = value.checked_sub(self.product()?)?;
                }
                _ => return Some(value),
            }
        }
    }

    /// `signed ('*' signed)*`
    fn product(&mut self) -> Option<i128> {
        let mut value = self.signed()?;
        while self.peek() == Some(b'*') {
            self.at += 1;
            // `**` is a power in fend.
            if self.bytes.get(self.at) == Some(&b'*') {
                return None;
            }
            value = value.checked_mul(self.signed()?)?;
        }
        Some(value)
    }

    /// `'-' signed | primary`
    fn signed(&mut self) -> Option<i128> {
        if self.peek() == Some(b'-') {
            self.at += 1;
            self.deeper(|r| r.signed()?.checked_neg())
        } else {
            self.primary()
        }
    }

    /// `digits | '(' sum ')'`, and nothing written right after it that
    /// fend could read as more (a unit, a power, a factorial, juxtaposed
    /// multiplication, digits after a space).
    fn primary(&mut self) -> Option<i128> {
        let value = match self.peek()? {
            b'(' => {
                self.at += 1;
                let value = self.deeper(Reader::sum)?;
                (self.peek()? == b')').then_some(())?;
                self.at += 1;
                value
            }
            b'0'..=b'9' => self.number()?,
            _ => return None,
        };
        match self.peek() {
            None | Some(b'+' | b'-' | b'*' | b')') => Some(value),
            _ => None,
        }
    }

    /// A run of decimal digits (no leading zero, which fend may read as
    /// another base's prefix or a decimal point's neighbour).
    fn number(&mut self) -> Option<i128> {
        let start = self.at;
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let digits = &self.bytes[start..self.at];
        if digits.len() > MAX_DIGITS || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    }

    fn deeper(&mut self, f: impl FnOnce(&mut Self) -> Option<i128>) -> Option<i128> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let value = f(self);
        self.depth -= 1;
        value
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;

    fn fend(expr: &str) -> Result<String, String> {
        let mut context = fend_core::Context::new();
        fend_core::evaluate(expr, &mut context).map(|r| r.get_main_result().to_string())
    }

    #[test]
    fn answers_whole_number_arithmetic_and_leaves_the_rest_to_fend() {
        for (expr, value) in [
            ("41 * 3 + 1", Some("124")),
            ("-(2 - 7) * (3)", Some("15")),
            ("99999999999999999999 * 9", Some("899999999999999999991")),
            ("0", Some("0")),
            ("- 0", Some("0")),
            ("7 / 2", None),
            ("2 ** 3", None),
            ("2 3", None),
            ("2(3)", None),
            ("3!", None),
            ("010 + 1", None),
            ("5 m", None),
            ("x + 1", None),
            ("(1 + 2", None),
            ("1 + ", None),
            ("", None),
            ("170141183460469231731687303715884105727 + 1", None),
        ] {
            assert_eq!(evaluate(expr).as_deref(), value, "{expr}");
        }
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(evaluate(&deep), None, "past its own depth bound");
    }

    /// Expressions of the shapes the fast path takes, and some it must
    /// refuse.
    fn expression() -> impl Strategy<Value = String> {
        let number = prop_oneof![
            (0u64..20).prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            "[0-9]{1,30}",
        ];
        let leaf = prop_oneof![number, Just("-7".to_string())];
        leaf.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                (inner.clone(), "[-+*]", inner.clone(), " {0,2}")
                    .prop_map(|(a, op, b, s)| format!("{a}{s}{op}{s}{b}")),
                inner.clone().prop_map(|a| format!("({a})")),
                inner.clone().prop_map(|a| format!("-{a}")),
                inner.prop_map(|a| format!("- ({a}) * 3")),
            ]
        })
    }

    #[test]
    fn most_generated_expressions_are_answered_so_the_comparison_means_something() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let tree = |r: &mut proptest::test_runner::TestRunner| {
            expression().new_tree(r).map(|t| t.current()).unwrap()
        };
        let answered = (0..1_000)
            .filter(|_| evaluate(&tree(&mut runner)).is_some())
            .count();
        assert!(answered > 500, "only {answered} of 1,000 answered");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        /// Whatever the fast path answers, fend answers the same.
        #[test]
        fn every_answer_is_what_fend_gives(expr in expression()) {
            if let Some(value) = evaluate(&expr) {
                prop_assert_eq!(Ok(value), fend(&expr), "{}", expr);
            }
        }
    }
}
