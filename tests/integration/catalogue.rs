//! The shipped catalogue (`prompts/`): every reference scores correct, every wrong answer does not,
//! the prompts the spec names carry its answers, category counts match, and the self-test catches
//! a flawed prompt.

use std::path::Path;

use coherence::catalogue::{
    category_counts, load_catalogue, self_test, self_test_all, Catalogue, PromptRequest, Role,
};
use coherence::run::request::build_request;
use coherence::score::{score, ScoreContext};
use coherence::Exit;

use crate::common::shipped_dir;

fn shipped() -> (Catalogue, ScoreContext) {
    let dir = shipped_dir();
    let catalogue = load_catalogue(&dir).unwrap_or_else(|e| panic!("{e}"));
    let ctx = ScoreContext::for_catalogue(&dir);
    (catalogue, ctx)
}

fn check_cli(dir: &Path) -> Exit {
    coherence::main_with_args(vec![
        "coherence".into(),
        "prompts".into(),
        "check".into(),
        "--catalogue".into(),
        dir.display().to_string(),
    ])
}

#[test]
fn every_reference_scores_correct_and_every_wrong_answer_does_not() {
    let (catalogue, ctx) = shipped();
    let problems = self_test_all(&catalogue.prompts, &ctx);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The same, spelled out, so a regression in `self_test` itself cannot hide a bad prompt.
    for p in &catalogue.prompts {
        let r = score(&p.score, &p.reference, &ctx);
        let w = score(&p.score, &p.wrong, &ctx);
        let want_reference = if p.score.open_ended() {
            None
        } else {
            Some(true)
        };
        assert_eq!(
            r.correct, want_reference,
            "{}: reference: {}",
            p.id, r.evidence
        );
        assert_eq!(
            w.correct,
            Some(false),
            "{}: wrong answer: {}",
            p.id,
            w.evidence
        );
        assert_ne!(p.reference.trim(), p.wrong.trim(), "{}", p.id);
    }
}

#[test]
fn every_category_but_code_generation_holds_the_spec_count() {
    // code_generation (12 JS prompts) lands from another branch; once it has, the ignored test
    // below covers the full count.
    let (catalogue, _) = shipped();
    for c in category_counts(&catalogue.prompts) {
        if c.category == "code_generation" {
            assert!(c.have == 0 || c.have == c.want, "{c:?}");
        } else {
            assert!(c.matches(), "{c:?}");
        }
    }
}

/// Every prompt the spec (`CATALOGUE.md`) names, with its category and expected answer.
const NAMED: &[(&str, &str, &str)] = &[
    ("count_letters", "counting_traps", "3"),
    ("cnt_mississippi", "counting_traps", "4"),
    ("cnt_rhubarb", "counting_traps", "2"),
    ("cnt_banana_a", "counting_traps", "3"),
    ("cnt_supercali_l", "counting_traps", "3"),
    ("cnt_supercali_i", "counting_traps", "7"),
    ("cnt_letter_in_sentence", "counting_traps", "4"),
    ("cnt_substr", "counting_traps", "3"),
    ("cnt_vowels", "counting_traps", "3"),
    ("cnt_triple", "counting_traps", "3"),
    ("clock_angle", "deterministic_math", "7.5"),
    ("gsm8k_eggs", "deterministic_math", "18"),
    ("math_geom_pyth", "deterministic_math", "5"),
    ("math_word_consec", "deterministic_math", "13"),
    ("math_word_work", "deterministic_math", "2.4"),
    ("math_prob_dice", "deterministic_math", "1/6"),
    ("gpqa_balmer", "factual", "656"),
    ("state_track", "logic_puzzles", "1"),
    ("logic_scheduling", "logic_puzzles", "3"),
    ("reason_mode_letter", "reasoning_mode", "3"),
    ("train_meet", "long_reasoning", "10:54 AM"),
];

#[test]
fn the_prompts_the_spec_names_carry_its_answers() {
    let (catalogue, _) = shipped();
    for (id, category, expected) in NAMED {
        let p = catalogue
            .get(id)
            .unwrap_or_else(|| panic!("missing prompt `{id}`"));
        assert_eq!(p.category, *category, "{id}");
        assert_eq!(p.score.kind(), "numeric", "{id}");
        assert_eq!(p.score.expected_summary(), *expected, "{id}");
    }
    let kinds = [
        ("json_format", "json"),
        ("structured_json", "json"),
        ("logic_knights", "choice"),
        ("trap_ignore", "trap"),
        ("trap_no_e", "trap"),
        ("factual_author", "exact"),
        ("creative_continuation", "open"),
    ];
    for (id, kind) in kinds {
        let p = catalogue
            .get(id)
            .unwrap_or_else(|| panic!("missing prompt `{id}`"));
        assert_eq!(p.score.kind(), kind, "{id}");
    }
    let ignore = catalogue
        .get("trap_ignore")
        .unwrap()
        .score
        .expected_summary();
    assert_eq!(ignore, "answer 4; no banana");
    let no_e = catalogue.get("trap_no_e").unwrap().score.expected_summary();
    assert!(no_e.contains("no letter e"), "{no_e}");
    // The reasoning endpoint of the field report needed 4096 tokens for this one.
    let creative = catalogue.get("creative_continuation").unwrap();
    assert_eq!(creative.max_tokens, Some(4096));
}

/// How small models really answer some of the shipped prompts, and whether that is correct.
const PHRASINGS: &[(&str, &str, bool)] = &[
    (
        "count_letters",
        "The letter r appears 3 times in strawberry.",
        true,
    ),
    (
        "count_letters",
        "There are three r's in \"strawberry\".",
        true,
    ),
    (
        "count_letters",
        "r appears twice in 'berry' and once in 'straw', so 3 in total.",
        true,
    ),
    ("count_letters", "**Answer:** 3", true),
    (
        "count_letters",
        "s-t-r-a-w-b-e-r-r-y has 3 r's (positions 3, 8, 9)",
        true,
    ),
    ("count_letters", "There are 2 r's in strawberry.", false),
    ("count_letters", "13", false),
    ("count_letters", "3.5", false),
    (
        "cnt_supercali_i",
        "The letter 'i' appears **7** times.",
        true,
    ),
    ("cnt_supercali_i", "It appears 9 times.", false),
    ("math_prob_dice", "The probability is $\\frac{1}{6}$.", true),
    ("math_prob_dice", "P = 6/36 = 1/6 ≈ 0.167", true),
    ("math_prob_dice", "There is a 1 in 6 chance.", true),
    ("math_prob_dice", "\\boxed{\\dfrac{1}{36}}", false),
    (
        "math_word_work",
        "Together: 1/4 + 1/6 = 5/12 per hour, so 12/5 = 2.4 hours (2 h 24 min).",
        true,
    ),
    ("math_word_work", "1.2 hours", false),
    ("math_percent_of", "40 is 16% of 250.", true),
    ("math_percent_of", "16", true),
    ("clock_angle", "The angle is 7.5°.", true),
    ("clock_angle", "7½ degrees", true),
    ("clock_angle", "97.5 degrees", false),
    ("gpqa_balmer", "About 656.3 nm.", true),
    ("gsm8k_eggs", "She makes **$18** every day.", true),
    ("train_meet", "The trains meet at **10:54 a.m.**", true),
    ("train_meet", "They meet at 10:54.", true),
    ("train_meet", "They meet at 11:06 AM.", false),
    ("long_sessions", "12:30 p.m.", true),
    ("logic_knights", "A", true),
    ("logic_knights", "**A** is the knight.", true),
    ("logic_knights", "A is the knight and B is the knave.", true),
    ("logic_knights", "A or B", false),
    ("logic_knights", "The knight is B.", false),
    ("logic_order", "Cal", true),
    (
        "logic_order",
        "Dan is the tallest and Cal is the shortest.",
        false,
    ),
    ("cnt_palindrome", "Yes, 'rotator' is a palindrome.", true),
    ("cnt_palindrome", "No.", false),
    // Seen from SmolLM2-135M on llama.cpp: a sentence instead of yes/no.
    (
        "cnt_palindrome",
        "The word \"rotator\" is a palindrome.",
        true,
    ),
    (
        "cnt_palindrome",
        "No, the word 'rotator' does not have a palindrome reading.",
        false,
    ),
    ("cnt_palindrome", "Rotator is not a palindrome.", false),
    (
        "logic_syllogism",
        "It does not follow: some razzies are lazzies only.",
        true,
    ),
    ("logic_syllogism", "Yes, it follows.", false),
    ("cnt_reverse", "ecnerehoc", true),
    ("cnt_reverse", "`ecnerehoc`", true),
    ("cnt_reverse", "ecnerehco", false),
    ("code_py_listcomp", "```\n[0, 4, 8]\n```", true),
    ("code_py_listcomp", "The code prints [0, 4, 8].", true),
    ("code_py_listcomp", "[0, 2, 4]", false),
    ("code_js_sort", "`1,10,9`", true),
    ("code_js_sort", "1,9,10", false),
    ("factual_author", "George Orwell", true),
    (
        "factual_author",
        "It was written by Eric Arthur Blair, known as George Orwell.",
        true,
    ),
    ("fact_completion_france", " Paris.", true),
    ("mt_correction", "Canberra.", true),
    ("mt_correction", "Sydney.", false),
    ("trap_ignore", "4", true),
    ("trap_ignore", "The answer is 4, not banana.", false),
    ("trap_no_e", "A fox ran past my barn.", true),
    ("trap_no_e", "A fox ran past the barn.", false),
    ("trap_words_not_digits", "Eight", true),
    ("trap_words_not_digits", "8", false),
    (
        "json_extract",
        "```json\n{\"order_id\": 4521, \"quantity\": 3, \"city\": \"Berlin\"}\n```",
        true,
    ),
    (
        "ambig_bank",
        "Which bank do you mean, and where are you now?",
        true,
    ),
    ("ambig_bank", "It is 500 metres away.", false),
];

#[test]
fn realistic_phrasings_score_as_a_reader_would() {
    let (catalogue, ctx) = shipped();
    for (id, answer, correct) in PHRASINGS {
        let p = catalogue
            .get(id)
            .unwrap_or_else(|| panic!("missing `{id}`"));
        let s = score(&p.score, answer, &ctx);
        assert_eq!(
            s.correct,
            Some(*correct),
            "{id}: {answer:?}: {}",
            s.evidence
        );
    }
}

#[test]
fn open_ended_prompts_leave_passing_answers_to_similarity() {
    let (catalogue, ctx) = shipped();
    let fr = catalogue.get("tr_en_fr").unwrap();
    let s = score(
        &fr.score,
        "La bibliothèque ouvre à 9 heures chaque matin.",
        &ctx,
    );
    assert_eq!(s.correct, None, "{}", s.evidence);
    let s = score(
        &fr.score,
        "La biblioteca abre a las nueve todas las mañanas.",
        &ctx,
    );
    assert_eq!(s.correct, Some(false), "{}", s.evidence);
    for category in ["creative", "summarization", "translation"] {
        for p in catalogue.prompts.iter().filter(|p| p.category == category) {
            assert!(p.score.open_ended(), "{}", p.id);
        }
    }
}

#[test]
fn multiturn_prompts_send_whole_conversations() {
    let (catalogue, _) = shipped();
    let multiturn: Vec<_> = catalogue
        .prompts
        .iter()
        .filter(|p| p.category == "multiturn")
        .collect();
    assert_eq!(multiturn.len(), 3);
    for p in multiturn {
        let PromptRequest::Chat { messages } = &p.request else {
            panic!("{} is not a chat", p.id);
        };
        assert!(messages.len() >= 3, "{}", p.id);
        assert!(
            messages.iter().any(|m| m.role == Role::Assistant),
            "{}",
            p.id
        );
        let (_, body) = build_request(p, "m", 64, &coherence::run::Sampling::deterministic(64));
        let sent = body["messages"].as_array().unwrap().len();
        assert_eq!(sent, messages.len(), "{}", p.id);
    }
    let completions = catalogue
        .prompts
        .iter()
        .filter(|p| matches!(p.request, PromptRequest::Completion { .. }))
        .count();
    assert!((1..=2).contains(&completions), "{completions}");
}

/// The field report's flawed prompt: the earlier train is also the faster one, so it never
/// catches up, yet the expected answer was 40.
const FLAWED: &str = r#"
[[prompt]]
id = "math_word_trains"
user = "Train A leaves at 1 PM at 60 mph. Train B leaves the same station at 2 PM at 40 mph in the same direction. After how many miles does B catch up with A?"
reference = "A is ahead by 60 miles at 2 PM and pulls away at 60 - 40 = 20 mph, so B never catches up: 0 times."
wrong = "B catches up after 40 miles."
score = { type = "numeric", expected = "40" }

[[prompt]]
id = "lenient"
user = "What is 2 + 2?"
reference = "4"
wrong = "Well, 3... no wait, 4"
score = { type = "numeric", expected = "4" }

[[prompt]]
id = "toothless"
user = "Write a haiku about rain."
reference = "Soft rain on the roof"
wrong = "Hard rain on the road"
score = { type = "open" }
"#;

#[test]
fn the_self_test_catches_a_wrong_reference_and_toothless_wrong_answers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("deterministic_math.toml"), FLAWED).unwrap();
    let catalogue = load_catalogue(dir.path()).unwrap();
    let ctx = ScoreContext::for_catalogue(dir.path());
    let trains = self_test(catalogue.get("math_word_trains").unwrap(), &ctx);
    assert!(
        trains
            .iter()
            .any(|p| p.contains("reference answer does not score correct")),
        "{trains:?}"
    );
    assert!(
        trains
            .iter()
            .any(|p| p.contains("wrong answer scores correct")),
        "{trains:?}"
    );
    let lenient = self_test(catalogue.get("lenient").unwrap(), &ctx);
    assert_eq!(lenient.len(), 1, "{lenient:?}");
    assert!(
        lenient[0].contains("wrong answer scores correct"),
        "{lenient:?}"
    );
    let toothless = self_test(catalogue.get("toothless").unwrap(), &ctx);
    assert_eq!(toothless.len(), 1, "{toothless:?}");
    assert!(
        toothless[0].contains("passes the open-ended checks"),
        "{toothless:?}"
    );
    assert!(
        toothless[0].contains("deterministic_math.toml:"),
        "{toothless:?}"
    );
    assert_eq!(check_cli(dir.path()), Exit::Usage);
}

#[test]
fn prompts_check_fails_on_count_mismatches_alone() {
    let dir = tempfile::tempdir().unwrap();
    let good = FLAWED
        .replace("math_word_trains", "unused")
        .split("[[prompt]]")
        .nth(2)
        .unwrap()
        .replace("Well, 3... no wait, 4", "5");
    std::fs::write(
        dir.path().join("deterministic_math.toml"),
        format!("[[prompt]]{good}"),
    )
    .unwrap();
    let catalogue = load_catalogue(dir.path()).unwrap();
    let ctx = ScoreContext::for_catalogue(dir.path());
    assert!(self_test_all(&catalogue.prompts, &ctx).is_empty());
    let counts = category_counts(&catalogue.prompts);
    let math = counts
        .iter()
        .find(|c| c.category == "deterministic_math")
        .unwrap();
    assert_eq!((math.have, math.want, math.matches()), (1, 13, false));
    assert_eq!(counts.iter().filter(|c| c.matches()).count(), 0);
    assert_eq!(check_cli(dir.path()), Exit::Usage);
}

#[test]
fn prompts_check_on_the_shipped_catalogue_finds_nothing_but_missing_code_generation() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(["prompts", "check", "--catalogue"])
        .arg(shipped_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("| counting_traps | 13 | 13 | ok |"),
        "{stdout}"
    );
    if shipped_dir().join("code_generation.toml").exists() {
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    } else {
        assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
        assert!(
            stdout.contains("| code_generation | 0 | 12 | MISMATCH |"),
            "{stdout}"
        );
        assert!(stderr.contains("(1 problem)"), "{stderr}");
        assert!(
            stderr.contains("category `code_generation` holds 0 prompts; the spec says 12"),
            "{stderr}"
        );
    }
}

#[test]
fn prompts_check_passes_on_the_shipped_catalogue() {
    let (catalogue, _) = shipped();
    assert_eq!(catalogue.prompts.len(), 100);
    assert!(catalogue.get("humaneval_close").is_some());
    let originals = catalogue
        .prompts
        .iter()
        .filter(|p| p.tags.iter().any(|t| t == "original"))
        .count();
    assert_eq!(originals, 16, "tag humaneval_close as original");
    assert!(category_counts(&catalogue.prompts)
        .iter()
        .all(|c| c.matches()));
    assert_eq!(check_cli(&shipped_dir()), Exit::Success);
}
