//! Maps and sets: lookup (with a default, or along a path), building new
//! ones with keys added, removed or updated, and set algebra. A missing
//! key with no default gives the empty list, Lisp's "nothing".

use std::collections::{BTreeMap, BTreeSet};

use super::{Primitive, key, prim, seq};
use crate::error::{LispError, LispResult};
use crate::eval::Machine;
use crate::value::{Key, Table, Value};

pub(super) static PRIMITIVES: &[Primitive] = &[
    prim!(
        "get",
        2,
        Some(3),
        get,
        "(get map key [default]): the value at key."
    ),
    prim!(
        "get-in",
        2,
        Some(3),
        get_in,
        "(get-in map (k1 k2 …) [default]): the value along a path of keys."
    ),
    prim!(
        "assoc",
        3,
        None,
        assoc,
        "(assoc map k v …): a map with keys set."
    ),
    prim!(
        "dissoc",
        1,
        None,
        dissoc,
        "(dissoc map k …): a map without keys."
    ),
    prim!(
        "update",
        3,
        Some(3),
        update,
        "(update map k f): a map with k set to (f old)."
    ),
    prim!("keys", 1, Some(1), keys, "A map's keys, sorted."),
    prim!("vals", 1, Some(1), vals, "A map's values, in key order."),
    prim!("hash-map", 0, None, hash_map, "(hash-map k v …): a map."),
    prim!("hash-set", 0, None, hash_set, "(hash-set x …): a set."),
    prim!(
        "contains?",
        2,
        Some(2),
        contains,
        "Whether a map has a key, a set a member, or a list an item."
    ),
    prim!("set-union", 1, None, union, "Members of any of the sets."),
    prim!(
        "set-intersection",
        1,
        None,
        intersection,
        "Members of every set."
    ),
    prim!(
        "set-difference",
        1,
        None,
        difference,
        "Members of the first set in none of the others."
    ),
];

fn table<'v>(who: &str, i: usize, v: &'v Value) -> LispResult<&'v Table> {
    match v {
        Value::Map(t) => Ok(t),
        other => Err(LispError::expected(who, i + 1, "a map", other)),
    }
}

fn members<'v>(who: &str, i: usize, v: &'v Value) -> LispResult<&'v BTreeSet<Key>> {
    match v {
        Value::Set(s) => Ok(s),
        other => Err(LispError::expected(who, i + 1, "a set", other)),
    }
}

fn get(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let t = table("get", 0, &args[0])?;
    let k = key("get", 1, &args[1])?;
    Ok(t.entries
        .get(&k)
        .cloned()
        .unwrap_or_else(|| args.get(2).cloned().unwrap_or_else(Value::nil)))
}

fn get_in(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let path = seq("get-in", 1, &args[1])?;
    let missing = || args.get(2).cloned().unwrap_or_else(Value::nil);
    let mut here = args[0].clone();
    for step in &path.items {
        let k = key("get-in", 1, step)?;
        let Value::Map(t) = &here else {
            return Ok(missing());
        };
        let Some(next) = t.entries.get(&k).cloned() else {
            return Ok(missing());
        };
        here = next;
    }
    Ok(here)
}

fn assoc(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let t = table("assoc", 0, &args[0])?;
    if args.len().is_multiple_of(2) {
        return Err(LispError::arity(
            "assoc",
            "a map and key-value pairs",
            args.len(),
        ));
    }
    m.charge(t.entries.len() as u64 / 8)?;
    let mut entries = t.entries.clone();
    for (i, pair) in args[1..].chunks(2).enumerate() {
        entries.insert(key("assoc", 1 + 2 * i, &pair[0])?, pair[1].clone());
    }
    Value::map(entries)
}

fn dissoc(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let t = table("dissoc", 0, &args[0])?;
    m.charge(t.entries.len() as u64 / 8)?;
    let mut entries = t.entries.clone();
    for (i, k) in args.iter().enumerate().skip(1) {
        entries.remove(&key("dissoc", i, k)?);
    }
    Value::map(entries)
}

fn update(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let t = table("update", 0, &args[0])?;
    let k = key("update", 1, &args[1])?;
    let old = t.entries.get(&k).cloned().unwrap_or_else(Value::nil);
    let new = m.apply(&args[2], vec![old], "update", 3)?;
    m.charge(t.entries.len() as u64 / 8)?;
    let mut entries = t.entries.clone();
    entries.insert(k, new);
    Value::map(entries)
}

fn keys(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let t = table("keys", 0, &args[0])?;
    Value::list(t.entries.keys().map(Key::value).collect())
}

fn vals(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let t = table("vals", 0, &args[0])?;
    Value::list(t.entries.values().cloned().collect())
}

fn hash_map(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    if args.len() % 2 == 1 {
        return Err(LispError::arity(
            "hash-map",
            "key-value pairs (an even number)",
            args.len(),
        ));
    }
    let mut entries = BTreeMap::new();
    for (i, pair) in args.chunks(2).enumerate() {
        entries.insert(key("hash-map", 2 * i, &pair[0])?, pair[1].clone());
    }
    Value::map(entries)
}

fn hash_set(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let mut s = BTreeSet::new();
    for (i, a) in args.iter().enumerate() {
        s.insert(key("hash-set", i, a)?);
    }
    Value::set(s)
}

fn contains(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(match &args[0] {
        Value::Map(t) => args[1].key().is_some_and(|k| t.entries.contains_key(&k)),
        Value::Set(s) => args[1].key().is_some_and(|k| s.contains(&k)),
        Value::List(s) => s.items.iter().any(|v| v.equals(&args[1])),
        other => {
            return Err(LispError::expected(
                "contains?",
                1,
                "a map, set or list",
                other,
            ));
        }
    }))
}

fn combine(
    who: &str,
    args: &[Value],
    m: &mut Machine<'_>,
    step: fn(&BTreeSet<Key>, &BTreeSet<Key>) -> BTreeSet<Key>,
) -> LispResult<Value> {
    let mut acc = members(who, 0, &args[0])?.clone();
    for (i, a) in args.iter().enumerate().skip(1) {
        let other = members(who, i, a)?;
        m.charge((acc.len() + other.len()) as u64 / 8)?;
        acc = step(&acc, other);
    }
    Value::set(acc)
}

fn union(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    combine("set-union", args, m, |a, b| a.union(b).cloned().collect())
}

fn intersection(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    combine("set-intersection", args, m, |a, b| {
        a.intersection(b).cloned().collect()
    })
}

fn difference(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    combine("set-difference", args, m, |a, b| {
        a.difference(b).cloned().collect()
    })
}
