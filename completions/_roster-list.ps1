
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roster-list' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roster-list'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'roster-list' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Show only sessions registered under this agent name ("" for the anonymous ones)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Show only sessions registered under this agent name ("" for the anonymous ones)')
            [CompletionResult]::new('-H', '-H ', [CompletionResultType]::ParameterName, 'Show only sessions of this harness (claude-code, codex, gemini-cli, ...; "" for an unknown one)')
            [CompletionResult]::new('--harness', '--harness', [CompletionResultType]::ParameterName, 'Show only sessions of this harness (claude-code, codex, gemini-cli, ...; "" for an unknown one)')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'Show only the session with this session id ("" for the sessions without one)')
            [CompletionResult]::new('--session-id', '--session-id', [CompletionResultType]::ParameterName, 'Show only the session with this session id ("" for the sessions without one)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Show only sessions working in DIR or below it')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'Show only sessions working in DIR or below it')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Show only sessions in these states, a comma list of working, idle, waiting (for their user), unknown')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Show only sessions in these states, a comma list of working, idle, waiting (for their user), unknown')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Show these columns, in this order: a comma list of pid, harness, agent, liveness, state, consent, msgs, location, age, cwd, session, reason')
            [CompletionResult]::new('--columns', '--columns', [CompletionResultType]::ParameterName, 'Show these columns, in this order: a comma list of pid, harness, agent, liveness, state, consent, msgs, location, age, cwd, session, reason')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Fit the table in N columns (default: $COLUMNS, else the terminal''s width; no limit into a pipe)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'With --ended, only the sessions that ended within DURATION (90m, 36h, 7d, 2w)')
            [CompletionResult]::new('--until-gone', '--until-gone', [CompletionResultType]::ParameterName, 'Print the events until the session with this owner pid or session id is gone, then exit 0')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'List the sessions of HOST through ssh (repeatable; `local` is this machine; see HOSTS)')
            [CompletionResult]::new('--hosts-file', '--hosts-file', [CompletionResultType]::ParameterName, 'List the sessions of each host FILE names, one a line (# starts a comment), as --host does')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Seconds ssh may take to connect to a host of --host')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-a', '-a', [CompletionResultType]::ParameterName, 'Show dead sessions too')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Show dead sessions too')
            [CompletionResult]::new('--no-adopt', '--no-adopt', [CompletionResultType]::ParameterName, 'List roster''s own records only, not the sessions Claude Code (~/.claude/sessions) and Copilot CLI (~/.copilot/session-state) keep')
            [CompletionResult]::new('-W', '-W ', [CompletionResultType]::ParameterName, 'Show every cell whole: full session ids, no cut to the terminal''s width')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Show every cell whole: full session ids, no cut to the terminal''s width')
            [CompletionResult]::new('--no-legend', '--no-legend', [CompletionResultType]::ParameterName, 'Do not explain the table''s marks and CONSENT labels on stderr (each is said once otherwise)')
            [CompletionResult]::new('--ended', '--ended', [CompletionResultType]::ParameterName, 'List the sessions that ended instead, newest first: when, how (exited, crashed, reboot, removed), harness, agent, directory, session id, and the command that resumes it (or none and why)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'After the rows, print one event per change until interrupted (see EVENTS)')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'After the rows, print one event per change until interrupted (see EVENTS)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
