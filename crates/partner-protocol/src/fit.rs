//! Every message the daemon sends fits in one line of [`MAX_LINE`] bytes,
//! by construction: long texts in events are cut with a marker (the whole
//! event is fetched on demand with [`Op::Event`](super::Op::Event)), a
//! snapshot leaves out its oldest events when it must and says how many,
//! and a reply's message is cut last of all. [`fit`] is the one place a
//! message is made to fit; the daemon's writer calls it for every line.

use super::{MAX_LINE, Sequenced, ServerMsg, Snapshot, line};

/// Longest text of an event in a snapshot, in bytes (a snapshot carries
/// up to two thousand events).
pub const SNAPSHOT_TEXT: usize = 4 * 1024;

/// Longest text of an event sent on its own, in bytes.
pub const EVENT_TEXT: usize = 64 * 1024;

/// Longest piece of an event's JSON one [`Op::Event`](super::Op::Event)
/// reply carries, in bytes.
pub const EVENT_CHUNK: usize = 256 * 1024;

/// Longest refusal or error sent, in bytes.
pub const ERROR_TEXT: usize = 1024;

/// Room kept under [`MAX_LINE`] for the envelope around what is cut.
const SLACK: usize = 4 * 1024;

/// Cuts `text` to at most `limit` bytes (at a character boundary) and
/// marks the cut, naming event `seq` when it is not 0; returns the bytes
/// cut.
fn cut_text(text: &mut String, limit: usize, seq: u64) -> usize {
    if text.len() <= limit {
        return 0;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    if seq == 0 {
        text.push_str(&format!("…[cut: {cut} more bytes]"));
    } else {
        text.push_str(&format!(
            "…[cut: {cut} more bytes; event {seq} holds the whole text]"
        ));
    }
    cut
}

/// Cuts `text` to at most `limit` bytes (at a character boundary) with
/// a marker saying how much was cut; returns the bytes cut.
pub fn cut(text: &mut String, limit: usize) -> usize {
    cut_text(text, limit, 0)
}

/// Cuts every text of `event` to `limit` bytes; returns the bytes cut.
pub fn cut_event(event: &mut Sequenced, limit: usize) -> usize {
    let seq = event.seq;
    let cut: usize = event
        .event
        .texts_mut()
        .into_iter()
        .map(|t| cut_text(t, limit, seq))
        .sum();
    event.cut += cut as u64;
    cut
}

/// Cuts a waiting request's texts, and those of what it asks for, to
/// `limit` bytes each.
fn cut_request(request: &mut crate::request::PendingRequest, limit: usize) {
    for text in [
        &mut request.canonical,
        &mut request.reason,
        &mut request.raw_text,
    ] {
        cut_text(text, limit, 0);
    }
    let asked = &mut request.action;
    for text in [
        &mut asked.target,
        &mut asked.domain,
        &mut asked.workdir,
        &mut asked.proposal,
    ]
    .into_iter()
    .flatten()
    {
        cut_text(text, limit, 0);
    }
    for list in [&mut asked.protected, &mut asked.kept] {
        list.truncate(32);
        for text in list.iter_mut() {
            cut_text(text, limit, 0);
        }
    }
}

/// Serialized size of a message, newline included.
pub fn size(message: &ServerMsg) -> usize {
    line(message).len()
}

/// Cuts a snapshot to fit a line: every event's texts to
/// [`SNAPSHOT_TEXT`], each waiting request's texts likewise, then the
/// oldest events left out (counted in `left_out`) until it fits.
fn fit_snapshot(mut snapshot: Box<Snapshot>) -> ServerMsg {
    for event in &mut snapshot.recent {
        cut_event(event, SNAPSHOT_TEXT);
    }
    for request in &mut snapshot.pending {
        cut_request(request, SNAPSHOT_TEXT);
    }
    let mut message = ServerMsg::Snapshot { snapshot };
    let mut over = size(&message).saturating_sub(MAX_LINE - SLACK);
    while over > 0 {
        let ServerMsg::Snapshot { snapshot } = &mut message else {
            unreachable!("built above as a snapshot")
        };
        // Leave out the oldest events worth at least the excess.
        let mut freed = 0;
        let mut n = 0;
        for e in &snapshot.recent {
            if freed >= over {
                break;
            }
            freed += line(e).len();
            n += 1;
        }
        if n == 0 {
            // No events left: the waiting requests go, newest last.
            let keep = snapshot.pending.len() / 2;
            snapshot.pending_left_out += snapshot.pending.len() - keep;
            snapshot.pending.truncate(keep);
        } else {
            snapshot.recent.drain(..n);
            snapshot.left_out += n;
        }
        over = size(&message).saturating_sub(MAX_LINE - SLACK);
    }
    message
}

/// Cuts a reply's message and data to fit a line.
fn fit_reply(message: ServerMsg) -> ServerMsg {
    let ServerMsg::Reply {
        id,
        ok,
        mut message,
        data,
    } = message
    else {
        return message;
    };
    let data_size = if data.is_nothing() {
        0
    } else {
        serde_json::to_string(&data).map_or(0, |d| d.len())
    };
    let data = if data_size > MAX_LINE / 2 {
        message.push_str(" (its data was too large to send)");
        crate::Returned::Nothing
    } else {
        data
    };
    let budget = (MAX_LINE - SLACK - data_size.min(MAX_LINE / 2)) / 6;
    cut_text(&mut message, budget, 0);
    ServerMsg::Reply {
        id,
        ok,
        message,
        data,
    }
}

/// The message, made to fit one line of [`MAX_LINE`] bytes.
pub fn fit(message: ServerMsg) -> ServerMsg {
    match message {
        ServerMsg::Snapshot { snapshot } => fit_snapshot(snapshot),
        ServerMsg::Event(mut event) => {
            cut_event(&mut event, EVENT_TEXT);
            // Escapes may still make it long: cut harder.
            let mut limit = EVENT_TEXT;
            let mut message = ServerMsg::Event(event);
            while size(&message) > MAX_LINE - SLACK && limit > 64 {
                limit /= 4;
                if let ServerMsg::Event(e) = &mut message {
                    cut_event(e, limit);
                }
            }
            message
        }
        // A refusal may quote what it refused: a sentence's worth.
        ServerMsg::Reply {
            id,
            ok: false,
            mut message,
            data,
        } => {
            cut_text(&mut message, ERROR_TEXT, 0);
            ServerMsg::Reply {
                id,
                ok: false,
                message,
                data,
            }
        }
        reply @ ServerMsg::Reply { .. } if size(&reply) > MAX_LINE => fit_reply(reply),
        ServerMsg::Error { mut message } => {
            cut_text(&mut message, ERROR_TEXT, 0);
            ServerMsg::Error { message }
        }
        other => other,
    }
}

/// A piece of an event's JSON, for [`Op::Event`](super::Op::Event): at
/// most [`EVENT_CHUNK`] bytes from `offset` (moved back to a character
/// boundary), and where the next piece starts, if any.
pub fn chunk(json: &str, offset: usize) -> (String, Option<usize>) {
    let mut start = offset.min(json.len());
    while !json.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + EVENT_CHUNK).min(json.len());
    while !json.is_char_boundary(end) {
        end -= 1;
    }
    let next = (end < json.len()).then_some(end);
    (json[start..end].to_string(), next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;

    fn reply(text: &str) -> Sequenced {
        Sequenced {
            seq: 7,
            event: Event::ReplyFinished {
                agent: "ada".into(),
                pass: 1,
                text: text.into(),
            },
            cut: 0,
        }
    }

    #[test]
    fn an_event_of_control_characters_still_fits_a_line() {
        // Each \u{1} is six bytes once escaped.
        let message = fit(ServerMsg::Event(reply(&"\u{1}".repeat(900_000))));
        assert!(size(&message) <= MAX_LINE);
        let ServerMsg::Event(e) = message else {
            panic!()
        };
        assert!(e.cut > 800_000);
    }

    #[test]
    fn a_cut_lands_on_a_character_boundary_and_says_so() {
        let mut e = reply(&"é".repeat(10_000));
        cut_event(&mut e, 4_097);
        let Event::ReplyFinished { text, .. } = &e.event else {
            panic!()
        };
        assert!(text.contains("event 7 holds the whole text"), "{text}");
        assert_eq!(e.cut, 20_000 - 4_096);
    }

    #[test]
    fn chunks_join_back_into_the_whole() {
        let json = "ü".repeat(300_000);
        let mut whole = String::new();
        let mut at = Some(0);
        while let Some(offset) = at {
            let (piece, next) = chunk(&json, offset);
            whole.push_str(&piece);
            at = next;
        }
        assert_eq!(whole, json);
    }
}
