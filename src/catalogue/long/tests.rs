//! The long suite's promises: same seed, same items; an item independent of the rest of the
//! ladder; the needle at its depth; the planned length near the asked one; every reference
//! scores correct and every wrong answer does not.

use std::path::Path;

use super::ladder::{DEFAULT_DEPTHS, DEFAULT_PER_CELL};
use super::*;
use crate::catalogue::self_test;
use crate::score::ScoreContext;

fn choice(lengths: Vec<u32>) -> LongChoice {
    LongChoice {
        lengths,
        ..LongChoice::default()
    }
}

fn json(items: &[Prompt]) -> String {
    serde_json::to_string(items).unwrap()
}

#[test]
fn the_same_seed_gives_the_same_items_and_an_item_ignores_the_ladder() {
    let (a, _) = generate(3, &choice(vec![256, 512]));
    let (b, _) = generate(3, &choice(vec![256, 512]));
    assert_eq!(json(&a), json(&b));
    let (other_seed, _) = generate(4, &choice(vec![256, 512]));
    assert_ne!(json(&a), json(&other_seed));
    let (longer, _) = generate(3, &choice(vec![256, 512, 1024]));
    assert_eq!(json(&a), json(&longer[..a.len()]));
    assert_eq!(a.len(), 2 * DEFAULT_DEPTHS.len() * DEFAULT_PER_CELL);
}

#[test]
fn ids_round_trip_and_name_the_cell() {
    let at = LongId {
        tokens: 4096,
        depth: 50,
        index: 3,
    };
    assert_eq!(at.id(), "long.4096.d050.03");
    assert_eq!(LongId::parse(&at.id()), Some(at));
    assert_eq!(LongId::parse("gen.letters.0001"), None);
    assert_eq!(LongId::parse("long.4096.d050"), None);
    assert_eq!(item(1, at).suite, crate::catalogue::Suite::Long);
}

#[test]
fn the_planned_length_is_near_the_asked_one_and_the_needle_at_its_depth() {
    for (tokens, depth) in [(1024, 0), (1024, 50), (4096, 100), (256, 25)] {
        let p = item(
            1,
            LongId {
                tokens,
                depth,
                index: 0,
            },
        );
        let text = p.question();
        let planned = text.len() / CHARS_PER_TOKEN;
        let tokens = tokens as usize;
        assert!(
            planned.abs_diff(tokens) * 20 < tokens,
            "{planned} planned for {tokens}"
        );
        let needle = format!("is {}.", p.reference);
        let at = text.find(&needle).unwrap() as f64 / text.len() as f64;
        assert!(
            (at - f64::from(depth) / 100.0).abs() < 0.1,
            "needle at {at:.2} for depth {depth}"
        );
        assert_eq!(text.matches(&needle).count(), 1);
    }
}

#[test]
fn every_reference_scores_correct_and_every_wrong_answer_does_not() {
    let (items, _) = generate(9, &choice(vec![256]));
    let ctx = ScoreContext::for_catalogue(Path::new("."));
    for p in &items {
        assert!(self_test(p, &ctx).is_empty(), "{}", p.id);
    }
}

#[test]
fn items_made_without_text_keep_their_ids_answers_and_planned_tokens() {
    let choice = choice(vec![256, 1024]);
    let (built, _) = generate(5, &choice);
    let (planned, _) = generate_as(5, &choice, Texts::Planned);
    assert_eq!(built.len(), planned.len());
    for (b, p) in built.iter().zip(&planned) {
        assert_eq!(
            (&b.id, &b.reference, &b.wrong),
            (&p.id, &p.reference, &p.wrong)
        );
        assert!(p.question().is_empty() && !b.question().is_empty());
        assert_eq!(planned_prompt_tokens(b), planned_prompt_tokens(p));
    }
}
