//! Answers written the way large reasoning models write them (DeepSeek-R1, Qwen3, gpt-oss) and
//! the way the committed runs' small model wrote them, each scored as a careful grader scores it:
//! `<think>` blocks, harmony channels, `\boxed{}`, "**Final answer:**", self-corrections,
//! hedges, labelled and bulleted lists, code replies where JSON was asked, answers cut off at the
//! budget, and an answer in another script than the question.

use super::testing::{exact, numeric, output};
use super::{score_completion, JsonType, Options, Score, ScoreContext, ScorerSpec};

/// How a case should score: right, wrong with this extraction, or no answer (wrong, nothing
/// read) with evidence holding this phrase.
enum Want {
    Right,
    Wrong(&'static str),
    NoAnswer(&'static str),
}

fn choice() -> ScorerSpec {
    let names = |n: &str| vec![n.to_string()];
    ScorerSpec::Choice {
        expected: "B".into(),
        options: Options(
            [
                ("A".to_string(), names("London")),
                ("B".to_string(), names("Paris")),
                ("C".to_string(), names("Berlin")),
            ]
            .into(),
        ),
    }
}

/// The generated `json_extraction` family's shape: city and items, with their values.
fn json() -> ScorerSpec {
    ScorerSpec::Json {
        required: [
            ("city".to_string(), JsonType::String),
            ("items".to_string(), JsonType::Integer),
        ]
        .into(),
        values: [
            ("city".to_string(), serde_json::json!("Bergen")),
            ("items".to_string(), serde_json::json!(20)),
        ]
        .into(),
    }
}

fn check(spec: &ScorerSpec, answer: &str, cut: bool, want: Want) {
    let ctx = ScoreContext::for_catalogue(std::path::Path::new("prompts"));
    let s: Score = score_completion(spec, answer, cut, &ctx);
    match want {
        Want::Right => assert_eq!(s.correct, Some(true), "{answer:?}: {s:?}"),
        Want::Wrong(read) => assert_eq!(
            (s.correct, s.extracted.as_deref()),
            (Some(false), Some(read)),
            "{answer:?}: {s:?}"
        ),
        Want::NoAnswer(why) => {
            assert_eq!(
                (s.correct, s.extracted.as_deref()),
                (Some(false), None),
                "{answer:?}: {s:?}"
            );
            assert!(s.evidence.contains(why), "{answer:?}: {}", s.evidence);
        }
    }
}

/// The harmony leak of issue 48: the analysis channel reasons its way to 2, the final says 3.
const HARMONY: &str = "<|channel|>analysis<|message|>We need to count r in \"strawberry\". \
    Maybe the answer is 2? s-t-r-a-w-b-e-r-r-y: r at 3, 8, 9.<|end|><|start|>assistant\
    <|channel|>final<|message|>There are 3 r's<|return|>";

#[test]
fn reasoning_blocks_and_channels_hold_no_answer() {
    let three = numeric("3");
    check(
        &three,
        "<think>s-t-r-a-w-b-e-r-r-y. Is it 2? No: r at 3, 8 and 9.</think>\n\nThere are **3** \
         r's in \"strawberry\".",
        false,
        Want::Right,
    );
    check(&three, HARMONY, false, Want::Right);
    check(&three, HARMONY, true, Want::Right);
    // Cut off while still reasoning: no final channel, no answer (the 2 it weighed is not one).
    check(
        &three,
        "<|channel|>analysis<|message|>Count r: maybe 2? s-t-r-a-w-b-e",
        true,
        Want::NoAnswer("no number found"),
    );
    check(
        &exact("Canberra", &[]),
        "<|channel|>analysis<|message|>User asks capital of Australia. Sydney is biggest.<|end|>\
         <|start|>assistant<|channel|>final<|message|>**Canberra**<|return|>",
        false,
        Want::Right,
    );
    check(
        &choice(),
        "<|start|>assistant<|channel|>final<|message|>B<|end|>",
        false,
        Want::Right,
    );
    // Qwen3 with thinking switched off leaves an empty block.
    check(
        &numeric("18"),
        "<think>\n\n</think>\n\n18",
        false,
        Want::Right,
    );
    // Control tokens never reach what is read.
    check(
        &output("-30 19 4"),
        "-30 19 4<|im_end|>",
        false,
        Want::Right,
    );
}

#[test]
fn marked_final_answers_and_self_corrections() {
    let eighteen = numeric("18");
    check(
        &eighteen,
        "<think>\nJanet's ducks lay 16 eggs. 16 - 3 - 4 = 9. 9 * 2 = 18.\n</think>\n\nShe keeps \
         16 − 3 − 4 = 9 eggs to sell, at $2 each: 9 × $2 = $18.\n\n**Final Answer**\n\\[\n\
         \\boxed{18}\n\\]",
        false,
        Want::Right,
    );
    check(
        &eighteen,
        "Step 1: 16 - 3 - 4 = 9.\nStep 2: 9 × 2 = 18.\n\n**Final answer:** $18",
        false,
        Want::Right,
    );
    // The self-check after the marked answer was cut off: the answer was committed before.
    check(
        &eighteen,
        "**Final answer:** 18\n\nLet me double-check: 9 eggs at $2 is",
        true,
        Want::Right,
    );
    check(
        &numeric("8"),
        "The answer is 9, or rather 8.",
        false,
        Want::Right,
    );
    check(
        &numeric("8"),
        "So the total is 9. Wait, no: 8, since one box is empty.",
        false,
        Want::Right,
    );
    check(
        &numeric("3"),
        "There are 2 r's... wait, let me recount: 3 r's.",
        false,
        Want::Right,
    );
    check(
        &exact("Canberra", &[]),
        "The capital of Australia is Sydney, but it's actually Canberra.",
        false,
        Want::Right,
    );
}

#[test]
fn hedges_are_no_answer_whichever_candidate_is_right() {
    check(
        &numeric("9"),
        "The answer is 9 or 8, depending on whether overlapping matches count.",
        false,
        Want::NoAnswer("hedged between `9` and `8`"),
    );
    check(
        &numeric("3"),
        "It appears either 3 or 4 times.",
        false,
        Want::NoAnswer("hedged"),
    );
    check(
        &numeric("3"),
        "**3** (or maybe 4, if the capital R counts)",
        false,
        Want::NoAnswer("hedged"),
    );
    check(
        &exact("Canberra", &[]),
        "It's either Sydney or Canberra, depending on who you ask.",
        false,
        Want::NoAnswer("hedged between \"Canberra\" and \"Sydney\""),
    );
    check(
        &exact("Canberra", &[]),
        "Canberra or Melbourne.",
        false,
        Want::NoAnswer("hedged"),
    );
    check(
        &choice(),
        "The answer is B or C.",
        false,
        Want::NoAnswer("hedged between B and C"),
    );
    // Not hedges: a question answered, one answer written two ways, a conversion.
    check(
        &exact("Canberra", &[]),
        "Sydney or Canberra? It's Canberra.",
        false,
        Want::Right,
    );
    check(
        &exact("George Orwell", &["Eric Arthur Blair"]),
        "George Orwell, or Eric Arthur Blair",
        false,
        Want::Right,
    );
    check(&numeric("1/6"), "6/36, or 1/6", false, Want::Right);
    check(
        &numeric("5"),
        "It is 5 km, or about 3.1 miles.",
        false,
        Want::Right,
    );
}

#[test]
fn labels_and_bullets_are_not_part_of_a_list() {
    let sorted = output("bellflower, bottleneck, excellence");
    for answer in [
        "Sorted: bellflower, bottleneck, excellence",
        "The words in alphabetical order are: bellflower, bottleneck, excellence.",
        "Here is the sorted list:\n\n1. bellflower\n2. bottleneck\n3. excellence",
        "- bellflower\n- bottleneck\n- excellence\n\nThese are in alphabetical order.",
        "<think>bel < bot < exc</think>\n\n**Final answer:** bellflower, bottleneck, excellence",
        "bellflower,bottleneck,excellence",
    ] {
        check(&sorted, answer, false, Want::Right);
    }
    // runs/example-smollm2-kv-demo: the label was read as part of the list.
    check(
        &output("-69, 121, 287, 436, 466, 510, 619, 629, 881, 980"),
        "The numbers are 510, 881, 466, 436, 619, -69, 629, 980, 121, 287.",
        false,
        Want::Wrong("510, 881, 466, 436, 619, -69, 629, 980, 121, 287"),
    );
    check(
        &output("architecture, bandana, celebration"),
        "Sorted: shipbuilding, freshwater, hammock.",
        false,
        Want::Wrong("shipbuilding, freshwater, hammock"),
    );
    // gen.reversing.0008 on kv-q4: the list, then a remark about it (the remark was read).
    check(
        &output("flamingo, furniture, imagination, perseverance, possession"),
        "Possession, Perseverance, Imagination, Furry\n\nThis is a list of words that are in \
         reverse order.",
        false,
        Want::Wrong("Possession, Perseverance, Imagination, Furry"),
    );
    // gen.sorting.0000 on kv-f16: a bulleted list under a label (its last bullet was read).
    check(
        &output("bellflower, bottleneck, excellence, expression, geography"),
        "The words in order are:\n\n- playground\n- bottleneck\n- bellflower\n- expression",
        false,
        Want::Wrong("playground, bottleneck, bellflower, expression"),
    );
    // gen.reversing.0006 on kv-f16: a labelled list cut off mid-way.
    check(
        &output("attendance, kaleidoscope, wheelbarrow, watermelon, reassessment"),
        "Reverse the order of this list:\n\n- Reversed list: watermelon, wheelbarrow, \
         kaleidoscope,\n- Separate by commas: watermelon, wheelbarrow, kaleidoscope,\n\nHere's \
         the corrected list:\n\n- Reversed list: watermelon, wheelbarrow, kaleid",
        true,
        Want::NoAnswer("cut off at the token limit mid-list"),
    );
}

#[test]
fn program_outputs_as_reasoning_models_give_them() {
    let out = output("-30 19 4");
    for answer in [
        "<think>a=8, b=19, c=0. i=0: b odd, c=0; a=-11 ...</think>\n\n```\n-30 19 4\n```",
        "The program prints `-30 19 4`.",
        "**Output:**\n```\n-30 19 4\n```",
        "```javascript\nconsole.log(a, b, c);\n```\n\nOutput: -30 19 4",
    ] {
        check(&out, answer, false, Want::Right);
    }
    // runs/example-smollm2-kv-demo-catalogue, code_py_listcomp on kv-f16: the output named by
    // its prefix, then a sentence about it that opens like another prefix ("This output is").
    check(
        &output("[0, 4, 8]"),
        "This Python code prints the following output:\n\n```\n[2, 4, 6, 8]\n```\n\nThis output \
         is the result of the modulo operation performed on the list comprehension.",
        false,
        Want::Wrong("[2, 4, 6, 8]"),
    );
}

#[test]
fn code_is_not_json() {
    let spec = json();
    // runs/example-smollm2-kv-demo, gen.json_extraction.0006 on kv-q4 (read as {"city":"Ghent",
    // "items":{"total":77}}, the dict a Python function returns).
    check(
        &spec,
        "Here is a Python function that implements this approach:\n\n```python\nimport json\n\n\
         def calculate_total_items(items):\n    return {\n        \"city\": \"Ghent\",\n        \
         \"items\": {\n            \"total\": 77\n        }\n    }\n```\n\nThe function returns a \
         JSON object.",
        false,
        Want::NoAnswer("the reply is code"),
    );
    // gen.json_extraction.0000 on kv-f16 (read as ["items"], a subscript).
    check(
        &spec,
        "```python\nimport json\n\ndef calculate_total_items(order_data):\n    total_items = 0\n    \
         for item in order_data[\"items\"]:\n        total_items += item[\"qty\"]\n    return \
         json.dumps({\"city\": \"Bergen\", \"items\": total_items})",
        true,
        Want::NoAnswer("the reply is code"),
    );
    check(
        &spec,
        "const order = JSON.parse(text);\nconsole.log(JSON.stringify({\"city\": \"Bergen\", \
         \"items\": 20}));",
        false,
        Want::NoAnswer("no valid JSON found"),
    );
    // JSON given as the answer beside code, or as a program's stated output, is an answer.
    check(
        &spec,
        "```python\nprint(json.dumps(result))\n```\n\nOutput:\n```json\n{\"city\": \"Bergen\", \
         \"items\": 20}\n```",
        false,
        Want::Right,
    );
    check(
        &spec,
        "This script will output:\n```python\n{\"city\": \"Bergen\", \"items\": 20}\n```",
        false,
        Want::Right,
    );
    check(
        &spec,
        "<think>Bergen; 9+8+3 = 20</think>\n{\"city\": \"Bergen\", \"items\": 20}",
        false,
        Want::Right,
    );
}

#[test]
fn an_answer_in_another_script_is_read_in_the_words_asked_for() {
    let orwell = exact("George Orwell", &["Orwell", "Eric Arthur Blair"]);
    check(
        &orwell,
        "《一九八四》的作者是乔治·奥威尔。",
        false,
        Want::Wrong("一九八四 的作者是乔治 奥威尔"),
    );
    let ctx = ScoreContext::for_catalogue(std::path::Path::new("prompts"));
    let s = score_completion(&orwell, "《一九八四》的作者是乔治·奥威尔。", false, &ctx);
    assert!(
        s.evidence.contains("written in Han script"),
        "{}",
        s.evidence
    );
    check(
        &orwell,
        "《一九八四》的作者是乔治·奥威尔（George Orwell）。",
        false,
        Want::Right,
    );
    // A prompt that lists the translation accepts it.
    check(
        &exact("George Orwell", &["乔治·奥威尔"]),
        "作者是乔治·奥威尔",
        false,
        Want::Right,
    );
    // Digits are digits in any language.
    check(&numeric("3"), "答案是 3。", false, Want::Right);
    check(
        &exact("Paris", &[]),
        "Столица Франции — Париж.",
        false,
        Want::Wrong("столица франции париж"),
    );
}
