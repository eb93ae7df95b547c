//! What `partner memory` prints: blocks, a block, its history as diffs,
//! and search hits — as text, or as JSON with `--json`.

use std::io::Write;

use super::common::{line, write_json};
use super::memory::row;
use crate::core::clock::format_time;
use crate::error::Result;
use crate::store::memory::vectors::HybridHit;
use crate::store::memory::{Block, BlockVersion, blocks};

/// `memory list`: one line per block.
pub(super) fn list(out: &mut dyn Write, list: &[Block], json: bool) -> Result<()> {
    if json {
        return write_json(out, &list.iter().map(row).collect::<Vec<_>>());
    }
    for b in list {
        line(
            out,
            format!(
                "{}/{}  {}  {}  {}/{} chars  v{}",
                b.agent,
                b.label,
                b.kind,
                b.permission,
                b.chars(),
                b.char_limit,
                b.version
            ),
        )?;
    }
    Ok(())
}

/// `memory show`: the block's head, then its value.
pub(super) fn show(out: &mut dyn Write, block: &Block, json: bool) -> Result<()> {
    if json {
        return write_json(out, &row(block));
    }
    line(
        out,
        format!(
            "{}/{} ({}, {}, v{}, {}/{} chars)",
            block.agent,
            block.label,
            block.kind,
            block.permission,
            block.version,
            block.chars(),
            block.char_limit
        ),
    )?;
    line(out, &block.value)
}

/// `memory history`: each version, who made it and when, and its diff
/// from the one before.
pub(super) fn history(
    out: &mut dyn Write,
    label: &str,
    history: &[BlockVersion],
    json: bool,
) -> Result<()> {
    if json {
        return write_json(out, &history);
    }
    let mut previous: Option<&BlockVersion> = None;
    for v in history {
        let what = if v.deleted { " (deleted)" } else { "" };
        line(
            out,
            format!(
                "v{} {} by {}{what}",
                v.version,
                format_time(v.changed_at),
                v.changed_by
            ),
        )?;
        if let Some(p) = previous {
            let diff = blocks::diff(label, &p.value, &v.value, p.version, v.version);
            for l in diff.lines().skip(2) {
                line(out, format!("    {l}"))?;
            }
        }
        previous = Some(v);
    }
    Ok(())
}

/// `memory search`: each hit's domain, place, snippet (matched terms in
/// brackets), which side found it and its score.
pub(super) fn found(
    out: &mut dyn Write,
    query: &str,
    hits: &[HybridHit],
    json: bool,
) -> Result<()> {
    if json {
        let mut hits = hits.to_vec();
        for h in &mut hits {
            h.hit.snippet = crate::store::memory::search::bracketed(&h.hit.snippet);
        }
        return write_json(out, &hits);
    }
    if hits.is_empty() {
        return line(out, format!("nothing found for \"{query}\""));
    }
    for h in hits {
        let hit = &h.hit;
        let place = hit.label.clone().unwrap_or_else(|| format!("#{}", hit.id));
        let domain = format!("{:?}", hit.domain).to_lowercase();
        let via = format!("{:?}", h.via).to_lowercase();
        line(
            out,
            format!(
                "{domain}  {}/{place}  {}  [{via} {:.4}]",
                hit.agent,
                crate::store::memory::search::bracketed(&hit.snippet),
                h.score
            ),
        )?;
    }
    Ok(())
}
