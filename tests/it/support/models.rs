//! A tiny Model2Vec model the tests build: a handful of words with
//! 8-dimensional vectors chosen so that the neighbours are known, and the
//! same vectors for a loopback `/v1/embeddings` server.

use std::path::Path;

/// Words and their vectors: launch-ish words share axis 0, pets axis 1,
/// people axis 2, time axis 3; function words are near zero.
pub const WORDS: &[(&str, [f32; 8])] = &[
    ("launch", [1.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 0.0]),
    ("ship", [0.9, 0.0, 0.0, 0.1, 0.1, 0.0, 0.0, 0.0]),
    ("release", [0.95, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0]),
    ("date", [0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
    ("friday", [0.0, 0.0, 0.0, 0.9, 0.0, 0.0, 0.1, 0.0]),
    ("cat", [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1]),
    ("dog", [0.0, 0.9, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0]),
    ("dana", [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    ("said", [0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.05, 0.0]),
    ("the", [0.01, 0.01, 0.01, 0.01, 0.0, 0.0, 0.0, 0.0]),
];

/// Writes the tiny model into `dir`.
pub fn tiny_model(dir: &Path) {
    let words: Vec<(&str, Vec<f32>)> = WORDS.iter().map(|(w, v)| (*w, v.to_vec())).collect();
    partner::engine::embed::write_model(dir, &words).unwrap();
}

/// What the tiny model gives `text`: the mean of its known words'
/// vectors, normalized (zeros when it knows none).
pub fn tiny_vector(text: &str) -> Vec<f32> {
    let mut sum = [0.0f32; 8];
    let mut n = 0;
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
    {
        if let Some((_, v)) = WORDS.iter().find(|(w, _)| *w == word) {
            n += 1;
            for (s, x) in sum.iter_mut().zip(v) {
                *s += x;
            }
        }
    }
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n == 0 || norm == 0.0 {
        return vec![0.0; 8];
    }
    sum.iter().map(|x| x / norm).collect()
}
