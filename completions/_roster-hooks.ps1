
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roster-hooks' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roster-hooks'
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
        'roster-hooks' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('print', 'print', [CompletionResultType]::ParameterValue, 'Show the hook entries install would merge, for adding them by hand')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Merge roster''s hooks (session start and end, and each state event) into a harness''s configuration')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly the hooks install added, its backup and the directories it created')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Say for each harness whether roster''s hooks are installed')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'roster-hooks;print' {
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)')
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)')
            [CompletionResult]::new('--bin-dir', '--bin-dir', [CompletionResultType]::ParameterName, 'Call roster-register, roster-prune and roster-state in DIR (default: by name through PATH in project files, else the directory roster-hooks runs from)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'roster-hooks;install' {
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)')
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)')
            [CompletionResult]::new('--bin-dir', '--bin-dir', [CompletionResultType]::ParameterName, 'Call roster-register, roster-prune and roster-state in DIR (default: by name through PATH in project files, else the directory roster-hooks runs from)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'roster-hooks;uninstall' {
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)')
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'roster-hooks;status' {
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Report only files of this scope (default: every scope)')
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'Report only files of this scope (default: every scope)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'roster-hooks;help' {
            [CompletionResult]::new('print', 'print', [CompletionResultType]::ParameterValue, 'Show the hook entries install would merge, for adding them by hand')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Merge roster''s hooks (session start and end, and each state event) into a harness''s configuration')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly the hooks install added, its backup and the directories it created')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Say for each harness whether roster''s hooks are installed')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'roster-hooks;help;print' {
            break
        }
        'roster-hooks;help;install' {
            break
        }
        'roster-hooks;help;uninstall' {
            break
        }
        'roster-hooks;help;status' {
            break
        }
        'roster-hooks;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
