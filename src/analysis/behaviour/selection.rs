//! A selected sample, said so: when the run's prompts were chosen with `--category` or `--only`
//! (for example the families that differed in an earlier run), the accuracy difference over them
//! is inflated by that choice and is no estimate for the catalogue. The behaviour reasons then
//! say the sample is selected and give the catalogue's and the generated items' figures apart.

use crate::analysis::answers::figures::PromptResult;
use crate::analysis::answers::stats::Paired;
use crate::run::Manifest;

/// The flags that choose the prompts of a run.
const SELECTING_FLAGS: &[&str] = &["--category", "--only"];

/// Whether any invocation of the run chose its prompts by flag.
pub fn is_selected(manifest: &Manifest) -> bool {
    manifest.header.invocations.iter().any(|i| {
        i.args.iter().any(|a| {
            SELECTING_FLAGS
                .iter()
                .any(|f| a == f || a.starts_with(&format!("{f}=")))
        })
    })
}

/// The reason stating the selection, with the paired accuracy difference (other − reference)
/// on the catalogue's prompts and on the generated items (those `generated` says are) apart, for
/// each pair.
pub fn selected_reason(
    prompts: &[PromptResult],
    generated: &dyn Fn(&str) -> bool,
    reference: &str,
    others: &[String],
) -> String {
    let parts: Vec<String> = others
        .iter()
        .map(|other| {
            let split = |in_generated: bool| {
                let part = prompts.iter().filter(|p| generated(&p.id) == in_generated);
                describe(difference(part, reference, other))
            };
            let prefix = if others.len() > 1 {
                format!("{other}: ")
            } else {
                String::new()
            };
            format!(
                "{prefix}catalogue {}, generated {}",
                split(false),
                split(true)
            )
        })
        .collect();
    format!(
        "selected sample: the run's prompts were chosen with --category/--only, so the difference above is no estimate for the whole catalogue or every family ({})",
        parts.join("; ")
    )
}

/// (other − reference accuracy in points, items both graded), from the one 2×2 tally.
fn difference<'a>(
    prompts: impl Iterator<Item = &'a PromptResult>,
    reference: &str,
    other: &str,
) -> (f64, usize) {
    let mut paired = Paired::default();
    for p in prompts {
        let graded = |name: &str| p.answers.get(name).and_then(|a| a.correct);
        if let (Some(r), Some(o)) = (graded(reference), graded(other)) {
            paired.add(r, o);
        }
    }
    let n = paired.graded();
    let delta = paired.other_only as f64 - paired.reference_only as f64;
    let points = if n == 0 {
        0.0
    } else {
        100.0 * delta / n as f64
    };
    (points, n as usize)
}

fn describe((points, n): (f64, usize)) -> String {
    if n == 0 {
        "no graded item".to_string()
    } else {
        format!("{points:+.1} points on {n} items")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(id: &str, reference: bool, other: bool) -> PromptResult {
        serde_json::from_value(serde_json::json!({
            "id": id, "category": "c", "question": "q", "expected": "1", "scorer": "numeric",
            "verdict": "same", "pairs": [],
            "answers": {
                "a": { "correct": reference, "reasoning_chars": 0, "truncated": false, "repeats_answered": 1, "repeats_planned": 1 },
                "b": { "correct": other, "reasoning_chars": 0, "truncated": false, "repeats_answered": 1, "repeats_planned": 1 },
            },
        }))
        .unwrap()
    }

    #[test]
    fn the_catalogue_and_the_generated_items_are_told_apart() {
        let prompts = [
            prompt("cnt_banana", true, true),
            prompt("fact_gold", false, true),
            prompt("gen.letters.0000", true, false),
            prompt("gen.letters.0001", true, false),
            prompt("gen.substrings.0000", false, false),
            prompt("gen.substrings.0001", true, true),
        ];
        let generated = |id: &str| id.starts_with("gen.");
        let reason = selected_reason(&prompts, &generated, "a", &["b".to_string()]);
        assert!(
            reason.ends_with(
                "(catalogue +50.0 points on 2 items, generated -50.0 points on 4 items)"
            ),
            "{reason}"
        );
    }
}
