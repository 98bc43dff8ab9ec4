
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roster-register' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roster-register'
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
        'roster-register' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Name the owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Name the owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('-a', '-a', [CompletionResultType]::ParameterName, 'Register under this agent name ("" for anonymous; default: ROSTER_AGENT, then the recorded name on a refresh, then agent_name in .roster.toml)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Register under this agent name ("" for anonymous; default: ROSTER_AGENT, then the recorded name on a refresh, then agent_name in .roster.toml)')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Record the harness''s session id (default: the hook payload, ROSTER_SESSION_ID, the harness''s export, else the recorded one)')
            [CompletionResult]::new('--session-id', '--session-id', [CompletionResultType]::ParameterName, 'Record the harness''s session id (default: the hook payload, ROSTER_SESSION_ID, the harness''s export, else the recorded one)')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'Record DIR as the session''s working directory (default: the payload''s cwd; by hand the recorded one, else the current directory)')
            [CompletionResult]::new('-H', '-H ', [CompletionResultType]::ParameterName, 'Record the harness by name (default: detected from the owner process, else the recorded one)')
            [CompletionResult]::new('--harness', '--harness', [CompletionResultType]::ParameterName, 'Record the harness by name (default: detected from the owner process, else the recorded one)')
            [CompletionResult]::new('--socket', '--socket', [CompletionResultType]::ParameterName, 'Record the harness''s messaging socket (default: CLAUDE_CODE_MESSAGING_SOCKET when it exists)')
            [CompletionResult]::new('--hook', '--hook', [CompletionResultType]::ParameterName, 'Run as a session-start hook: read the payload from stdin, print nothing, always exit 0, finish within 1 s')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
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
