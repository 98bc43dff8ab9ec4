//! Shell completion scripts for one binary, one per shell clap_complete
//! supports, named the way each shell expects to find them.
//!
//! clap_complete renders from the clap `Command`, which knows flags,
//! subcommands and fixed value sets but not the values roster knows at run
//! time. Before rendering, the command is given what completion needs:
//! harness names for `--harness` and `--hook`, a few durations for
//! `--older-than`, a stand-in value for `roster-register --pid` that each
//! shell's script completes from the live processes in `/proc`, and for
//! each flag that names a registered session (its arg carries the
//! binary's candidates function, `cli_support::session_targets` and the
//! like) a stand-in that each script replaces with a call back into the
//! binary: `ROSTER_COMPLETE=bash roster-send -- roster-send --to ''`
//! answers with the live sessions' pids, session ids or agent names
//! through clap_complete's dynamic engine. After rendering, the
//! bash script gets a fix for a clap_complete bug (see
//! [`fix_hyphenated_bash_dispatch`]) and offers a command's subcommands or
//! values before its flags ([`with_bash_words_before_flags`]).

use clap::builder::PossibleValuesParser;
use clap_complete::engine::ArgValueCandidates;
use clap_complete::{Generator, Shell};

/// Every shell a completion script is generated for, in file order.
pub const SHELLS: [Shell; 5] = [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Elvish, Shell::PowerShell];

/// One binary's completion script for one shell.
pub struct CompletionScript {
    pub binary: &'static str,
    pub shell: Shell,
    /// The name clap_complete gives it: `roster-list.bash`, `_roster-list`,
    /// `roster-list.fish`, `roster-list.elv`, `_roster-list.ps1`.
    pub file_name: String,
    pub script: Vec<u8>,
}

/// The value clap_complete is told a pid flag takes besides `parent`; each
/// shell's script replaces it with the live pids.
const LIVE_PIDS_STAND_IN: &str = "ROSTER_LIVE_PIDS";

/// The value clap_complete is told a session flag takes, numbered per
/// flag (`ROSTER_LIVE_VALUES_000`); each shell's script replaces it with a
/// call back into the binary for that flag's values.
const LIVE_VALUES_STAND_IN: &str = "ROSTER_LIVE_VALUES_";

/// A flag whose values the binary completes at TAB time: the words that
/// lead to it (`roster-consent status --pid`), the stand-in it got.
struct LiveValuesFlag {
    stand_in: String,
    words: Vec<String>,
}

/// `binary`'s completion scripts, one per shell in [`SHELLS`].
pub fn render_completions(binary: &'static str, command: &clap::Command) -> Vec<CompletionScript> {
    let mut live_values_flags = Vec::new();
    let command = with_value_completions(command.clone(), &[binary.to_owned()], &mut live_values_flags);
    SHELLS
        .into_iter()
        .map(|shell| {
            let mut command = command.clone();
            let mut script = Vec::new();
            // Writing into a Vec cannot fail, so generate's panic on a write error cannot fire.
            clap_complete::generate(shell, &mut command, binary, &mut script);
            let script = String::from_utf8(script).expect("clap_complete writes UTF-8");
            let script = match shell {
                Shell::Bash => with_bash_live_pids(&with_bash_words_before_flags(
                    &fix_hyphenated_bash_dispatch(&script, binary),
                )),
                Shell::Zsh => with_zsh_live_pids(&script),
                Shell::Fish => with_fish_live_pids(&with_fish_positional_values(&script, binary, &command)),
                _ => script,
            };
            let script = with_live_values_called_back(shell, &script, &live_values_flags);
            for stand_in in [LIVE_PIDS_STAND_IN, LIVE_VALUES_STAND_IN] {
                assert!(
                    !script.contains(stand_in),
                    "the {shell} script of {binary} still holds {stand_in}: clap_complete changed how it \
                     writes values; teach completions.rs the new shape"
                );
            }
            CompletionScript {
                binary,
                shell,
                file_name: shell.file_name(binary),
                script: script.into_bytes(),
            }
        })
        .collect()
}

/// The command as completion sees it: every value a flag takes that roster
/// can name is a possible value. Only completion gets these: the binaries
/// parse the values themselves and answer a wrong one with what to do.
/// `words` lead to `command` (the binary, then subcommands); each flag
/// whose values the binary completes itself is added to `live_values_flags`.
fn with_value_completions(
    command: clap::Command,
    words: &[String],
    live_values_flags: &mut Vec<LiveValuesFlag>,
) -> clap::Command {
    let harness_names: Vec<&'static str> =
        harness::Harness::ALL.iter().map(|harness| harness.as_str()).collect();
    let hook_targets: Vec<&'static str> = harness_names.iter().copied().chain(["auto"]).collect();
    let command = command.mut_args(|argument| {
        if argument.get::<ArgValueCandidates>().is_some() {
            let long = argument.get_long().expect("a flag that names a session has a long name");
            let stand_in = format!("{LIVE_VALUES_STAND_IN}{:03}", live_values_flags.len());
            let mut flag_words = words.to_vec();
            flag_words.push(format!("--{long}"));
            live_values_flags.push(LiveValuesFlag { stand_in: stand_in.clone(), words: flag_words });

            // clap takes a `&'static str` (its owned strings need a feature
            // the binaries do without); codegen runs once and exits.
            let stand_in: &'static str = Box::leak(stand_in.into_boxed_str());
            return argument.value_parser(PossibleValuesParser::new([stand_in]));
        }
        match argument.get_long() {
            Some("harness") => argument.value_parser(PossibleValuesParser::new(harness_names.clone())),
            Some("hook") => argument.value_parser(PossibleValuesParser::new(hook_targets.clone())),
            Some("pid") => argument.value_parser(PossibleValuesParser::new(["parent", LIVE_PIDS_STAND_IN])),
            // A duration completes to a few common ones, never to file names.
            Some("older-than") => {
                argument.value_parser(PossibleValuesParser::new(cli_support::DURATION_SUGGESTIONS))
            }
            _ => argument,
        }
    });
    command.mut_subcommands(|subcommand| {
        let mut subcommand_words = words.to_vec();
        subcommand_words.push(subcommand.get_name().to_owned());
        with_value_completions(subcommand, &subcommand_words, live_values_flags)
    })
}

/// Each session flag's stand-in replaced by a call back into the binary
/// that asks clap_complete's engine for the flag's values, in the shape
/// `shell`'s script takes a command's output. The call names the words
/// that lead to the flag and an empty word to complete: each shell keeps
/// the candidates that start with what was typed. Its stderr is dropped, so
/// an older binary without the engine adds nothing to the line.
fn with_live_values_called_back(shell: Shell, script: &str, flags: &[LiveValuesFlag]) -> String {
    let mut script = script.to_owned();
    for flag in flags {
        let binary = &flag.words[0];
        let words = flag.words.join(" ");
        let index = flag.words.len();
        let call = format!(
            "_CLAP_COMPLETE_INDEX={index} {COMPLETE} {binary} -- {words} '' 2>/dev/null",
            COMPLETE = format_args!("{}=bash", cli_support::COMPLETE_VARIABLE)
        );
        script = match shell {
            // compgen -W "$(…)" splits the answer, one value a line.
            Shell::Bash => script.replace(&flag.stand_in, &format!("$({call})")),
            // An action of _arguments that starts with a space is run as
            // it stands: a function defined at the top of the script.
            Shell::Zsh => {
                script.replace(&format!("({})", flag.stand_in), &format!(" _roster_live_values {words}"))
            }
            // fish expands the candidates string when completing.
            Shell::Fish => script.replace(&flag.stand_in, &format!("(env {call})")),
            _ => script,
        };
    }
    if shell == Shell::Zsh && !flags.is_empty() {
        let function = format!(
            "_roster_live_values() {{\n    local -a values\n    \
             values=(\"${{(@f)$(_CLAP_COMPLETE_INDEX=$# {}=bash \"$1\" -- \"$@\" '' 2>/dev/null)}}\")\n    \
             compadd -- ${{values:#}}\n}}\n",
            cli_support::COMPLETE_VARIABLE
        );
        script = match script.split_once("autoload -U is-at-least\n") {
            Some((head, tail)) => format!("{head}autoload -U is-at-least\n\n{function}{tail}"),
            None => script,
        };
    }
    script
}

/// clap_complete 4.6.12 names the states of its bash dispatch two ways
/// when the binary's name has a hyphen (clap-rs/clap#6421, fixed upstream
/// by PR #6428 but not in a release yet): the loop that reads the words
/// arrives at `roster__consent__subcmd__arm`, the arm that completes the
/// subcommand is labelled `roster__subcmd__consent__subcmd__arm`. No arm
/// matches, so nothing after a subcommand completes. Relabelling the arms
/// the way the loop spells them is the upstream fix; on a script without
/// the bug it changes nothing.
pub fn fix_hyphenated_bash_dispatch(script: &str, binary: &str) -> String {
    let loop_spelling = format!("{}__subcmd__", binary.replace('-', "__"));
    let arm_spelling = format!("{}__subcmd__", binary.replace('-', "__subcmd__"));
    if loop_spelling == arm_spelling {
        return script.to_owned();
    }
    script.replace(&arm_spelling, &loop_spelling)
}

/// bash: clap_complete offers a command's flags with its subcommands (or
/// a positional's values) for an empty word, `roster-consent <TAB>` giving
/// `--color --dir --format … arm disarm …`. As git does, an empty word gets
/// the subcommands or values alone, and the flags come once a `-` is typed:
/// after each `opts="…"` that mixes the two, a line narrows it.
fn with_bash_words_before_flags(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    for line in script.split_inclusive('\n') {
        out.push_str(line);
        let trimmed = line.trim_start();
        let Some(options) =
            trimmed.strip_prefix("opts=\"").and_then(|rest| rest.trim_end().strip_suffix('"'))
        else {
            continue;
        };
        let (flags, words): (Vec<&str>, Vec<&str>) =
            options.split_whitespace().partition(|word| word.starts_with('-'));
        if flags.is_empty() || words.is_empty() {
            continue;
        }
        let indent = &line[..line.len() - trimmed.len()];
        out.push_str(&format!("{indent}[[ ${{cur}} == -* ]] || opts=\"{}\"\n", words.join(" ")));
    }
    out
}

/// fish: clap_complete writes no completions for positional arguments
/// (`roster-hooks install <HARNESS>`), so one line per subcommand offers a
/// positional's possible values until one of them is given.
fn with_fish_positional_values(script: &str, binary: &str, command: &clap::Command) -> String {
    let condition = format!("__fish_{}_using_subcommand", binary.replace('-', "_"));
    let mut lines = String::new();
    for subcommand in command.get_subcommands() {
        for positional in subcommand.get_positionals() {
            let values: Vec<String> = positional
                .get_possible_values()
                .iter()
                .filter(|value| !value.is_hide_set())
                .map(|value| value.get_name().to_owned())
                .collect();
            if values.is_empty() {
                continue;
            }
            let values = values.join(" ");
            lines.push_str(&format!(
                "complete -c {binary} -n \"{condition} {}; and not __fish_seen_subcommand_from {values}\" -f -a \"{values}\"\n",
                subcommand.get_name()
            ));
        }
    }
    if !lines.is_empty() {
        assert!(
            script.contains(&condition),
            "clap_complete's fish script for {binary} no longer defines {condition}"
        );
    }
    format!("{script}{lines}")
}

/// bash: `compgen -W "parent ROSTER_LIVE_PIDS"` offers `parent` and the
/// numeric entries of `/proc` but pid 1, which is never an owner.
fn with_bash_live_pids(script: &str) -> String {
    script.replace(LIVE_PIDS_STAND_IN, "$(cd /proc 2>/dev/null && printf '%s ' [2-9]* [1-9][0-9]*)")
}

/// zsh: the value list `(parent ROSTER_LIVE_PIDS)` becomes a function that
/// offers `parent` and the live pids but 1, defined at the top of the script.
fn with_zsh_live_pids(script: &str) -> String {
    let function = "_roster_live_pids() {\n    compadd -- parent /proc/<2->(N:t)\n}\n";
    let stand_in = format!("(parent {LIVE_PIDS_STAND_IN})");
    if !script.contains(&stand_in) {
        return script.to_owned();
    }
    let script = script.replace(&stand_in, "_roster_live_pids");
    match script.split_once("autoload -U is-at-least\n") {
        Some((head, tail)) => format!("{head}autoload -U is-at-least\n\n{function}{tail}"),
        None => script,
    }
}

/// fish: the candidates `"parent ROSTER_LIVE_PIDS"` are expanded when
/// completing, so the stand-in becomes a call of a function defined at the
/// top of the script.
fn with_fish_live_pids(script: &str) -> String {
    let function = "function __fish_roster_live_pids\n    \
        string replace -- /proc/ '' /proc/* | string match --regex -- '^(?:[2-9]|[1-9][0-9]+)$'\nend\n\n";
    if !script.contains(LIVE_PIDS_STAND_IN) {
        return script.to_owned();
    }
    format!("{function}{}", script.replace(LIVE_PIDS_STAND_IN, "(__fish_roster_live_pids)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pins clap-rs/clap#6421 in the clap_complete we build with: when this
    /// fails, a release fixed it, and [`fix_hyphenated_bash_dispatch`] can go.
    #[test]
    fn clap_complete_still_labels_hyphenated_bash_arms_wrongly() {
        let mut command = clap::Command::new("my-app").subcommand(
            clap::Command::new("thunder").arg(clap::Arg::new("lightning").long("lightning").num_args(0)),
        );
        let mut script = Vec::new();
        clap_complete::generate(Shell::Bash, &mut command, "my-app", &mut script);
        let script = String::from_utf8(script).unwrap();
        assert!(script.contains("cmd=\"my__app__subcmd__thunder\""), "{script}");
        assert!(script.contains("my__subcmd__app__subcmd__thunder)"), "{script}");
        let fixed = fix_hyphenated_bash_dispatch(&script, "my-app");
        assert!(fixed.contains("        my__app__subcmd__thunder)"), "{fixed}");
        assert!(!fixed.contains("my__subcmd__app"), "{fixed}");
        assert_eq!(fix_hyphenated_bash_dispatch(&script, "myapp"), script);
    }
}
