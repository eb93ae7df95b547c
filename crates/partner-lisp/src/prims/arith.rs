//! Numbers: arithmetic on integers (truncating division; an integer
//! result that overflows 64 bits becomes a decimal) and decimals, and
//! comparison.

use super::{Primitive, prim};
use crate::error::{ErrorKind, LispError, LispResult};
use crate::eval::Machine;
use crate::value::Value;

pub(super) static PRIMITIVES: &[Primitive] = &[
    prim!("+", 0, None, add, "Sum of numbers."),
    prim!("-", 1, None, sub, "Difference, or negation of one number."),
    prim!("*", 0, None, mul, "Product of numbers."),
    prim!(
        "/",
        2,
        None,
        div,
        "Quotient; integers divide truncating, by zero is an error."
    ),
    prim!(
        "mod",
        2,
        Some(2),
        modulo,
        "Integer remainder with the divisor's sign."
    ),
    prim!("abs", 1, Some(1), abs, "Absolute value."),
    prim!("min", 1, None, min, "Smallest number."),
    prim!("max", 1, None, max, "Largest number."),
    prim!(
        "=",
        2,
        None,
        eq,
        "Equal: numbers by value, other values by content."
    ),
    prim!("/=", 2, None, ne, "Not equal (every pair differs)."),
    prim!("<", 2, None, lt, "Strictly increasing numbers."),
    prim!(">", 2, None, gt, "Strictly decreasing numbers."),
    prim!("<=", 2, None, le, "Non-decreasing numbers."),
    prim!(">=", 2, None, ge, "Non-increasing numbers."),
    prim!("not", 1, Some(1), not, "Boolean negation."),
];

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    D(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::D(d) => d,
        }
    }
    fn value(self) -> Value {
        match self {
            Num::I(i) => Value::Int(i),
            Num::D(d) => Value::Dec(d),
        }
    }
}

fn num(who: &str, i: usize, v: &Value) -> LispResult<Num> {
    match v {
        Value::Int(n) => Ok(Num::I(*n)),
        Value::Dec(d) => Ok(Num::D(*d)),
        other => Err(LispError::expected(who, i + 1, "a number", other)),
    }
}

fn fold(
    who: &str,
    args: &[Value],
    start: Num,
    int: fn(i64, i64) -> Option<i64>,
    dec: fn(f64, f64) -> f64,
) -> LispResult<Value> {
    let mut acc = start;
    for (i, a) in args.iter().enumerate() {
        let n = num(who, i, a)?;
        acc = match (acc, n) {
            (Num::I(x), Num::I(y)) => int(x, y).map_or(Num::D(dec(x as f64, y as f64)), Num::I),
            (x, y) => Num::D(dec(x.f(), y.f())),
        };
    }
    Ok(acc.value())
}

fn add(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    fold("+", args, Num::I(0), i64::checked_add, |a, b| a + b)
}

fn mul(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    fold("*", args, Num::I(1), i64::checked_mul, |a, b| a * b)
}

fn sub(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    if args.len() == 1 {
        return fold("-", args, Num::I(0), i64::checked_sub, |a, b| a - b);
    }
    let first = num("-", 0, &args[0])?;
    let rest = fold("-", &args[1..], Num::I(0), i64::checked_add, |a, b| a + b)?;
    let rest = num("-", 1, &rest)?;
    Ok(match (first, rest) {
        (Num::I(a), Num::I(b)) => a
            .checked_sub(b)
            .map_or(Value::Dec(a as f64 - b as f64), Value::Int),
        (a, b) => Value::Dec(a.f() - b.f()),
    })
}

fn zero(who: &str) -> LispError {
    LispError::new(
        ErrorKind::DivisionByZero,
        format!("{who}: division by zero"),
    )
}

fn div(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let mut acc = num("/", 0, &args[0])?;
    for (i, a) in args.iter().enumerate().skip(1) {
        let n = num("/", i, a)?;
        acc = match (acc, n) {
            (_, Num::I(0)) => return Err(zero("/")),
            (_, Num::D(0.0)) => return Err(zero("/")),
            (Num::I(x), Num::I(y)) => x.checked_div(y).map_or(Num::D(x as f64 / y as f64), Num::I),
            (x, y) => Num::D(x.f() / y.f()),
        };
    }
    Ok(acc.value())
}

fn modulo(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let a = super::int("mod", 0, &args[0])?;
    let b = super::int("mod", 1, &args[1])?;
    if b == 0 {
        return Err(zero("mod"));
    }
    let r = a.checked_rem(b).unwrap_or(0);
    Ok(Value::Int(if r != 0 && (r < 0) != (b < 0) {
        r + b
    } else {
        r
    }))
}

fn abs(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(match num("abs", 0, &args[0])? {
        Num::I(i) => i
            .checked_abs()
            .map_or(Value::Dec((i as f64).abs()), Value::Int),
        Num::D(d) => Value::Dec(d.abs()),
    })
}

fn extreme(who: &str, args: &[Value], pick_later: fn(f64, f64) -> bool) -> LispResult<Value> {
    let mut best = num(who, 0, &args[0])?;
    for (i, a) in args.iter().enumerate().skip(1) {
        let n = num(who, i, a)?;
        if pick_later(best.f(), n.f()) {
            best = n;
        }
    }
    Ok(best.value())
}

fn min(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    extreme("min", args, |a, b| b < a)
}

fn max(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    extreme("max", args, |a, b| b > a)
}

fn eq(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(args.windows(2).all(|w| w[0].equals(&w[1]))))
}

fn ne(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    for (i, a) in args.iter().enumerate() {
        if args[i + 1..].iter().any(|b| a.equals(b)) {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn chain(who: &str, args: &[Value], ok: fn(std::cmp::Ordering) -> bool) -> LispResult<Value> {
    let mut nums = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        nums.push(num(who, i, a)?);
    }
    Ok(Value::Bool(nums.windows(2).all(|w| {
        let o = match (w[0], w[1]) {
            (Num::I(a), Num::I(b)) => a.cmp(&b),
            (a, b) => a.f().total_cmp(&b.f()),
        };
        ok(o)
    })))
}

fn lt(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    chain("<", args, |o| o.is_lt())
}
fn gt(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    chain(">", args, |o| o.is_gt())
}
fn le(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    chain("<=", args, |o| o.is_le())
}
fn ge(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    chain(">=", args, |o| o.is_ge())
}

fn not(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    match &args[0] {
        Value::Bool(b) => Ok(Value::Bool(!b)),
        other => Err(LispError::expected("not", 1, "a boolean", other)),
    }
}
