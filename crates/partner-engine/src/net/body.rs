//! Bounded reads of what a server sends: a body up to a size, and lines up
//! to a length.

/// Reads at most `limit` bytes of a response's body; the flag is true when
/// there was more (it is not read).
pub async fn read_limited(
    response: &mut reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut out = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit - out.len();
        if chunk.len() > room {
            out.extend_from_slice(&chunk[..room]);
            return Ok((out, true));
        }
        out.extend_from_slice(&chunk);
    }
    Ok((out, false))
}

/// A line longer than the bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the server sent a line longer than {0} bytes")]
pub struct LineTooLong(pub usize);

/// Splits a stream of chunks into lines (without their `\n`), none longer
/// than its bound: a longer line is an error as soon as the bound is
/// passed, so memory stays bounded whatever the server sends.
#[derive(Debug)]
pub struct Lines {
    partial: Vec<u8>,
    max: usize,
}

impl Lines {
    /// Lines of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        Lines {
            partial: Vec::new(),
            max,
        }
    }

    /// Takes the next chunk; returns the lines it completed.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<Vec<String>, LineTooLong> {
        let mut lines = Vec::new();
        while let Some(at) = memchr::memchr(b'\n', chunk) {
            if self.partial.len() + at > self.max {
                return Err(LineTooLong(self.max));
            }
            self.partial.extend_from_slice(&chunk[..at]);
            lines.push(String::from_utf8_lossy(&self.partial).into_owned());
            self.partial.clear();
            chunk = &chunk[at + 1..];
        }
        if self.partial.len() + chunk.len() > self.max {
            return Err(LineTooLong(self.max));
        }
        self.partial.extend_from_slice(chunk);
        Ok(lines)
    }

    /// Ends the stream: the last line, if it had no `\n`.
    pub fn finish(&mut self) -> Option<String> {
        (!self.partial.is_empty()).then(|| {
            let line = String::from_utf8_lossy(&self.partial).into_owned();
            self.partial.clear();
            line
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_cross_chunks_and_long_ones_are_refused() {
        let mut lines = Lines::new(10);
        let mut got = lines.feed(b"a\nb").unwrap();
        got.extend(lines.feed(b"b\n\ncc").unwrap());
        got.extend(lines.finish());
        assert_eq!(got, vec!["a", "bb", "", "cc"]);
        let mut lines = Lines::new(10);
        assert!(lines.feed(b"0123456789\n").is_ok());
        assert_eq!(lines.feed(b"01234").unwrap(), Vec::<String>::new());
        assert_eq!(lines.feed(b"567890"), Err(LineTooLong(10)));
        let mut lines = Lines::new(10);
        assert_eq!(lines.feed(&[b'x'; 100]), Err(LineTooLong(10)));
    }
}
