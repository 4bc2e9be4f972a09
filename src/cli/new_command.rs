//! `baton new NAME [--template loop|fanout|review]`: a workflow to start from. The
//! templates are the samples in `states/`, built into the binary, so what `new`
//! writes is exactly what the samples' tests run. Each ships one of its sample's
//! tests in `tests/`, so `baton test NAME` passes on a fresh template and shows how
//! a test is written.

use std::io::Write;
use std::path::Path;

use clap::ValueEnum;

use crate::cli::CliError;
use crate::exit_code;

/// The workflow `baton new` writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Template {
    /// A script-only loop (`states/countdown`): no Claude account needed.
    #[default]
    Loop,
    /// Script-only workers forked in parallel and gathered (`states/fanout`).
    Fanout,
    /// Plan, implement, test and review with Claude (`states/review-loop`).
    Review,
}

impl Template {
    fn files(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Template::Loop => &[
                ("START.sh", include_str!("../../states/countdown/START.sh")),
                ("TICK.sh", include_str!("../../states/countdown/TICK.sh")),
                ("LIFTOFF.sh", include_str!("../../states/countdown/LIFTOFF.sh")),
                ("tests/liftoff.yaml", include_str!("../../states/countdown/tests/liftoff.yaml")),
            ],
            Template::Fanout => &[
                ("START.sh", include_str!("../../states/fanout/START.sh")),
                ("WORKER.sh", include_str!("../../states/fanout/WORKER.sh")),
                ("GATHER.sh", include_str!("../../states/fanout/GATHER.sh")),
                ("tests/words.yaml", include_str!("../../states/fanout/tests/words.yaml")),
            ],
            Template::Review => &[
                ("START.md", include_str!("../../states/review-loop/START.md")),
                ("IMPLEMENT.md", include_str!("../../states/review-loop/IMPLEMENT.md")),
                ("TEST.sh", include_str!("../../states/review-loop/TEST.sh")),
                ("REVIEW.md", include_str!("../../states/review-loop/REVIEW.md")),
                ("DECIDE.sh", include_str!("../../states/review-loop/DECIDE.sh")),
                ("tests/approved.yaml", include_str!("../../states/review-loop/tests/approved.yaml")),
            ],
        }
    }
}

/// Write the template into the new directory `name` (relative to `cwd`).
pub(crate) fn new_workflow(cwd: &Path, name: &str, template: Template) -> Result<i32, CliError> {
    let directory = cwd.join(name);
    if directory.exists() {
        return Err(CliError::WorkflowExists { path: directory });
    }
    let write_error = |source| CliError::NewWorkflow { path: directory.clone(), source };
    std::fs::create_dir_all(directory.join("tests")).map_err(write_error)?;
    for (file, contents) in template.files() {
        std::fs::write(directory.join(file), contents).map_err(write_error)?;
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "Created {} ({} template); run it with `baton run {name}`, test it with `baton test {name}`",
        directory.display(),
        template_name(template)
    )
    .map_err(|source| CliError::Stdout { source })?;
    Ok(exit_code::COMPLETED)
}

fn template_name(template: Template) -> &'static str {
    match template {
        Template::Loop => "loop",
        Template::Fanout => "fanout",
        Template::Review => "review",
    }
}
