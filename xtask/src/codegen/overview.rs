//! `roster(7)`: the overview page. Its prose is roff written here, once;
//! the sections every page shares (exit status, environment, files, the
//! worked example) come from `cli_support::manual::overview`, rendered like
//! the binaries' pages.

use clap_mangen::roff::Roff;
use harness::Harness;
use harness::hook_config::HookHarness;

use super::binaries::{BINARIES, binary_pages};
use super::man_pages::{
    apostrophe_preamble, finish_page, render_examples_and_see_also, render_exit_status_environment_and_files,
    render_without_preamble, title_line,
};

/// The complete roff source of `roster(7)`.
pub fn render_overview_page() -> String {
    let version = roster_list::command().get_version().map(str::to_owned).unwrap_or_default();
    let mut page = apostrophe_preamble();
    page.push_str(&title_line("roster", "7", &version));
    page.push_str(&overview_body());
    let mut roff = Roff::new();
    let manual = cli_support::manual::overview();
    render_exit_status_environment_and_files(&mut roff, &manual);
    // The overview points at every tool's page.
    render_examples_and_see_also(&mut roff, &manual, &binary_pages(), "roster");
    page.push_str(&render_without_preamble(&roff));
    finish_page(&page)
}

/// Everything of `roster(7)` between the title line and EXIT STATUS: the
/// prose written here, with the lists the code holds (the tools, the
/// harnesses, the roster directory's entries) generated from it.
fn overview_body() -> String {
    let harnesses = roff_text(&harness::display_names_in_prose(&Harness::ALL));
    let description = format!(
        ".SH NAME\n\
         roster \\- registry of the AI coding\\-agent sessions running on this machine\n\
         .SH DESCRIPTION\n\
         roster answers, locally and without a server, which agent sessions ({harnesses}) run on\n\
         this machine right now, which harness and agent name each runs as, where it\n\
         works, and whether it accepts being messaged by other tools.\n"
    );
    [
        description,
        DESCRIPTION_TO_TOOLS.to_owned(),
        tools_list(),
        TOOLS_TO_LAYOUT.to_owned(),
        layout_block(),
        LAYOUT_TO_HOOKS.to_owned(),
        hooks_section(),
    ]
    .concat()
}

/// Every tool ([`BINARIES`]) with its page and the one line its `--help`
/// starts with.
fn tools_list() -> String {
    let mut list = String::new();
    for binary in &BINARIES {
        let command = (binary.command)();
        let about = command.get_about().map(ToString::to_string).unwrap_or_default();
        list.push_str(&format!(".TP\n.BR {} (1)\n{}.\n", roff_text(binary.name), roff_text(&about)));
    }
    list
}

/// The roster directory's entries (`registry_core::registry_layout`), as
/// a tree under `$ROSTER_DIR`.
fn layout_block() -> String {
    let entries = registry_core::registry_layout();
    let width = entries.iter().map(|entry| entry.path.chars().count()).max().unwrap_or(0);
    let mut block = String::from(".SH LAYOUT\n.RS 4\n.nf\n");
    block.push_str(&format!("{:<width$}  the roster directory (0700)\n", "$ROSTER_DIR", width = width + 4));
    for entry in entries {
        let line = format!("|-- {:<width$}  {}", entry.path, entry.meaning);
        block.push_str(&roff_text(&line));
        block.push('\n');
    }
    block.push_str(".fi\n.RE\n");
    block
}

/// HOOKS: which harnesses get hook entries, which a plugin file, and which
/// are started from a wrapper, from the harness crate's lists.
fn hooks_section() -> String {
    let with_settings: Vec<Harness> =
        HookHarness::WITH_SETTINGS_FILES.into_iter().map(Harness::from).collect();
    let with_plugins: Vec<Harness> = HookHarness::ALL
        .into_iter()
        .filter(|harness| harness.uses_plugin_file())
        .map(Harness::from)
        .collect();
    let wired: Vec<Harness> = HookHarness::ALL.into_iter().map(Harness::from).collect();
    let without_hooks: Vec<Harness> =
        Harness::ALL.into_iter().filter(|harness| !wired.contains(harness)).collect();
    format!(
        ".SH HOOKS\n\
         A harness tells roster about its sessions through its own hooks:\n\
         \\fBroster\\-hooks install\\fR \\fIharness\\fR merges a session\\-start entry running\n\
         \\fBroster\\-register \\-\\-hook\\fR \\fIharness\\fR and a session\\-end entry running\n\
         \\fBroster\\-prune \\-\\-current \\-\\-hook\\fR \\fIharness\\fR into the harness's\n\
         configuration ({}); for {} it writes a plugin file of roster's own.\n\
         {HOOK_MODE}\
         Harnesses without hooks ({}) are registered from a wrapper script with\n\
         \\fBroster\\-register \\-\\-pid $$\\fR before it execs the harness.\n",
        roff_text(&harness::display_names_in_prose(&with_settings)),
        roff_text(&harness::display_names_in_prose(&with_plugins)),
        roff_text(&harness::display_names_in_prose(&without_hooks)),
    )
}

/// `text` for a line of roff: hyphens as `\-`, so that man neither
/// hyphenates nor shows them as typographic dashes.
fn roff_text(text: &str) -> String {
    text.replace('-', "\\-")
}

/// The rest of DESCRIPTION up to its list of tools.
const DESCRIPTION_TO_TOOLS: &str = r#"Every answer carries a liveness verdict that a reused pid, a reboot or a stale
file cannot fool.
.PP
roster is a set of small tools, each meant to be called from scripts and from a
harness's hooks:
"#;

/// The rest of DESCRIPTION after its list of tools, and TERMS, up to LAYOUT.
const TOOLS_TO_LAYOUT: &str = r#".PP
Every tool takes \fB\-\-dir\fR \fIDIR\fR, \fB\-\-format\fR \fBtext\fR|\fBjson\fR
(or \fB\-\-json\fR), \fB\-q\fR/\fB\-\-quiet\fR, \fB\-h\fR/\fB\-\-help\fR and
\fB\-V\fR/\fB\-\-version\fR.
Text output is for people: aligned columns, \fB~\fR for the home directory,
colour only on a terminal (never with \fBNO_COLOR\fR set or \fBTERM=dumb\fR),
every field escaped so that no control character reaches the terminal.
JSON output is the stable contract for scripts.
An error is one line on standard error,
\fBroster\-\fR\fItool\fR\fB: \fR\fIwhat failed\fR\fB: \fR\fIwhy\fR.
.SH TERMS
.TP
.B session
One running harness session.
.TP
.B owner
The long\-lived process that lives exactly as long as the session (the
\fBclaude\fR process, the \fBcodex\fR process, ...), never the short\-lived
command that registers it.
It is found, most explicit first, from \fB\-\-pid\fR, \fBROSTER_SESSION_PID\fR,
the harness's own \fBCLAUDE_PID\fR or \fBOPENCODE_PID\fR (believed only when it
names an ancestor), or the nearest harness process among the caller's ancestors.
An owner is \fIverified\fR when it is the calling process or one of its
ancestors.
.TP
.B owner identity
What proves that the process at a pid today is the one that registered: the boot
id, the machine, the pid, its start time, its pidfs inode, its uid, the pid and time
namespaces, and the user namespace the uid was read in.
A pid means one process only in one pid namespace of one boot: its \fIworld\fR.
A record from another pid namespace or another machine (a shared home) is
\fBunknown\fR, never dead; an earlier boot of this machine is \fBdead\fR.
pid 1 (init) and kernel threads are never owners: they outlive every session.
.TP
.B record
One session's file, \fIsessions/<pid>@<world>.json\fR, named after the owner pid
and its world, so two sessions with one pid in two containers never share a file.
It holds the owner identity and the harness, agent name, session id, working
directory and registration times.
A file that breaks the format is \fImalformed\fR; one written by a newer roster
is \fIunsupported\-format\fR; one that fails the safety checks below is
\fIuntrusted\fR.
Such entries are listed as problems, never believed, and never hide the others.
.TP
.B verdict
\fBalive\fR, \fBdead\fR or \fBunknown\fR, always with a one\-line reason such as
\(lqpid 4242 is gone\(rq or \(lqrecorded in an earlier boot\(rq.
\fBdead\fR is said only on positive evidence; \fBunknown\fR means the session
could not be examined.
.TP
.B consent
Whether a session accepts being messaged (\(lqpushed to\(rq) by other tools:
an explicit marker written by \fBroster\-consent arm\fR or \fBdisarm\fR, or
auto\-arm, which only a repository's \fI.roster.toml\fR can enable.
"#;

/// LAYOUT after its tree, VERDICT, and CONSENT AND CONFIGURATION, up to
/// HOOKS.
const LAYOUT_TO_HOOKS: &str = r#".PP
\fB\-\-dir\fR beats \fBROSTER_DIR\fR, which beats the default:
\fI$XDG_STATE_HOME/roster\fR, else \fI~/.local/state/roster\fR.
The directory and its subdirectories are created with mode 0700.
The roster directory must be a real directory (not a symlink) owned by the
user, with no write permission for group or others; otherwise every command
refuses with exit status 3 and says how to fix it.
So does a directory above it that another user owns, or that group or others
may write to without the sticky bit (as on \fI/tmp\fR): whoever may write there
could swap the registry.
In a user namespace that maps no uid to the user, where every other user's
files look like the user's own, ownership is proved by the kernel instead (only
an owner may change a file's mode).
Files are written with mode 0600 through a temporary file and a rename, so a
crash leaves the old or the new file, never a torn one.
Each file is opened without following symlinks and is believed only when it is
a regular file owned by the user, writable by nobody else, with one link and at
most 64 KiB.
Every text field of a record has a byte limit (paths 4096, session id and
harness version 128, agent name 64 characters), so a record that
\fBroster\-register\fR writes is always one that \fBroster\-list\fR believes.
.SH VERDICT
Every recorded signal must agree; they are examined in this order:
.IP 1. 4
The boot id differs from the current one: \fBdead\fR (a process of an earlier
boot).
.IP 2. 4
The reader runs in another pid or time namespace than the registrar:
\fBunknown\fR (pids and start times mean other things there).
.IP 3. 4
No process has the pid: \fBdead\fR.
.IP 4. 4
The pidfs inode differs: \fBdead\fR (the pid was reused); it agrees: the
process is the one that registered, whatever uid it shows now, and a 64-bit
build does not read \fI/proc\fR (the kernel never gives a pidfs inode number
twice in a boot; a 32-bit build, which sees half of it, still compares the
start time).
Where no pidfs inode names the process, a start time or a uid that differs is
\fBdead\fR.
A reader in another user namespace than the one the uid was read in (a sandbox
built on \fBunshare \-U\fR or bubblewrap) does not compare uids at all: the pidfs
inode must prove the owner, else \fBunknown\fR, never \fBdead\fR.
\fI/proc/<pid>\fR unreadable while the pid exists and no pidfs inode names it:
\fBunknown\fR.
.IP 5. 4
The process has exited and awaits reaping: \fBdead\fR.
.IP 6. 4
A recorded messaging socket is gone or replaced: \fBdead\fR, or \fBunknown\fR
while a process of the session still runs, or one at its pid may be it (a
harness removes its socket as it shuts down); it cannot be examined:
\fBunknown\fR.
.IP 7. 4
Otherwise \fBalive\fR.
.PP
Any \fBdead\fR signal makes the session dead; otherwise any \fBunknown\fR makes
it unknown.
Two postures act on the one verdict.
\fBroster\-prune\fR is the \fIreaper\fR: it removes \fBdead\fR entries, removes
\fBunknown\fR and problem entries only when they are older than an explicit
\fB\-\-older\-than\fR, and never removes an \fBalive\fR one.
\fBroster\-consent\fR is the \fIgate\fR: only an \fBalive\fR, verified owner
counts; \fBdead\fR and \fBunknown\fR mean \(lqnot consented\(rq.
.SH CONSENT AND CONFIGURATION
A session accepts messages when it has a live \fBarmed\fR marker, or when
auto\-arm is on and it has no live \fBdisarmed\fR marker.
A marker counts only while its owner is \fBalive\fR, so it can never outlive its
session and a reused pid can never revive it.
.PP
The repository file is the nearest \fI.roster.toml\fR from the session's working
directory upward (the directory recorded when the session registered, or
\fB\-\-cwd\fR; never the directory of whoever asks):
.PP
.RS 4
.nf
agent_name = "wren"
[consent]
auto_arm = true
.fi
.RE
.PP
It names the agent the sessions in it work as, and it is the only thing that
can enable auto\-arm.
The user file \fI$XDG_CONFIG_HOME/roster/config.toml\fR (default
\fI~/.config/roster/config.toml\fR) can only say no: \fBauto_arm = false\fR
under \fB[consent]\fR vetoes every repository.
A user file that cannot be read or parsed counts as a veto; a repository file
that cannot be parsed counts as not opted in.
Unknown keys are an error in both.
A repository file is believed only as a regular file (not a symlink) owned by
the user or root and writable by nobody else; any other is untrusted: it
enables nothing and names no agent, and \fBroster\-consent status\fR says why.
A repository file that cannot be used never stops \fBroster\-register\fR: the
session is registered without its agent name, with a warning.
Without either file, auto\-arm is off.
"#;

/// What HOOKS says of hook mode and of trust, between the lists.
const HOOK_MODE: &str = r#"In hook mode a tool reads the harness's JSON payload from standard input, takes
the session id, working directory and transcript path from it, writes nothing to
standard output, finishes inside the harness's hook budget (a session start
within 1 second, a session end within 500 ms, even when another process holds
the lock or the payload never ends), and always exits 0: a failure is one line on standard error and one line in
\fIhook\-errors.log\fR, which \fBroster\-list\fR reports.
.PP
Codex runs a hook only after the user trusts it, and Copilot CLI runs project
hooks only in a trusted folder; \fBroster\-hooks status\fR reports hooks that
are installed but not yet trusted.
"#;
