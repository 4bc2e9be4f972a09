//! `baton init-config` (raymond's `--init-config`): a `.baton/config.toml` that
//! lists every setting, commented out, so a user edits rather than looks up.

use std::io::Write;

use crate::cli::CliError;
use crate::cli::config::CONFIG_FILE;
use crate::exit_code;
use crate::store::runs::RunStore;

const TEMPLATE: &str = "\
# Baton's project settings. Command-line flags win over these; remove the `#` to set one.
# model = \"sonnet\"                      # opus, sonnet or haiku, for prompts that name none
# effort = \"medium\"                     # low, medium, high, xhigh or max
# dangerously_skip_permissions = true    # false runs Claude with --permission-mode acceptEdits
# claude_bin = \"/usr/local/bin/claude\"  # else BATON_CLAUDE_BIN, then `claude` on PATH
# budget = 5.0                           # US dollars per run (0 = unlimited)
# timeout = 600                          # inactivity timeout per state, seconds (0 = none)
# no_wait = false                        # true: pause at a usage limit instead of waiting
# no_debug = false                       # true: write no trace files
# verbose = false                        # true: log Baton's own diagnostics in detail
# name = \"\"                              # a label for the terminal's title
# engine = \"local\"                      # or \"restate=http://HOST:8080\": steps on workers (docs/distributed.md)
# [otel]                                 # runs' traces to an OpenTelemetry collector (docs/observability.md)
# endpoint = \"http://127.0.0.1:4318\"    # its OTLP base URL (http:// or https://); OTEL_EXPORTER_OTLP_ENDPOINT wins over it
";

pub(crate) fn init_config(store: &RunStore) -> Result<i32, CliError> {
    let path = store.baton_dir().join(CONFIG_FILE);
    if path.exists() {
        return Err(CliError::ConfigExists { path });
    }
    let created = crate::store::baton_dir::create_baton_dir(store.baton_dir())
        .and_then(|()| std::fs::OpenOptions::new().write(true).create_new(true).open(&path))
        .and_then(|mut file| file.write_all(TEMPLATE.as_bytes()));
    created.map_err(|source| CliError::ConfigWrite { path: path.clone(), source })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "Created {}", path.display()).map_err(|source| CliError::Stdout { source })?;
    Ok(exit_code::COMPLETED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::config::Config;

    #[test]
    fn the_template_parses_and_sets_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(CONFIG_FILE), TEMPLATE).expect("write");
        assert_eq!(Config::load(dir.path()).expect("parses"), Config::default());
    }
}
