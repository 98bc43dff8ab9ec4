//! How each harness resumes one of its sessions (docs/harnesses.md,
//! docs/contract.md §6.2.1): the one table of resume commands. Per harness, the
//! argv that resumes a session by its id when run in the session's
//! directory, and the argv that continues the latest session of that
//! directory, for a session whose id roster never learnt; none where the
//! harness has no such command. `roster-list --ended` shows what this table
//! says and `roster-resume` runs it. Each row says which release's own
//! `--help` it was checked against (captured under
//! `tests/data/harness-captures/resume-help/`, and a test holds the table
//! to the captures), or that it is unchecked and what it is based on.

use crate::detect::Harness;

/// The word of a by-id form that stands for the session id.
pub const SESSION_ID_PLACEHOLDER: &str = "{session_id}";

/// One harness's resume commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResumeCommands {
    pub harness: Harness,
    /// The program, looked up on `PATH`.
    pub program: &'static str,
    /// The arguments that resume a session by id, [`SESSION_ID_PLACEHOLDER`]
    /// standing for it (alone or within a word: `--resume={session_id}`).
    pub by_id: Option<&'static [&'static str]>,
    /// The arguments that continue the latest session of the current
    /// directory.
    pub latest: Option<&'static [&'static str]>,
    /// What the row was checked against: the harness's release whose own
    /// help (captured) names these flags and subcommands.
    pub checked: Checked,
}

/// Where a row of the table comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Checked against this release's own `--help`, captured in
    /// `tests/data/harness-captures/resume-help/<harness>-<version>/`.
    AgainstRelease(&'static str),
    /// Not checked: no release is pinned here; the row follows this source.
    Unchecked(&'static str),
}

/// Every harness's resume commands, in [`Harness::ALL`] order.
pub const RESUME_COMMANDS: [ResumeCommands; 9] = [
    ResumeCommands {
        harness: Harness::ClaudeCode,
        program: "claude",
        by_id: Some(&["--resume", SESSION_ID_PLACEHOLDER]),
        latest: Some(&["--continue"]),
        checked: Checked::AgainstRelease("2.1.332"),
    },
    ResumeCommands {
        harness: Harness::Codex,
        program: "codex",
        by_id: Some(&["resume", SESSION_ID_PLACEHOLDER]),
        latest: Some(&["resume", "--last"]),
        checked: Checked::AgainstRelease("0.171.0"),
    },
    ResumeCommands {
        harness: Harness::GeminiCli,
        program: "gemini",
        // Its help names "latest" and an index; the release resolves a
        // session's UUID too (its error message says `--resume {uuid}`).
        by_id: Some(&["--resume", SESSION_ID_PLACEHOLDER]),
        latest: Some(&["--resume", "latest"]),
        checked: Checked::AgainstRelease("0.61.0"),
    },
    ResumeCommands {
        harness: Harness::CursorAgent,
        program: "cursor-agent",
        by_id: Some(&["--resume", SESSION_ID_PLACEHOLDER]),
        latest: Some(&["resume"]),
        checked: Checked::Unchecked(
            "Cursor's CLI documentation (`cursor-agent --resume [chatId]`, `cursor-agent resume`); \
             Cursor's agent is not on npm and no release is pinned here",
        ),
    },
    ResumeCommands {
        harness: Harness::Copilot,
        program: "copilot",
        by_id: Some(&["--resume={session_id}"]),
        latest: Some(&["--continue"]),
        checked: Checked::AgainstRelease("1.0.102"),
    },
    ResumeCommands {
        harness: Harness::Goose,
        program: "goose",
        by_id: Some(&["session", "--resume", "--session-id", SESSION_ID_PLACEHOLDER]),
        latest: Some(&["session", "--resume"]),
        checked: Checked::Unchecked(
            "Goose's CLI documentation (`goose session --resume --session-id ID`); \
             Goose is not on npm and no release is pinned here",
        ),
    },
    ResumeCommands {
        harness: Harness::Opencode,
        program: "opencode",
        by_id: Some(&["--session", SESSION_ID_PLACEHOLDER]),
        latest: Some(&["--continue"]),
        checked: Checked::AgainstRelease("1.18.33"),
    },
    ResumeCommands {
        harness: Harness::Aider,
        program: "aider",
        by_id: None,
        latest: None,
        checked: Checked::Unchecked(
            "Aider has no sessions to resume: `--restore-chat-history` replays a chat history file, \
             it does not pick up a session",
        ),
    },
    ResumeCommands {
        harness: Harness::Amp,
        program: "amp",
        by_id: Some(&["threads", "continue", SESSION_ID_PLACEHOLDER]),
        latest: Some(&["threads", "continue", "--last"]),
        checked: Checked::AgainstRelease("0.0.1790142911-g7618fb"),
    },
];

/// What resumes a session, or why nothing can.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Run `argv` in the session's directory.
    Command { argv: Vec<String>, form: ResumeForm },
    /// Nothing resumes it; the reason says why, for people.
    Unavailable(String),
}

/// Which of a harness's two forms a resume command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResumeForm {
    /// Resumes the session by its id.
    ById,
    /// Continues the latest session of the directory (the session's id was
    /// never known).
    Latest,
}

impl ResumeForm {
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeForm::ById => "by-id",
            ResumeForm::Latest => "latest",
        }
    }
}

/// The resume commands of `harness`.
pub fn resume_commands(harness: Harness) -> &'static ResumeCommands {
    RESUME_COMMANDS
        .iter()
        .find(|row| row.harness == harness)
        .expect("RESUME_COMMANDS has a row for every harness")
}

/// What resumes a session of `harness` whose id is `session_id`: the by-id
/// form with the id put in; without an id, the latest-in-this-directory
/// form. An id starting with `-` is never put in an argv, where the harness
/// would read it as a flag.
pub fn resume(harness: Harness, session_id: Option<&str>) -> Resume {
    let row = resume_commands(harness);
    let name = harness.display_name();
    let with_program = |words: &[&str], id: &str| -> Vec<String> {
        std::iter::once(row.program.to_owned())
            .chain(words.iter().map(|word| word.replace(SESSION_ID_PLACEHOLDER, id)))
            .collect()
    };
    match (session_id, row.by_id, row.latest) {
        (Some(id), _, _) if id.starts_with('-') => Resume::Unavailable(format!(
            "its session id {id:?} starts with '-', which {name} would read as a flag"
        )),
        (Some(id), Some(by_id), _) => {
            Resume::Command { argv: with_program(by_id, id), form: ResumeForm::ById }
        }
        (Some(_), None, _) => Resume::Unavailable(format!("{name} has no command that resumes a session")),
        (None, _, Some(latest)) => {
            Resume::Command { argv: with_program(latest, ""), form: ResumeForm::Latest }
        }
        (None, Some(_), None) => Resume::Unavailable(format!(
            "no session id was recorded, and {name} cannot continue the latest session of a directory"
        )),
        (None, None, None) => Resume::Unavailable(format!("{name} has no command that resumes a session")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_row_per_harness_in_order() {
        let harnesses: Vec<Harness> = RESUME_COMMANDS.iter().map(|row| row.harness).collect();
        assert_eq!(harnesses, Harness::ALL.to_vec());
        for row in RESUME_COMMANDS {
            if let Some(by_id) = row.by_id {
                assert_eq!(
                    by_id.iter().filter(|word| word.contains(SESSION_ID_PLACEHOLDER)).count(),
                    1,
                    "{}'s by-id form names the id once",
                    row.program
                );
            }
            if let Some(latest) = row.latest {
                assert!(!latest.iter().any(|word| word.contains(SESSION_ID_PLACEHOLDER)));
            }
        }
    }

    #[test]
    fn an_id_is_put_in_its_place_and_a_missing_one_continues_the_latest() {
        let id = "7c660e54-2e19-4577-b46a-16f46484eaf4";
        let argv = |harness, id| match resume(harness, id) {
            Resume::Command { argv, .. } => argv.join(" "),
            Resume::Unavailable(why) => format!("none: {why}"),
        };
        assert_eq!(argv(Harness::ClaudeCode, Some(id)), format!("claude --resume {id}"));
        assert_eq!(argv(Harness::Copilot, Some(id)), format!("copilot --resume={id}"));
        assert_eq!(argv(Harness::Codex, None), "codex resume --last");
        assert!(argv(Harness::Aider, Some(id)).starts_with("none: Aider has no command"));
        assert!(argv(Harness::Aider, None).starts_with("none: Aider has no command"));
        assert!(argv(Harness::ClaudeCode, Some("--dangerously-skip-permissions")).starts_with("none: "));
        assert_eq!(
            resume(Harness::Opencode, None),
            Resume::Command {
                argv: vec!["opencode".to_owned(), "--continue".to_owned()],
                form: ResumeForm::Latest
            }
        );
    }
}
