//! Which of the values given for a registration it takes (docs/contract.md
//! §6.1), most explicit first: a flag, then the hook payload, then roster's
//! own variables, then what the harness exports or the repository's file
//! says; and what becomes of a value the record cannot hold (§3.1): given
//! by hand it is refused, so the caller can fix it; in hook mode it is
//! dropped as if it had not been given, and said, so that the session is
//! still registered. The binary reads the flags, the payload and the
//! environment and words what was dropped; the rules are here.

use crate::error::{Error, Result};
use crate::record::malformed::{FieldError, FieldLimit};
use crate::record::values::{
    AGENT_NAME_LIMIT, AgentName, HARNESS_VERSION_LIMIT, SESSION_ID_LIMIT, SessionId, TRANSCRIPT_PATH_LIMIT,
};

/// What a registration says about the agent name. A refresh (same owner)
/// keeps the name recorded earlier unless one is given by hand: a new
/// session id after `/clear` must not drop the name the user gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentChoice {
    /// A name given by hand (`--agent NAME`, `ROSTER_AGENT`): replaces any
    /// recorded one.
    Set(AgentName),
    /// Anonymous asked for by hand (`--agent ""`): clears any recorded name.
    Clear,
    /// No name given by hand: a refresh keeps the recorded name (or its
    /// absence); a new owner gets `default` (the repository file's
    /// `agent_name`, or anonymous).
    Keep { default: Option<AgentName> },
}

/// What a registration does with the values it cannot use, and the ones
/// it dropped, in the order it met them.
#[derive(Debug)]
pub struct UnusableValues {
    /// Refuse (by hand) rather than drop (in hook mode).
    refuse: bool,
    dropped: Vec<DroppedValue>,
}

/// A value a registration dropped, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DroppedValue {
    /// Longer than its field's limit. `origin` names where it came from:
    /// `--agent`, `ROSTER_SESSION_ID`, `the hook payload's version`.
    TooLong { origin: &'static str, why: FieldError },
    /// Within its limit, but not a value its field may hold (a session id
    /// with a `/`).
    Invalid { origin: &'static str, why: FieldError },
    /// A value the caller found unusable itself (a path that is not UTF-8,
    /// a directory that cannot be resolved), in the caller's words.
    AsSaid(String),
}

impl UnusableValues {
    /// Given by hand: a value that cannot be used is refused (exit 2),
    /// naming where it came from.
    pub fn refusing() -> UnusableValues {
        UnusableValues { refuse: true, dropped: Vec::new() }
    }

    /// In hook mode: a value that cannot be used is dropped as if it had
    /// not been given, and said in `dropped`.
    pub fn dropping() -> UnusableValues {
        UnusableValues { refuse: false, dropped: Vec::new() }
    }

    /// Whether a value that cannot be used is refused rather than dropped.
    pub fn refuses(&self) -> bool {
        self.refuse
    }

    /// The values dropped so far, in the order they were met.
    pub fn dropped(&self) -> &[DroppedValue] {
        &self.dropped
    }

    /// `true` when `text` fits `limit`; `false` when it was dropped.
    pub fn fits(&mut self, limit: FieldLimit, origin: &'static str, text: &str) -> Result<bool> {
        let Err(why) = limit.check(text) else { return Ok(true) };
        if self.refuse {
            return Err(Error::BadInput(format!("{origin}: {why}; give a shorter value")));
        }
        self.dropped.push(DroppedValue::TooLong { origin, why });
        Ok(false)
    }

    /// A value the caller found unusable, described by `message`: dropped
    /// and said. Where such a value is refused instead (`refuses`), the
    /// caller returns its own error.
    pub fn drop_as_said(&mut self, message: String) {
        self.dropped.push(DroppedValue::AsSaid(message));
    }

    /// `value` when it fits `limit`; `None` when it was dropped.
    fn admit_text(
        &mut self,
        limit: FieldLimit,
        origin: &'static str,
        value: String,
    ) -> Result<Option<String>> {
        Ok(self.fits(limit, origin, &value)?.then_some(value))
    }

    /// A value within its limit that its field cannot hold: refused, or
    /// dropped and said.
    fn invalid(&mut self, origin: &'static str, why: FieldError) -> Result<()> {
        if self.refuse {
            return Err(Error::BadInput(format!("{origin}: {why}")));
        }
        self.dropped.push(DroppedValue::Invalid { origin, why });
        Ok(())
    }
}

/// `--agent` (`flag`) > `ROSTER_AGENT` (`variable`, unset when empty) >
/// `agent_name` in the nearest `.roster.toml` (`repository_default`) >
/// anonymous. `--agent ""` asks for anonymous explicitly.
///
/// The flag and the variable are given by hand and replace a recorded name
/// on a refresh; the repository file only names a session when it is first
/// registered, and is read only when neither is given. Each value given by
/// hand is held to the name's limit, the flag's and the variable's alike;
/// one dropped for its length leaves the next source to decide. An invalid
/// name given by hand is refused even in hook mode. A repository file that
/// cannot be used (`Err(warning)`) only warns: the session registers
/// without its name, and the warning comes back for the caller to say.
pub fn choose_agent<Warning>(
    flag: Option<&str>,
    variable: Option<String>,
    unusable: &mut UnusableValues,
    repository_default: impl FnOnce() -> std::result::Result<Option<AgentName>, Warning>,
) -> Result<(AgentChoice, Option<Warning>)> {
    let flag = match flag {
        Some(value) => unusable.admit_text(AGENT_NAME_LIMIT, "--agent", value.to_owned())?,
        None => None,
    };
    let variable = match variable {
        Some(value) => unusable.admit_text(AGENT_NAME_LIMIT, "ROSTER_AGENT", value)?,
        None => None,
    };
    let (value, origin) = match (flag, variable) {
        (Some(value), _) if value.is_empty() => return Ok((AgentChoice::Clear, None)),
        (Some(value), _) => (value, "--agent"),
        (None, Some(value)) => (value, "ROSTER_AGENT"),
        (None, None) => {
            return Ok(match repository_default() {
                Ok(default) => (AgentChoice::Keep { default }, None),
                Err(warning) => (AgentChoice::Keep { default: None }, Some(warning)),
            });
        }
    };
    let name = AgentName::parse(&value).map_err(|why| Error::BadInput(format!("{origin}: {why}")))?;
    Ok((AgentChoice::Set(name), None))
}

/// `--session-id` (`flag`) > the hook payload's (`in_payload`) >
/// `ROSTER_SESSION_ID` (`variable`) > the harness's own export
/// (`harness_export`: the variable and its value). The first source given
/// decides, even with a value that cannot be used: an over-long or invalid
/// id dropped in hook mode leaves the session without one, since taking a
/// lower source instead could take another session's id.
pub fn choose_session_id(
    flag: Option<&str>,
    in_payload: Option<String>,
    variable: Option<String>,
    harness_export: Option<(&'static str, String)>,
    unusable: &mut UnusableValues,
) -> Result<Option<SessionId>> {
    let (value, origin) = if let Some(value) = flag {
        (value.to_owned(), "--session-id")
    } else if let Some(value) = in_payload {
        (value, "the hook payload's session id")
    } else if let Some(value) = variable {
        (value, "ROSTER_SESSION_ID")
    } else if let Some((variable, value)) = harness_export {
        (value, variable)
    } else {
        return Ok(None);
    };
    let Some(value) = unusable.admit_text(SESSION_ID_LIMIT, origin, value)? else { return Ok(None) };
    match SessionId::parse(&value) {
        Ok(id) => Ok(Some(id)),
        Err(why) => {
            unusable.invalid(origin, why)?;
            Ok(None)
        }
    }
}

/// The hook payload's version (`in_payload`) > what the harness's
/// environment tells (`exported`, asked only when needed). A payload's
/// version dropped for its length leaves the environment to tell it.
pub fn choose_harness_version(
    in_payload: Option<String>,
    exported: impl FnOnce() -> Option<String>,
    unusable: &mut UnusableValues,
) -> Result<Option<String>> {
    let from_payload = match in_payload {
        Some(version) => unusable.admit_text(HARNESS_VERSION_LIMIT, "the hook payload's version", version)?,
        None => None,
    };
    Ok(from_payload.or_else(exported))
}

/// The hook payload's transcript path, the one source of it.
pub fn choose_transcript_path(
    in_payload: Option<String>,
    unusable: &mut UnusableValues,
) -> Result<Option<String>> {
    match in_payload {
        Some(path) => unusable.admit_text(TRANSCRIPT_PATH_LIMIT, "the hook payload's transcript_path", path),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Agent names given by hand, for a registration in `unusable`'s mode,
    /// with `repository` as the repository file's answer; panics if the
    /// file is read when a name was given by hand.
    fn agent(
        flag: Option<&str>,
        variable: Option<&str>,
        repository: std::result::Result<Option<&str>, &'static str>,
        unusable: &mut UnusableValues,
    ) -> Result<(AgentChoice, Option<&'static str>)> {
        let read = std::cell::Cell::new(false);
        let chosen = choose_agent(flag, variable.map(str::to_owned), unusable, || {
            read.set(true);
            repository.map(|name| name.map(|name| AgentName::parse(name).unwrap()))
        });
        if read.get() {
            let given_by_hand = matches!(&chosen, Ok((AgentChoice::Set(_) | AgentChoice::Clear, _)));
            assert!(!given_by_hand, "the repository file was read though a name was given by hand");
        }
        chosen
    }

    fn set(name: &str) -> AgentChoice {
        AgentChoice::Set(AgentName::parse(name).unwrap())
    }

    fn keep(default: Option<&str>) -> AgentChoice {
        AgentChoice::Keep { default: default.map(|name| AgentName::parse(name).unwrap()) }
    }

    fn refused(result: Result<impl std::fmt::Debug>) -> String {
        match result {
            Err(Error::BadInput(message)) => message,
            other => panic!("expected bad input, got {other:?}"),
        }
    }

    #[test]
    fn the_agent_flag_beats_the_variable_which_beats_the_repository_file() {
        let by_hand = &mut UnusableValues::refusing();
        assert_eq!(agent(Some("wren"), Some("owl"), Ok(Some("kite")), by_hand).unwrap(), (set("wren"), None));
        assert_eq!(agent(None, Some("owl"), Ok(Some("kite")), by_hand).unwrap(), (set("owl"), None));
        assert_eq!(agent(None, None, Ok(Some("kite")), by_hand).unwrap(), (keep(Some("kite")), None));
        assert_eq!(agent(None, None, Ok(None), by_hand).unwrap(), (keep(None), None));
        assert!(by_hand.dropped().is_empty());
    }

    #[test]
    fn an_empty_agent_flag_asks_for_anonymous_over_every_other_source() {
        let by_hand = &mut UnusableValues::refusing();
        assert_eq!(
            agent(Some(""), Some("owl"), Ok(Some("kite")), by_hand).unwrap(),
            (AgentChoice::Clear, None)
        );
        let in_hook = &mut UnusableValues::dropping();
        assert_eq!(agent(Some(""), None, Ok(Some("kite")), in_hook).unwrap(), (AgentChoice::Clear, None));
    }

    #[test]
    fn an_unusable_repository_file_warns_and_registers_without_a_name() {
        let by_hand = &mut UnusableValues::refusing();
        let chosen = agent(None, None, Err("invalid TOML"), by_hand).unwrap();
        assert_eq!(chosen, (keep(None), Some("invalid TOML")));
        // Only read when nothing was given by hand.
        assert_eq!(agent(None, Some("owl"), Err("invalid TOML"), by_hand).unwrap(), (set("owl"), None));
    }

    #[test]
    fn an_over_long_agent_name_is_refused_by_hand_and_dropped_in_a_hook_for_the_next_source() {
        let long = "a".repeat(65);
        let message = refused(agent(Some(&long), None, Ok(None), &mut UnusableValues::refusing()));
        assert_eq!(
            message,
            "--agent: agent is 65 characters long, over its limit of 64 characters; give a shorter value"
        );
        // The variable is held to the limit even where the flag decides.
        let message = refused(agent(Some("wren"), Some(&long), Ok(None), &mut UnusableValues::refusing()));
        assert!(message.starts_with("ROSTER_AGENT: agent is 65 characters long"), "{message}");

        let in_hook = &mut UnusableValues::dropping();
        assert_eq!(agent(Some(&long), Some("owl"), Ok(Some("kite")), in_hook).unwrap(), (set("owl"), None));
        assert_eq!(
            agent(Some(&long), Some(&long), Ok(Some("kite")), in_hook).unwrap(),
            (keep(Some("kite")), None)
        );
        let origins: Vec<&str> = in_hook
            .dropped()
            .iter()
            .map(|dropped| match dropped {
                DroppedValue::TooLong { origin, .. } => *origin,
                other => panic!("dropped for its length, not {other:?}"),
            })
            .collect();
        assert_eq!(origins, ["--agent", "--agent", "ROSTER_AGENT"]);
    }

    #[test]
    fn an_invalid_agent_name_is_refused_even_in_a_hook() {
        let message = refused(agent(Some(" wren"), None, Ok(None), &mut UnusableValues::dropping()));
        assert_eq!(message, "--agent: agent name \" wren\" starts or ends with white space");
        let message = refused(agent(None, Some("owl\u{7}"), Ok(None), &mut UnusableValues::refusing()));
        assert_eq!(message, "ROSTER_AGENT: agent name \"owl\\u{7}\" contains a control character");
    }

    fn session_id(
        flag: Option<&str>,
        in_payload: Option<&str>,
        variable: Option<&str>,
        harness_export: Option<&str>,
        unusable: &mut UnusableValues,
    ) -> Result<Option<String>> {
        let chosen = choose_session_id(
            flag,
            in_payload.map(str::to_owned),
            variable.map(str::to_owned),
            harness_export.map(|value| ("CODEX_THREAD_ID", value.to_owned())),
            unusable,
        );
        chosen.map(|id| id.map(|id| id.as_str().to_owned()))
    }

    #[test]
    fn the_session_id_flag_beats_the_payload_the_variable_and_the_harness_export() {
        let by_hand = &mut UnusableValues::refusing();
        let every_source =
            session_id(Some("flag"), Some("payload"), Some("variable"), Some("export"), by_hand);
        assert_eq!(every_source.unwrap().as_deref(), Some("flag"));
        let without_flag = session_id(None, Some("payload"), Some("variable"), Some("export"), by_hand);
        assert_eq!(without_flag.unwrap().as_deref(), Some("payload"));
        assert_eq!(
            session_id(None, None, Some("variable"), Some("export"), by_hand).unwrap().as_deref(),
            Some("variable")
        );
        assert_eq!(session_id(None, None, None, Some("export"), by_hand).unwrap().as_deref(), Some("export"));
        assert_eq!(session_id(None, None, None, None, by_hand).unwrap(), None);
    }

    #[test]
    fn an_unusable_session_id_is_refused_by_hand_naming_its_source() {
        let by_hand = &mut UnusableValues::refusing();
        let long = "s".repeat(129);
        assert_eq!(
            refused(session_id(None, None, None, Some(&long), by_hand)),
            "CODEX_THREAD_ID: session id is 129 bytes long, over its limit of 128 bytes; give a shorter value"
        );
        assert_eq!(
            refused(session_id(Some("a/b"), None, None, None, by_hand)),
            "--session-id: session id \"a/b\" contains '/'; only printable ASCII without '/' is allowed"
        );
        assert_eq!(
            refused(session_id(Some(""), Some("payload"), None, None, by_hand)),
            "--session-id: session id is empty; it must be 1 to 128 characters long"
        );
    }

    /// A dropped id is not replaced by a lower source's: that could be
    /// another session's id.
    #[test]
    fn an_unusable_session_id_in_a_hook_leaves_the_session_without_one() {
        let in_hook = &mut UnusableValues::dropping();
        let long = "s".repeat(129);
        assert_eq!(session_id(None, Some(&long), Some("variable"), None, in_hook).unwrap(), None);
        assert_eq!(session_id(None, Some("a/b"), Some("variable"), None, in_hook).unwrap(), None);
        // An empty id in the payload is one given, and not a valid one.
        assert_eq!(session_id(None, Some(""), Some("variable"), None, in_hook).unwrap(), None);
        let dropped: Vec<String> = in_hook
            .dropped()
            .iter()
            .map(|dropped| match dropped {
                DroppedValue::TooLong { origin, why } => format!("too long: {origin}: {why}"),
                DroppedValue::Invalid { origin, why } => format!("invalid: {origin}: {why}"),
                DroppedValue::AsSaid(message) => message.clone(),
            })
            .collect();
        assert_eq!(
            dropped,
            [
                "too long: the hook payload's session id: session id is 129 bytes long, over its limit of 128 bytes",
                "invalid: the hook payload's session id: session id \"a/b\" contains '/'; only printable ASCII \
                 without '/' is allowed",
                "invalid: the hook payload's session id: session id is empty; it must be 1 to 128 characters long",
            ]
        );
    }

    #[test]
    fn the_payloads_harness_version_beats_the_environments_unless_dropped() {
        let by_hand = &mut UnusableValues::refusing();
        let exported = || Some("2.1.328".to_owned());
        let chosen = choose_harness_version(Some("2.2.0".to_owned()), exported, by_hand).unwrap();
        assert_eq!(chosen.as_deref(), Some("2.2.0"));
        assert_eq!(choose_harness_version(None, exported, by_hand).unwrap().as_deref(), Some("2.1.328"));

        let long = "1".repeat(129);
        let in_hook = &mut UnusableValues::dropping();
        let chosen = choose_harness_version(Some(long.clone()), exported, in_hook).unwrap();
        assert_eq!(chosen.as_deref(), Some("2.1.328"));
        assert_eq!(in_hook.dropped().len(), 1);
        let message = refused(choose_harness_version(Some(long), exported, by_hand));
        assert!(
            message.starts_with("the hook payload's version: harness version is 129 bytes long"),
            "{message}"
        );
    }

    #[test]
    fn an_over_long_transcript_path_is_refused_by_hand_and_dropped_in_a_hook() {
        let path = format!("/{}", "t".repeat(4096));
        let in_hook = &mut UnusableValues::dropping();
        assert_eq!(choose_transcript_path(Some(path.clone()), in_hook).unwrap(), None);
        assert!(matches!(
            in_hook.dropped(),
            [DroppedValue::TooLong { origin: "the hook payload's transcript_path", .. }]
        ));
        let by_hand = &mut UnusableValues::refusing();
        assert!(refused(choose_transcript_path(Some(path), by_hand)).ends_with("; give a shorter value"));
        let fits = choose_transcript_path(Some("/t.jsonl".to_owned()), by_hand).unwrap();
        assert_eq!(fits.as_deref(), Some("/t.jsonl"));
    }

    #[test]
    fn values_the_caller_dropped_itself_keep_their_place() {
        let in_hook = &mut UnusableValues::dropping();
        in_hook.drop_as_said("the hook payload's cwd is not valid UTF-8".to_owned());
        assert!(!in_hook.fits(AGENT_NAME_LIMIT, "--agent", &"a".repeat(65)).unwrap());
        assert!(matches!(
            in_hook.dropped(),
            [DroppedValue::AsSaid(_), DroppedValue::TooLong { origin: "--agent", .. }]
        ));
        assert!(!in_hook.refuses());
        assert!(UnusableValues::refusing().refuses());
    }
}
