//! `baton worker` (`docs/distributed.md`): the flags checked, the watchdog forked
//! while Baton has one thread, then `distributed::worker` serves until a signal.

use super::CliError;
use super::arguments::WorkerArguments;
use crate::distributed::worker::{self, WorkerOptions};
use crate::exit_code;
use crate::process::watchdog::Watchdog;
use crate::text::duration::{number_text, parse_duration, seconds};

pub(crate) fn worker(arguments: WorkerArguments) -> Result<i32, CliError> {
    let invalid =
        |flag: &'static str, value: String, expected: String| CliError::InvalidValue { flag, value, expected };
    let longest_step = parse_duration(&arguments.longest_step)
        .map_err(|error| invalid("longest-step", arguments.longest_step.clone(), error.to_string()))?;
    let grace =
        seconds(arguments.grace).map_err(|error| invalid("grace", number_text(arguments.grace), error.to_string()))?;
    for (flag, url) in [("register", &arguments.register), ("advertise", &arguments.advertise)] {
        if let Some(url) = url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(invalid(flag, url.clone(), "expected an http:// URL, such as http://127.0.0.1:9070".into()));
        }
    }
    let options = WorkerOptions {
        listen: arguments.listen,
        register: arguments.register,
        advertise: arguments.advertise,
        name: arguments.name,
        max_concurrent_steps: arguments.max_concurrent_steps.map_or_else(worker::default_max_steps, |max| max as usize),
        longest_step,
        grace,
    };
    // Forked before the runtime's threads start (`Watchdog::fork`): the steps'
    // process groups die with this worker, however it ends.
    let watchdog = Watchdog::fork();
    super::runtime()?.block_on(worker::serve(options, watchdog))?;
    Ok(exit_code::COMPLETED)
}
