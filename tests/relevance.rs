//! The relevance set in the repository (`data/relevance.json`): recall@5
//! by keyword and hybrid. A real small model is the user's to download, so
//! the suite builds a stand-in: a Model2Vec model whose words are grouped
//! by topic (a word's vector is its topic's axis), which knows that a
//! dentist has to do with teeth but nothing about the set's answers. The
//! figures with a real model come from `partner memory relevance` (see the
//! README).

use std::sync::Arc;

use partner::embed::relevance::{BUILTIN_SET, RelevanceSet, evaluate};
use partner::embed::{Model2Vec, write_model};

/// Words by topic.
const TOPICS: &[&str] = &[
    "ship launch release candidate build freezes announcement blog marketing changelog press version rolled customers deploy",
    "cat miso vaccination booster dog walker walks scratching puppy vet fed eat meals",
    "flight lisbon gate hotel porto portugal staying booked nights passport trip travel documents train tickets berlin prague",
    "dentist teeth checkup appointment physiotherapy knee sore treatment doctor coffee caffeine sleep blood vitamin gym",
    "rent housing costs grocery spending dollars food shopping cost savings saving money laptop computer electricity power bill tax taxes",
    "lasagna recipe ricotta basil pasta italian sourdough starter bread loaf bake oven temperature degrees curry thai spicy",
    "chopin nocturne piano practicing instrument learning concert jazz quartet guitar strings gig playlist synth pop",
    "leak parser bugs software login crashes crash browser safari database migrations service flaky integration test tests ci continuous unreliable refactor payment module code",
    "sister birthday present orchids parents visit visits thanksgiving holidays family reunion son leo kindergarten school",
    "tomatoes garden watering frost cold seedlings plants protect tulip bulbs planted",
    "standup meetings meeting review board quarterly priya weekly",
    "reading book books club library novel ishiguro darkness",
    "car oil tires winter maintenance bike bicycle brakes repair",
    "friday monday tuesday wednesday thursday saturday week tonight date march may june july august september october november january april",
];

fn stand_in(dir: &std::path::Path) -> Model2Vec {
    let dims = TOPICS.len();
    let mut words: Vec<(&str, Vec<f32>)> = Vec::new();
    for (axis, list) in TOPICS.iter().enumerate() {
        for word in list.split_whitespace() {
            let mut v = vec![0.0; dims];
            v[axis] = 1.0;
            words.push((word, v));
        }
    }
    write_model(dir, &words).unwrap();
    Model2Vec::load(dir).unwrap()
}

#[test]
fn the_relevance_set_is_found_better_by_meaning_than_by_words() {
    let set = RelevanceSet::parse(BUILTIN_SET).unwrap();
    assert!(set.memories.len() >= 50 && set.queries.len() >= 30);
    let dir = tempfile::tempdir().unwrap();
    let model = stand_in(dir.path());
    let report = evaluate(&set, Some(Arc::new(model)), 5).unwrap();
    let (id, hybrid) = report.hybrid.clone().unwrap();
    println!(
        "recall@5 over {} questions: keyword {:.3}, hybrid {hybrid:.3} ({id})",
        report.questions.len(),
        report.keyword
    );
    // Paraphrases that share no telling word with their answer.
    let missed: Vec<&str> = report
        .questions
        .iter()
        .filter(|q| q.keyword == 0.0)
        .map(|q| q.query.as_str())
        .collect();
    assert!(missed.len() >= 8, "{missed:?}");
    for q in &report.questions {
        if q.keyword == 0.0 {
            assert!(
                q.hybrid.unwrap() > 0.0,
                "meaning finds what words miss: {q:?}"
            );
        }
        assert!(
            q.hybrid.unwrap() >= q.keyword,
            "fusion loses nothing words found: {q:?}"
        );
    }
    assert!(report.keyword < 0.8, "{}", report.keyword);
    assert!(hybrid >= 0.95, "{hybrid}");
}

#[test]
fn a_set_that_names_a_missing_memory_is_refused() {
    let e = RelevanceSet::parse(
        r#"{"memories": [{"id": "a", "text": "x"}], "queries": [{"query": "x", "relevant": ["b"]}]}"#,
    )
    .unwrap_err();
    assert!(e.contains("names no memory b"), "{e}");
    assert!(RelevanceSet::parse("[1, 2]").is_err());
}
