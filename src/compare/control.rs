//! The A-vs-A control that grows (`compare --control auto`): the reference answers the first
//! [`START`] prompts a second time, and after each look at the identity tests that leaves a pair
//! undecided, more of the scope's prompts, until every pair reads `identical`, `perturbed` or
//! `different`, or the control holds `--control-max` prompts (never more than the run's). Both
//! tests are anytime-valid (`analysis/identity/numerics.rs`), so looking after every round costs no error
//! rate. Each look is recorded in the manifest (`control_looks`); a resumed run goes on from the
//! control it had.

use crate::analysis::identity::numerics::{self, IdentitySummary};
use crate::run::{Answered, Manifest, RunPlan};

/// The control's first size: enough for a pair that never parts from the reference to read
/// `identical`, or one that parts from its first token to read `perturbed`, at the first look.
pub const START: usize = 30;

/// The control's size after a look that left identity undecided: half as large again, at least
/// [`START`] more, never past `cap`.
pub fn next_size(current: usize, cap: usize) -> usize {
    (current + START.max(current / 2)).min(cap)
}

/// Record a look at the control `plan` has in `manifest` (once per size).
pub fn record_look(plan: &RunPlan, manifest: &mut Manifest) {
    if plan.grows_control() && manifest.control_looks.last() != Some(&plan.control) {
        manifest.control_looks.push(plan.control);
    }
}

/// Look at identity over the run's records so far (`complete`: nothing the plan sent is
/// missing) and return the control's next size when it should grow: some pair undecided, below
/// the cap, and no request failed (a resumed run sends the failed ones again and looks then).
pub fn look(
    plan: &RunPlan,
    manifest: &Manifest,
    records: &[Answered],
    complete: bool,
) -> Option<usize> {
    if !plan.grows_control() {
        return None;
    }
    let identity = numerics::decide(
        records,
        &manifest.endpoint_names(),
        &manifest.prompts,
        &[],
        numerics::setting_of(manifest),
    )?;
    let cap = plan.control_cap();
    if !complete || plan.control >= cap || identity.evidence.iter().all(|p| p.verdict.is_decided())
    {
        return None;
    }
    let next = next_size(plan.control, cap);
    if !plan.quiet {
        eprintln!(
            "identity undecided on {} control prompts ({}); the reference answers {} more (--control-max {})",
            plan.control,
            undecided_pairs(&identity),
            next - plan.control,
            plan.control_max.unwrap_or(cap)
        );
    }
    Some(next)
}

/// "b: excess 4.1%, e 2.3 of 20 toward perturbed, 6.0 of 20 toward identical" for each pair
/// still undecided.
fn undecided_pairs(identity: &IdentitySummary) -> String {
    identity
        .evidence
        .iter()
        .filter(|p| !p.verdict.is_decided())
        .map(|p| {
            format!(
                "{}: excess {:.1}%, e {:.1} of {:.0} toward perturbed, {:.1} of {:.0} toward identical",
                p.other,
                100.0 * p.test.excess.unwrap_or(0.0),
                p.test.e_value,
                1.0 / p.test.alpha,
                p.test.identical_e_value,
                1.0 / p.test.identical_alpha
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_grows_by_half_at_least_start_and_stops_at_the_cap() {
        let mut size = START;
        let mut looks = vec![size];
        while size < 300 {
            size = next_size(size, 300);
            looks.push(size);
        }
        assert_eq!(looks, [30, 60, 90, 135, 202, 300]);
        assert_eq!(next_size(30, 40), 40, "never past the cap");
    }
}
