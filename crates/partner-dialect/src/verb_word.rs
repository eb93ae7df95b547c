//! Where the verb written after a `/` ends: a word, or a dotted verb
//! (`fs.read_file`, an MCP tool's) when the table knows it.

use super::verbs::VerbTable;

/// End of the verb word starting at `start`: `[A-Za-z][A-Za-z0-9_-]*`.
/// Returns `start` when there is no such word.
pub(crate) fn verb_word_end(src: &str, start: usize, limit: usize) -> usize {
    let bytes = src.as_bytes();
    if start >= limit || !bytes[start].is_ascii_alphabetic() {
        return start;
    }
    let mut end = start + 1;
    while end < limit
        && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_' || bytes[end] == b'-')
    {
        end += 1;
    }
    end
}

/// End of the verb written at `start`: the verb word, or — when `verbs`
/// knows it — a dotted one (`fs.read_file`, an MCP tool's verb), which a
/// word alone would end at the dot of.
pub(crate) fn verb_end(src: &str, start: usize, limit: usize, verbs: &VerbTable) -> usize {
    let end = verb_word_end(src, start, limit);
    if end == start || src.as_bytes().get(end) != Some(&b'.') {
        return end;
    }
    let tool_end = verb_word_end(src, end + 1, limit);
    if tool_end > end + 1 && verbs.knows_dotted(&src[start..tool_end]) {
        tool_end
    } else {
        end
    }
}
