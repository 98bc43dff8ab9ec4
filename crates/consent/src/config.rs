//! The consent configuration (docs/contract.md §7) as pure functions: strict parsing of
//! the repository file (`.roster.toml`) and the user file
//! (`~/.config/roster/config.toml`), and the resolution of both into one
//! auto-arm decision. No I/O here, so every rule is a row of a table test.

use std::path::Path;

use registry_core::AgentName;

/// What one configuration file says about `[consent] auto_arm`, including
/// every way it can fail to say anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigOutcome {
    /// No such file.
    Absent,
    /// The file is fine and does not set `[consent] auto_arm`.
    AutoArmUnset,
    /// The file sets `[consent] auto_arm`.
    AutoArm(bool),
    /// The file exists but cannot be read; the text says why.
    Unreadable(String),
    /// The file exists but is not believed: someone other than the user
    /// could have written it (a symlink, another user's file, a file
    /// others may write); the text says why and how to fix it.
    Untrusted(String),
    /// The file is not valid TOML or a value has the wrong type or form.
    Unparseable(String),
    /// The file has a key roster does not know; the whole message (where,
    /// which key, the nearest known one).
    UnknownKey(String),
}

impl ConfigOutcome {
    /// The `auto_arm` value, when the file set one.
    pub fn auto_arm(&self) -> Option<bool> {
        match self {
            ConfigOutcome::AutoArm(value) => Some(*value),
            _ => None,
        }
    }

    /// Why the file could not be used, when it could not.
    pub fn error(&self) -> Option<String> {
        match self {
            ConfigOutcome::Unreadable(why) => Some(format!("unreadable: {why}")),
            ConfigOutcome::Untrusted(why) => Some(format!("untrusted: {why}")),
            ConfigOutcome::Unparseable(why) => Some(format!("does not parse: {why}")),
            ConfigOutcome::UnknownKey(message) => Some(message.clone()),
            _ => None,
        }
    }

    fn from_problem(problem: ConfigProblem) -> ConfigOutcome {
        match problem {
            ConfigProblem::Unparseable(why) => ConfigOutcome::Unparseable(why),
            unknown @ ConfigProblem::UnknownKey { .. } => ConfigOutcome::UnknownKey(unknown.to_string()),
        }
    }

    /// The outcome of a parsed (or failed) repository file.
    pub fn of_repo(parsed: &Result<RepoConfig, ConfigProblem>) -> ConfigOutcome {
        match parsed {
            Ok(RepoConfig { auto_arm: Some(value), .. }) => ConfigOutcome::AutoArm(*value),
            Ok(RepoConfig { auto_arm: None, .. }) => ConfigOutcome::AutoArmUnset,
            Err(problem) => ConfigOutcome::from_problem(problem.clone()),
        }
    }

    /// The outcome of a parsed (or failed) user file.
    pub fn of_user(parsed: &Result<UserConfig, ConfigProblem>) -> ConfigOutcome {
        match parsed {
            Ok(UserConfig { auto_arm: Some(value), .. }) => ConfigOutcome::AutoArm(*value),
            Ok(UserConfig { auto_arm: None, .. }) => ConfigOutcome::AutoArmUnset,
            Err(problem) => ConfigOutcome::from_problem(problem.clone()),
        }
    }
}

/// Why a configuration text was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigProblem {
    #[error("{0}")]
    Unparseable(String),
    /// The dotted key, and the line it is on when it can be told.
    #[error("{}", unknown_key_message(key, *line))]
    UnknownKey { key: String, line: Option<usize> },
}

fn unknown_key_message(key: &str, line: Option<usize>) -> String {
    let suggestion =
        nearest_known_key(key).map(|known| format!(" (did you mean {known}?)")).unwrap_or_default();
    let place = line.map(|line| format!("line {line}: ")).unwrap_or_default();
    format!(
        "{place}unknown key `{key}`{suggestion}; the known keys are `agent_name` (repository file only) and \
         `[consent] auto_arm`"
    )
}

/// Every key either configuration file may hold, for suggestions.
const KNOWN_KEYS: [&str; 10] = [
    "agent_name",
    "consent",
    "auto_arm",
    "adopt",
    "claude_code",
    "copilot",
    "ended",
    "kept_most",
    "kept_days",
    "notify",
];

/// The known key nearest to an unknown one (its last dotted part), when it
/// is close enough to be a typo: at most two edits, and fewer edits than
/// the key has characters.
fn nearest_known_key(key: &str) -> Option<&'static str> {
    let last = key.rsplit('.').next().unwrap_or(key).to_lowercase();
    harness::nearest_by_edit_distance(&last, &KNOWN_KEYS)
}

/// The repository file: `agent_name = "wren"` and `[consent] auto_arm = true`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepoConfig {
    pub agent_name: Option<AgentName>,
    pub auto_arm: Option<bool>,
}

/// The user file: `[consent] auto_arm = false` (a veto), and `[adopt]
/// claude_code = false` or `copilot = false` (that harness's own sessions
/// not listed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserConfig {
    pub auto_arm: Option<bool>,
    pub adopt_claude_code: Option<bool>,
    pub adopt_copilot: Option<bool>,
    /// `[ended] kept_most`: how many ended sessions are kept.
    pub ended_kept_most: Option<usize>,
    /// `[ended] kept_days`: for how many days an ended session is kept.
    pub ended_kept_days: Option<u64>,
    /// `[notify]`: what `roster-notify` tells of and where.
    pub notify: Option<crate::notify_config::NotifyConfig>,
}

/// The auto-arm decision and the sentences that explain it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub auto_arm: bool,
    /// Why, one sentence per input, then the conclusion.
    pub reasons: Vec<String>,
    /// Files that need fixing.
    pub warnings: Vec<String>,
}

/// Parses a repository file strictly: unknown keys are an error naming the
/// key, `agent_name` must be a valid agent name, `auto_arm` a boolean.
pub fn parse_repo_config(bytes: &[u8]) -> Result<RepoConfig, ConfigProblem> {
    parse_repo_table(bytes).map_err(|problem| locate_unknown_key(problem, bytes))
}

fn parse_repo_table(bytes: &[u8]) -> Result<RepoConfig, ConfigProblem> {
    let table = parse_table(bytes)?;
    reject_unknown_keys(&table, &["agent_name", "consent"])?;
    let agent_name = match table.get("agent_name") {
        None => None,
        Some(toml::Value::String(text)) => Some(
            AgentName::parse(text)
                .map_err(|why| ConfigProblem::Unparseable(format!("`agent_name`: {why}")))?,
        ),
        Some(other) => {
            return Err(ConfigProblem::Unparseable(format!(
                "`agent_name` is {}, not a string; write agent_name = \"wren\"",
                type_name(other)
            )));
        }
    };
    let auto_arm = consent_auto_arm(&table)?;
    Ok(RepoConfig { agent_name, auto_arm })
}

/// Parses a user file strictly: only `[consent] auto_arm`, `[adopt]
/// claude_code` and `copilot`, `[ended]` and `[notify]` are known.
pub fn parse_user_config(bytes: &[u8]) -> Result<UserConfig, ConfigProblem> {
    let parsed = parse_table(bytes).and_then(|table| {
        reject_unknown_keys(&table, &["consent", "adopt", "ended", "notify"])?;
        let (adopt_claude_code, adopt_copilot) = adopt_switches(&table)?;
        let (ended_kept_most, ended_kept_days) = ended_bounds(&table)?;
        let notify =
            crate::notify_config::notify_config(table.get("notify")).map_err(ConfigProblem::Unparseable)?;
        Ok(UserConfig {
            auto_arm: consent_auto_arm(&table)?,
            adopt_claude_code,
            adopt_copilot,
            ended_kept_most,
            ended_kept_days,
            notify,
        })
    });
    parsed.map_err(|problem| locate_unknown_key(problem, bytes))
}

/// Adds the line an unknown key is on, found in the file's spans.
fn locate_unknown_key(problem: ConfigProblem, bytes: &[u8]) -> ConfigProblem {
    let ConfigProblem::UnknownKey { key, line: None } = problem else { return problem };
    let line = std::str::from_utf8(bytes).ok().and_then(|text| line_of_key(text, &key));
    ConfigProblem::UnknownKey { key, line }
}

/// The line of a dotted key (`consent.auto_arn`) in a TOML text.
fn line_of_key(text: &str, dotted: &str) -> Option<usize> {
    let document = toml::de::DeTable::parse(text).ok()?;
    let mut table = document.get_ref();
    let mut parts = dotted.split('.').peekable();
    while let Some(part) = parts.next() {
        let (key, value) = table.iter().find(|(key, _)| key.get_ref().as_ref() == part)?;
        if parts.peek().is_none() {
            return Some(text[..key.span().start.min(text.len())].matches('\n').count() + 1);
        }
        match value.get_ref() {
            toml::de::DeValue::Table(inner) => table = inner,
            _ => return None,
        }
    }
    None
}

/// Resolves the two files into the auto-arm decision (docs/contract.md §7):
///
/// - the repository file is the only enabler: auto-arm is on only when it
///   says `[consent] auto_arm = true`;
/// - the user's `auto_arm = false` is a veto that beats any repository, and
///   so is a user file that exists but cannot be read or parsed, or has an
///   unknown key (fail closed); the user's `true` enables nothing;
/// - a repository file that cannot be read or parsed, or has an unknown
///   key, is "not opted in", with a warning.
pub fn resolve_auto_arm(repo: &ConfigOutcome, user: &ConfigOutcome) -> Decision {
    resolve_auto_arm_naming_repo_file(repo, None, user)
}

/// `resolve_auto_arm`, with a warning about the repository file that names
/// its path, when it is known.
pub(crate) fn resolve_auto_arm_naming_repo_file(
    repo: &ConfigOutcome,
    repo_path: Option<&Path>,
    user: &ConfigOutcome,
) -> Decision {
    let mut reasons = Vec::new();
    let mut warnings = Vec::new();

    let repo_enables = match repo {
        ConfigOutcome::Absent => {
            reasons.push(
                "no .roster.toml in the session's directory or above it: the repository does not opt in"
                    .into(),
            );
            false
        }
        ConfigOutcome::AutoArmUnset => {
            reasons
                .push("the repository's .roster.toml does not set [consent] auto_arm: not opted in".into());
            false
        }
        ConfigOutcome::AutoArm(false) => {
            reasons.push("the repository's .roster.toml sets [consent] auto_arm = false".into());
            false
        }
        ConfigOutcome::AutoArm(true) => {
            reasons.push("the repository's .roster.toml sets [consent] auto_arm = true: it opts in".into());
            true
        }
        failed => {
            let why = failed.error().unwrap_or_default();
            reasons.push(format!("the repository's .roster.toml cannot be used ({why}): not opted in"));
            warnings.push(match repo_path {
                Some(path) => format!("the repository file {}: {why}; fix it to opt in", path.display()),
                None => format!("the repository's .roster.toml {why}; fix it to opt in"),
            });
            false
        }
    };

    let user_vetoes = match user {
        ConfigOutcome::Absent => {
            reasons.push("no user config: no veto".into());
            false
        }
        ConfigOutcome::AutoArmUnset => {
            reasons.push("the user config does not set [consent] auto_arm: no veto".into());
            false
        }
        ConfigOutcome::AutoArm(false) => {
            reasons.push(
                "the user config sets [consent] auto_arm = false: a veto that beats any repository".into(),
            );
            true
        }
        ConfigOutcome::AutoArm(true) => {
            reasons.push(
                "the user config sets [consent] auto_arm = true, which enables nothing by itself \
                 (only a repository's .roster.toml can)"
                    .into(),
            );
            false
        }
        failed => {
            let why = failed.error().unwrap_or_default();
            reasons.push(format!("the user config cannot be used ({why}): counted as a veto (fail closed)"));
            warnings.push(format!("the user config {why}; until it is fixed it vetoes auto-arm everywhere"));
            true
        }
    };

    let auto_arm = repo_enables && !user_vetoes;
    reasons.push(
        match (repo_enables, user_vetoes) {
            (true, false) => "auto-arm is on",
            (true, true) => "auto-arm is off: the user's veto beats the repository",
            (false, _) => "auto-arm is off",
        }
        .into(),
    );
    Decision { auto_arm, reasons, warnings }
}

fn parse_table(bytes: &[u8]) -> Result<toml::Table, ConfigProblem> {
    let text = std::str::from_utf8(bytes)
        .map_err(|error| ConfigProblem::Unparseable(format!("not UTF-8: {error}")))?;
    text.parse::<toml::Table>().map_err(|error| {
        let position = error.span().map(|span| line_and_column(text, span.start)).unwrap_or_default();
        // toml's message can span lines; one line is what a terminal and a
        // JSON consumer want.
        let message = error.message().split_whitespace().collect::<Vec<_>>().join(" ");
        ConfigProblem::Unparseable(format!("{position}{message}"))
    })
}

fn line_and_column(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |last| last.chars().count()) + 1;
    format!("line {line}, column {column}: ")
}

fn reject_unknown_keys(table: &toml::Table, known: &[&str]) -> Result<(), ConfigProblem> {
    if let Some(key) = table.keys().find(|key| !known.contains(&key.as_str())) {
        return Err(ConfigProblem::UnknownKey { key: key.clone(), line: None });
    }
    Ok(())
}

/// The table `[name]` of the user file, `None` when it has none; a value
/// that is no table, or a key of it not in `known`, is refused by name.
fn checked_section<'t>(
    table: &'t toml::Table,
    name: &str,
    known: &[&str],
) -> Result<Option<&'t toml::Table>, ConfigProblem> {
    let section = match table.get(name) {
        None => return Ok(None),
        Some(toml::Value::Table(section)) => section,
        Some(other) => {
            return Err(ConfigProblem::Unparseable(format!(
                "`{name}` is {}, not a table; write [{name}] on a line of its own",
                type_name(other)
            )));
        }
    };
    if let Some(key) = section.keys().find(|key| !known.contains(&key.as_str())) {
        return Err(ConfigProblem::UnknownKey { key: format!("{name}.{key}"), line: None });
    }
    Ok(Some(section))
}

/// `[ended] kept_most` and `kept_days`, after checking the `ended` table's
/// keys: the bounds of the ended sessions kept (docs/contract.md §6.2.1),
/// each a whole number within its range.
fn ended_bounds(table: &toml::Table) -> Result<(Option<usize>, Option<u64>), ConfigProblem> {
    let Some(ended) = checked_section(table, "ended", &["kept_most", "kept_days"])? else {
        return Ok((None, None));
    };
    let number = |key: &str, low: u64, high: u64| match ended.get(key) {
        None => Ok(None),
        Some(toml::Value::Integer(value)) if (low as i64..=high as i64).contains(value) => {
            Ok(Some(*value as u64))
        }
        Some(toml::Value::Integer(value)) => Err(ConfigProblem::Unparseable(format!(
            "`ended.{key}` is {value}; write a whole number from {low} to {high}"
        ))),
        Some(other) => Err(ConfigProblem::Unparseable(format!(
            "`ended.{key}` is {}, not a whole number; write {key} = {low} or more, at most {high}",
            type_name(other)
        ))),
    };
    let most = registry_core::ENDED_KEPT_MOST_RANGE;
    let days = registry_core::ENDED_KEPT_DAYS_RANGE;
    Ok((
        number("kept_most", *most.start() as u64, *most.end() as u64)?.map(|value| value as usize),
        number("kept_days", *days.start(), *days.end())?,
    ))
}

/// `[adopt] claude_code` and `copilot`, after checking the `adopt`
/// table's keys: whether `roster-list` lists each harness's own sessions
/// (docs/contract.md §6.5).
fn adopt_switches(table: &toml::Table) -> Result<(Option<bool>, Option<bool>), ConfigProblem> {
    let Some(adopt) = checked_section(table, "adopt", &["claude_code", "copilot"])? else {
        return Ok((None, None));
    };
    let switch = |key: &str| match adopt.get(key) {
        None => Ok(None),
        Some(toml::Value::Boolean(value)) => Ok(Some(*value)),
        Some(other) => Err(ConfigProblem::Unparseable(format!(
            "`adopt.{key}` is {}, not a boolean; write {key} = false or {key} = true",
            type_name(other)
        ))),
    };
    Ok((switch("claude_code")?, switch("copilot")?))
}

/// `[consent] auto_arm`, after checking the `consent` table's keys.
fn consent_auto_arm(table: &toml::Table) -> Result<Option<bool>, ConfigProblem> {
    let Some(consent) = checked_section(table, "consent", &["auto_arm"])? else { return Ok(None) };
    match consent.get("auto_arm") {
        None => Ok(None),
        Some(toml::Value::Boolean(value)) => Ok(Some(*value)),
        Some(other) => Err(ConfigProblem::Unparseable(format!(
            "`consent.auto_arm` is {}, not a boolean; write auto_arm = true or auto_arm = false",
            type_name(other)
        ))),
    }
}

fn type_name(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date-time",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(text: &str) -> Result<RepoConfig, ConfigProblem> {
        parse_repo_config(text.as_bytes())
    }

    fn user(text: &str) -> Result<UserConfig, ConfigProblem> {
        parse_user_config(text.as_bytes())
    }

    fn agent(name: &str) -> Option<AgentName> {
        Some(AgentName::parse(name).unwrap())
    }

    #[test]
    fn repository_files() {
        assert_eq!(repo(""), Ok(RepoConfig::default()));
        assert_eq!(
            repo("agent_name = \"wren\"\n"),
            Ok(RepoConfig { agent_name: agent("wren"), auto_arm: None })
        );
        assert_eq!(
            repo("agent_name = \"wren\"\n[consent]\nauto_arm = true\n"),
            Ok(RepoConfig { agent_name: agent("wren"), auto_arm: Some(true) })
        );
        assert_eq!(
            repo("consent.auto_arm = false"),
            Ok(RepoConfig { agent_name: None, auto_arm: Some(false) })
        );
        assert_eq!(repo("[consent]\n"), Ok(RepoConfig::default()));
        assert_eq!(
            repo("agent = \"wren\""),
            Err(ConfigProblem::UnknownKey { key: "agent".into(), line: Some(1) })
        );
        assert_eq!(
            repo("[consent]\nauto-arm = true"),
            Err(ConfigProblem::UnknownKey { key: "consent.auto-arm".into(), line: Some(2) })
        );
        assert_eq!(
            repo("[other]\nx = 1"),
            Err(ConfigProblem::UnknownKey { key: "other".into(), line: Some(1) })
        );
        for bad in [
            "[consent]\nauto_arm = \"yes\"",
            "[consent]\nauto_arm = 1",
            "consent = true",
            "agent_name = 7",
            "agent_name = \"\"",
            "agent_name = \" wren\"",
            "agent_name = \"a\\u001bb\"",
            "[consent]\nauto_arm = tru",
            "[consent]\nauto_arm = true\nauto_arm = false",
            "[consent\n",
        ] {
            assert!(matches!(repo(bad), Err(ConfigProblem::Unparseable(_))), "{bad:?} gave {:?}", repo(bad));
        }
        assert!(matches!(parse_repo_config(b"agent_name = \"\xff\""), Err(ConfigProblem::Unparseable(_))));
    }

    #[test]
    fn user_files() {
        assert_eq!(user(""), Ok(UserConfig::default()));
        assert_eq!(
            user("[consent]\nauto_arm = false"),
            Ok(UserConfig { auto_arm: Some(false), ..UserConfig::default() })
        );
        assert_eq!(
            user("[adopt]\nclaude_code = false"),
            Ok(UserConfig { adopt_claude_code: Some(false), ..UserConfig::default() })
        );
        assert_eq!(
            user("[ended]\nkept_most = 50\nkept_days = 7"),
            Ok(UserConfig { ended_kept_most: Some(50), ended_kept_days: Some(7), ..UserConfig::default() })
        );
        assert!(user("[ended]\nkept_most = 0").is_err(), "no ended session kept is not a bound");
        assert!(user("[ended]\nkept_days = 3651").is_err(), "ten years at most");
        assert!(user("[ended]\nkept_most = \"50\"").is_err(), "a number, not text");
        assert!(user("[ended]\nkeep = 5").is_err(), "an unknown key under [ended] is refused");
        assert_eq!(
            user("[adopt]\ncopilot = false"),
            Ok(UserConfig { adopt_copilot: Some(false), ..UserConfig::default() })
        );
        assert!(user("[adopt]\nclaude = false").is_err(), "an unknown key under [adopt] is refused");
        assert!(user("adopt = 1").is_err(), "adopt must be a table");
        assert_eq!(
            user("agent_name = \"wren\""),
            Err(ConfigProblem::UnknownKey { key: "agent_name".into(), line: Some(1) })
        );
        assert_eq!(
            user("[consent]\nautoarm = false"),
            Err(ConfigProblem::UnknownKey { key: "consent.autoarm".into(), line: Some(2) })
        );
        assert!(matches!(user("[consent]\nauto_arm = "), Err(ConfigProblem::Unparseable(_))));
    }

    #[test]
    fn unknown_keys_suggest_the_nearest_known_key() {
        let check = |key: &str, expect: Option<&str>| assert_eq!(nearest_known_key(key), expect, "{key}");
        check("agent_nmae", Some("agent_name"));
        check("agent-name", Some("agent_name"));
        check("Agent_Name", Some("agent_name"));
        check("agentname", Some("agent_name"));
        check("consnet", Some("consent"));
        check("consent.autoarm", Some("auto_arm"));
        check("consent.auto-arm", Some("auto_arm"));
        check("agent", None);
        check("shout", None);
        check("x", None);
        let message = ConfigProblem::UnknownKey { key: "agent_nmae".into(), line: None }.to_string();
        assert!(message.starts_with("unknown key `agent_nmae` (did you mean agent_name?); "), "{message}");
        let message = ConfigProblem::UnknownKey { key: "shout".into(), line: None }.to_string();
        assert!(message.starts_with("unknown key `shout`; the known keys"), "{message}");
        // Parsed from a file, the message says the line.
        let Err(problem) = repo("agent_name = \"wren\"\n\n[consent]\nauto_arn = true\n") else {
            panic!("an unknown key")
        };
        assert!(
            problem
                .to_string()
                .starts_with("line 4: unknown key `consent.auto_arn` (did you mean auto_arm?)"),
            "{problem}"
        );
    }

    #[test]
    fn parse_errors_say_where_on_one_line() {
        let Err(ConfigProblem::Unparseable(message)) = repo("[consent]\nauto_arm = tru\n") else {
            panic!("expected a parse error")
        };
        assert!(message.starts_with("line 2, column 12: "), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
            let _ = parse_repo_config(text.as_bytes());
            let _ = parse_user_config(text.as_bytes());
        }

        #[test]
        fn written_values_parse_back(value in proptest::bool::ANY, name in "[a-z][a-z0-9 _-]{0,20}[a-z0-9]") {
            let text = format!("agent_name = {name:?}\n[consent]\nauto_arm = {value}\n");
            let parsed = parse_repo_config(text.as_bytes());
            proptest::prop_assert_eq!(parsed, Ok(RepoConfig { agent_name: agent(&name), auto_arm: Some(value) }));
            let text = format!("[consent]\nauto_arm = {value}\n");
            proptest::prop_assert_eq!(parse_user_config(text.as_bytes()), Ok(UserConfig { auto_arm: Some(value), ..UserConfig::default() }));
        }
    }
}
