//! The auto-arm resolution (docs/contract.md §7) as a complete table: every outcome of
//! the repository file against every outcome of the user file, written out
//! cell by cell so the rules are read here, not recomputed.

use consent::{ConfigOutcome, resolve_auto_arm};

fn outcomes() -> [(&'static str, ConfigOutcome); 7] {
    [
        ("absent", ConfigOutcome::Absent),
        ("unset", ConfigOutcome::AutoArmUnset),
        ("false", ConfigOutcome::AutoArm(false)),
        ("true", ConfigOutcome::AutoArm(true)),
        ("unreadable", ConfigOutcome::Unreadable("is a directory, not a regular file".into())),
        ("unparseable", ConfigOutcome::Unparseable("line 2, column 12: invalid boolean".into())),
        ("unknown-key", ConfigOutcome::UnknownKey("consent.auto_armed".into())),
    ]
}

/// Rows: the repository file; columns: the user file, in `outcomes()`
/// order. Only a repository `true` enables, and only while the user file
/// neither vetoes (`false`) nor fails (unreadable, unparseable, unknown
/// key: a veto, fail closed).
const EXPECTED_AUTO_ARM: [[bool; 7]; 7] = [
    //  user: absent unset  false  true   unread unpars unknown
    /* repo absent      */
    [false, false, false, false, false, false, false],
    /* repo unset       */ [false, false, false, false, false, false, false],
    /* repo false       */ [false, false, false, false, false, false, false],
    /* repo true        */ [true, true, false, true, false, false, false],
    /* repo unreadable  */ [false, false, false, false, false, false, false],
    /* repo unparseable */ [false, false, false, false, false, false, false],
    /* repo unknown key */ [false, false, false, false, false, false, false],
];

fn is_failure(outcome: &ConfigOutcome) -> bool {
    matches!(
        outcome,
        ConfigOutcome::Unreadable(_) | ConfigOutcome::Unparseable(_) | ConfigOutcome::UnknownKey(_)
    )
}

#[test]
fn every_pair_of_outcomes() {
    for (row, (repo_name, repo)) in outcomes().iter().enumerate() {
        for (column, (user_name, user)) in outcomes().iter().enumerate() {
            let decision = resolve_auto_arm(repo, user);
            let case = format!("repo {repo_name}, user {user_name}: {decision:?}");
            assert_eq!(decision.auto_arm, EXPECTED_AUTO_ARM[row][column], "{case}");

            // A warning for each file that needs fixing, and only then.
            let expected_warnings = usize::from(is_failure(repo)) + usize::from(is_failure(user));
            assert_eq!(decision.warnings.len(), expected_warnings, "{case}");
            if is_failure(repo) {
                assert!(decision.warnings[0].contains(".roster.toml"), "{case}");
            }
            if is_failure(user) {
                assert!(decision.warnings.last().unwrap().contains("user config"), "{case}");
                assert!(decision.warnings.last().unwrap().contains("vetoes"), "{case}");
            }

            // The reasons say what each file said, and the conclusion last.
            assert_eq!(decision.reasons.len(), 3, "{case}");
            let conclusion = decision.reasons.last().unwrap();
            assert!(
                conclusion.starts_with(if decision.auto_arm { "auto-arm is on" } else { "auto-arm is off" }),
                "{case}"
            );
            if let Some(error) = repo.error() {
                assert!(decision.reasons[0].contains(&error), "{case}");
            }
            if let Some(error) = user.error() {
                assert!(decision.reasons[1].contains(&error), "{case}");
                assert!(decision.reasons[1].contains("veto"), "{case}");
            }
        }
    }
}

#[test]
fn a_veto_beating_the_repository_is_said_so() {
    let decision = resolve_auto_arm(&ConfigOutcome::AutoArm(true), &ConfigOutcome::AutoArm(false));
    assert_eq!(decision.reasons.last().unwrap(), "auto-arm is off: the user's veto beats the repository");
    assert!(decision.reasons[1].contains("veto"), "{decision:?}");
}

#[test]
fn a_user_true_is_said_to_enable_nothing() {
    let decision = resolve_auto_arm(&ConfigOutcome::Absent, &ConfigOutcome::AutoArm(true));
    assert!(!decision.auto_arm);
    assert!(decision.reasons[1].contains("enables nothing"), "{decision:?}");
}

#[test]
fn unknown_keys_are_named() {
    // An unknown key's outcome carries the whole message, as the parser made it.
    let unknown = |key: &str| {
        ConfigOutcome::UnknownKey(
            consent::ConfigProblem::UnknownKey { key: key.into(), line: Some(1) }.to_string(),
        )
    };
    let decision = resolve_auto_arm(&unknown("agnet_name"), &ConfigOutcome::Absent);
    assert!(decision.warnings[0].contains("`agnet_name`"), "{decision:?}");
    let decision = resolve_auto_arm(&ConfigOutcome::AutoArm(true), &unknown("consent.auto"));
    assert!(decision.warnings[0].contains("`consent.auto`"), "{decision:?}");
}
