//! The result of running one candidate against its suite, and how it reads in a Score: a
//! pass/fail pattern (`extracted`, comparable between endpoints) and compact evidence.

use super::protocol::{LoadStage, TestVerdict};
use crate::score::Tests;

/// How one test ended, as the parent saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `P`: evaluated to `true`.
    Pass,
    /// `F`: evaluated to something else.
    Fail,
    /// `E`: threw, hit an engine limit, or the candidate did not load.
    Error,
    /// `T`: the worker was killed or died while on this test (time or memory limit, crash).
    Terminated,
    /// `-`: not run because the worker died on an earlier test.
    Skipped,
}

impl Status {
    pub fn letter(self) -> char {
        match self {
            Status::Pass => 'P',
            Status::Fail => 'F',
            Status::Error => 'E',
            Status::Terminated => 'T',
            Status::Skipped => '-',
        }
    }
}

impl From<TestVerdict> for Status {
    fn from(v: TestVerdict) -> Self {
        match v {
            TestVerdict::Pass => Status::Pass,
            TestVerdict::Fail => Status::Fail,
            TestVerdict::Error => Status::Error,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestResult {
    pub status: Status,
    pub detail: String,
}

/// Every test's result, in suite order (test `i` is named `t{i+1}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteOutcome {
    /// Set when the candidate never got to its tests (did not parse, did not load, does not
    /// define the function, or the worker died first); every test then carries the same status.
    pub not_loaded: Option<NotLoaded>,
    pub tests: Vec<TestResult>,
}

/// Why a candidate never got to its tests: where loading stopped, and the reason as the
/// evidence tells it (`did not parse: SyntaxError: …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotLoaded {
    pub stage: LoadStage,
    pub reason: String,
}

/// Failed tests listed in the evidence before the rest is summarised as "+N more".
const LISTED_FAILURES: usize = 6;
/// Characters of each failure reason kept in the evidence.
const REASON_CHARS: usize = 90;

impl SuiteOutcome {
    /// Every test ends the same way, for a single reason: loading stopped at `stage`.
    pub fn all(count: usize, status: Status, stage: LoadStage, reason: String) -> Self {
        SuiteOutcome {
            tests: (0..count)
                .map(|_| TestResult {
                    status,
                    detail: reason.clone(),
                })
                .collect(),
            not_loaded: Some(NotLoaded { stage, reason }),
        }
    }

    pub fn passed(&self) -> usize {
        self.tests
            .iter()
            .filter(|t| t.status == Status::Pass)
            .count()
    }

    pub fn all_passed(&self) -> bool {
        !self.tests.is_empty() && self.passed() == self.tests.len()
    }

    /// How many tests passed, of how many, and which did not.
    pub fn tally(&self) -> Tests {
        Tests {
            ran: self.not_loaded.is_none(),
            passed: self.passed(),
            total: self.tests.len(),
            failed: self
                .tests
                .iter()
                .enumerate()
                .filter(|(_, t)| t.status != Status::Pass)
                .map(|(i, _)| i + 1)
                .collect(),
        }
    }

    /// `5/6 PPFPPP`: what two endpoints are compared on.
    pub fn pattern(&self) -> String {
        let letters: String = self.tests.iter().map(|t| t.status.letter()).collect();
        format!("{}/{} {letters}", self.passed(), self.tests.len())
    }

    /// `5/6 tests passed; failed: t3 (expected true, got false)`, or, for a candidate that never
    /// got to its tests, `no test ran (0/6 passed); did not parse: SyntaxError: …`.
    pub fn evidence(&self) -> String {
        if let Some(n) = &self.not_loaded {
            return format!(
                "no test ran (0/{} passed); {}",
                self.tests.len(),
                crate::text::clip(&n.reason, REASON_CHARS * 2)
            );
        }
        let head = format!("{}/{} tests passed", self.passed(), self.tests.len());
        let failed: Vec<String> = self
            .tests
            .iter()
            .enumerate()
            .filter(|(_, t)| t.status != Status::Pass)
            .map(|(i, t)| {
                format!(
                    "t{} ({})",
                    i + 1,
                    crate::text::clip(&t.detail, REASON_CHARS)
                )
            })
            .collect();
        if failed.is_empty() {
            return head;
        }
        let mut listed = failed[..failed.len().min(LISTED_FAILURES)].join(", ");
        if failed.len() > LISTED_FAILURES {
            listed.push_str(&format!(", +{} more", failed.len() - LISTED_FAILURES));
        }
        format!("{head}; failed: {listed}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(status: Status, detail: &str) -> TestResult {
        TestResult {
            status,
            detail: detail.into(),
        }
    }

    #[test]
    fn pattern_and_evidence_name_each_failure() {
        let o = SuiteOutcome {
            not_loaded: None,
            tests: vec![
                result(Status::Pass, ""),
                result(Status::Pass, ""),
                result(Status::Fail, "expected true, got false"),
                result(Status::Terminated, "timed out after 4 s"),
                result(Status::Skipped, "not run: the worker stopped at t4"),
            ],
        };
        assert_eq!(o.pattern(), "2/5 PPFT-");
        assert_eq!(
            o.tally(),
            Tests {
                ran: true,
                passed: 2,
                total: 5,
                failed: vec![3, 4, 5]
            }
        );
        assert_eq!(
            o.evidence(),
            "2/5 tests passed; failed: t3 (expected true, got false), t4 (timed out after 4 s), t5 (not run: the worker stopped at t4)"
        );
        assert!(!o.all_passed());
    }

    #[test]
    fn a_candidate_that_never_loaded_has_one_reason() {
        let o = SuiteOutcome::all(
            3,
            Status::Error,
            LoadStage::Parse,
            "did not parse: SyntaxError: unexpected token".into(),
        );
        assert_eq!(o.pattern(), "0/3 EEE");
        assert_eq!(
            o.evidence(),
            "no test ran (0/3 passed); did not parse: SyntaxError: unexpected token"
        );
        assert!(!o.tally().ran);
        let ok = SuiteOutcome {
            not_loaded: None,
            tests: vec![result(Status::Pass, "")],
        };
        assert!(ok.all_passed());
        assert_eq!(ok.evidence(), "1/1 tests passed");
    }
}
