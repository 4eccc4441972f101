//! The generator's promises: same seed, same items; item `i` independent of the count; every
//! reference scores correct and every wrong answer does not.

use std::collections::BTreeSet;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::*;
use crate::catalogue::self_test;
use crate::score::ScoreContext;

fn bytes(items: &[Prompt]) -> Vec<u8> {
    serde_json::to_vec(items).unwrap()
}

#[test]
fn the_same_seed_gives_the_same_items_byte_for_byte() {
    assert_eq!(bytes(&generate(7, 500)), bytes(&generate(7, 500)));
    assert_ne!(bytes(&generate(7, 50)), bytes(&generate(8, 50)));
}

#[test]
fn an_item_does_not_depend_on_how_many_were_asked_for() {
    let many = generate(3, 300);
    let few = generate(3, 40);
    assert_eq!(bytes(&many[..40]), bytes(&few));
    assert_eq!(bytes(&[item(3, 299)]), bytes(&many[299..]));
}

/// Changing what a family generates for a seed must come with a new GENERATOR_VERSION (a saved
/// run is re-scored by regenerating its items): this pins the items of version 1.
#[test]
fn the_items_of_this_generator_version_are_pinned() {
    let digest = format!("{:x}", Sha256::digest(bytes(&generate(DEFAULT_SEED, 1000))));
    assert_eq!(
        GENERATOR_VERSION, 1,
        "update the pinned digest with the version"
    );
    assert_eq!(
        digest,
        "0247a6dcf8c046bdbc5c13880aee6f8e58ad89148372630b21c437e47d466b5c"
    );
}

#[test]
fn ids_are_unique_and_name_the_family() {
    let items = generate(11, 3000);
    let ids: BTreeSet<&str> = items.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids.len(), items.len());
    assert_eq!(items[0].id, "gen.letters.0000");
    assert_eq!(items[FAMILIES.len()].id, "gen.letters.0001");
    for p in &items {
        assert!(is_generated(&p.id));
        assert!(
            p.id.starts_with(&format!("gen.{}.", p.category)),
            "{}",
            p.id
        );
        assert!(p.max_tokens.is_some_and(|t| t <= 160));
    }
    assert!(families().count() >= 12);
}

#[test]
fn thousands_of_items_are_distinct_questions() {
    let items = generate(DEFAULT_SEED, 5000);
    let questions: BTreeSet<&str> = items.iter().map(|p| p.question()).collect();
    assert!(
        questions.len() >= 4900,
        "{} distinct of 5000",
        questions.len()
    );
}

#[test]
fn every_reference_scores_correct_and_every_wrong_answer_does_not() {
    let ctx = ScoreContext::for_catalogue(Path::new("prompts"));
    for (seed, count) in [(DEFAULT_SEED, 6000), (42, 3000)] {
        let problems: Vec<String> = generate(seed, count)
            .iter()
            .flat_map(|p| {
                self_test(p, &ctx)
                    .into_iter()
                    .map(move |e| format!("{e}\n    question: {}", p.question()))
            })
            .collect();
        assert!(
            problems.is_empty(),
            "{} problems:\n{}",
            problems.len(),
            problems[..problems.len().min(20)].join("\n")
        );
    }
}
