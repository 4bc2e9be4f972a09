//! Per-agent task folders (R8.9–R8.10): a scratch directory each agent (and each
//! `task="new"` reset of it) owns, exposed as `{{task_folder}}` / `BATON_TASK_FOLDER`.

use std::path::{Path, PathBuf};

/// Computes task folder paths under `<baton_dir>/tasks/<run_id>/`.
#[derive(Clone, Debug)]
pub(crate) struct TaskFolders {
    root: PathBuf,
}

impl TaskFolders {
    pub(crate) fn new(baton_dir: &Path, run_id: &str) -> TaskFolders {
        TaskFolders { root: baton_dir.join("tasks").join(run_id) }
    }

    /// The folder holding every task folder of the run.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of `agent_id` after `task_count` `task="new"` resets.
    pub(crate) fn folder_for(&self, agent_id: &str, task_count: u32) -> PathBuf {
        if task_count == 0 { self.root.join(agent_id) } else { self.root.join(format!("{agent_id}_task{task_count}")) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r8_9_task_count_suffixes_the_agent_id() {
        let folders = TaskFolders::new(Path::new("/p/.baton"), "run1");
        assert_eq!(folders.folder_for("main", 0), PathBuf::from("/p/.baton/tasks/run1/main"));
        assert_eq!(folders.folder_for("main_worker1", 2), PathBuf::from("/p/.baton/tasks/run1/main_worker1_task2"));
    }
}
