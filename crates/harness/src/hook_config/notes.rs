//! What the user must know about a harness beyond the file roster edits:
//! whether it runs the hooks at all before it is told to trust them, when
//! it loads a plugin, what it does besides. Facts about the harnesses, like
//! their files and events; `roster-hooks print` and `install` show them.

use super::files::CODEX_TRUST_HINT;
use super::types::{HookConfigFile, HookHarness, Scope};

/// What the user must know about `harness` beyond the file roster edits.
pub fn harness_notes(harness: HookHarness) -> Vec<String> {
    let note = match harness {
        HookHarness::Codex => format!(
            "Codex runs a hook only once you trust it: {CODEX_TRUST_HINT}; `roster-hooks status codex` tells \
             whether it does (roster-hooks cannot compute Codex's trust hash, so it never writes trust entries)"
        ),
        HookHarness::Copilot => {
            "Copilot CLI runs the hooks in .github/hooks only in a folder you trust: accept \
                                 the trust prompt when copilot starts in this project, or start it with \
                                 --trust-folder"
                .to_owned()
        }
        HookHarness::CursorAgent => {
            "Cursor's agent also runs Claude Code's hooks: with roster's claude-code \
                                     hooks installed as well, a Cursor session is registered by both (one \
                                     owner, one record; the later call names the harness)"
                .to_owned()
        }
        HookHarness::Opencode => "opencode loads the plugin when it starts: it registers each session on \
                                  session.created with the opencode process as owner, passes its status, \
                                  permission and question events on to roster-state, and removes the record \
                                  on session.deleted and when opencode exits"
            .to_owned(),
        HookHarness::Amp => {
            "Amp loads the plugin when it starts (or on `plugins: reload`): it registers each \
                             thread session on session.start with the amp process as owner and passes \
                             agent.start, tool.result and agent.end on to roster-state; Amp has no \
                             session-end event, so the record turns dead when amp exits and roster-prune \
                             removes it"
                .to_owned()
        }
        HookHarness::ClaudeCode | HookHarness::GeminiCli => return Vec::new(),
    };
    vec![note]
}

/// What the user must know once roster's hooks are installed in `target`:
/// the harness's notes, and that a project's file is meant to be committed.
pub fn install_notes(target: &HookConfigFile) -> Vec<String> {
    let mut notes = harness_notes(target.harness);
    if target.scope == Scope::Project {
        notes.push(
            "the project file is meant to be committed: everyone who works here gets the hooks".to_owned(),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn harnesses_that_need_more_than_the_file_say_so_once() {
        for harness in HookHarness::ALL {
            let expected = usize::from(!matches!(harness, HookHarness::ClaudeCode | HookHarness::GeminiCli));
            assert_eq!(harness_notes(harness).len(), expected, "{harness}");
        }
        assert!(harness_notes(HookHarness::Codex)[0].contains(CODEX_TRUST_HINT));
    }

    #[test]
    fn only_an_install_into_a_project_says_the_file_is_to_be_committed() {
        let target =
            |scope| HookConfigFile { harness: HookHarness::Codex, scope, path: PathBuf::from("hooks.json") };
        let user = install_notes(&target(Scope::User));
        assert_eq!(user, harness_notes(HookHarness::Codex));
        let project = install_notes(&target(Scope::Project));
        assert_eq!(project[..1], user[..]);
        assert_eq!(
            project[1..],
            ["the project file is meant to be committed: everyone who works here gets the hooks"]
        );
    }
}
