//! Converting between a workflow directory and a YAML workflow (`baton convert`).
//!
//! Directory → YAML: each `.md` becomes a prompt state (its frontmatter fields beside
//! `prompt`), each script a script state (`sh`, `ps1`, `bat`), the entry point first
//! and the others by name; a `workflow.yaml` manifest's keys go beside `states`. The
//! YAML written is read back and compared state by state before it is returned, so
//! a conversion is lossless or refused.
//!
//! YAML → directory: each state's virtual file (R1.5, R13.7), and a `workflow.yaml`
//! with the manifest keys, if any. A directory has no order: converting it back puts
//! the entry point first, then the others by name.

use std::path::Path;

use yaml_rust2::yaml::Hash;
use yaml_rust2::{Yaml, YamlEmitter, YamlLoader};

use crate::syntax::frontmatter::split;
use crate::syntax::yaml_limits;
use crate::text::state_name;
use crate::workflow::manifest::MANIFEST_FILE;
use crate::workflow::resolution::{entry_point, state_files};
use crate::workflow::yaml_scope::{VirtualFile, YamlWorkflow};

/// The YAML workflow text of the workflow directory `dir`.
pub(crate) fn directory_to_yaml(dir: &Path) -> Result<String, String> {
    let files = state_files(dir).map_err(|error| error.to_string())?;
    let mut names: Vec<String> = files
        .iter()
        .filter(|file| state_name::is_state_extension(state_name::extension(file)))
        .map(|file| state_name::strip_state_extension(file).to_string())
        .collect();
    names.sort();
    names.dedup();
    if let Ok(entry) = entry_point(dir) {
        let entry = state_name::strip_state_extension(&entry).to_string();
        names.retain(|name| *name != entry);
        names.insert(0, entry);
    }
    let mut states = Hash::new();
    for name in &names {
        let file = |extension: &str| files.iter().find(|file| **file == format!("{name}.{extension}"));
        let read = |file: &str| std::fs::read_to_string(dir.join(file)).map_err(|error| format!("{file}: {error}"));
        let mut fields = Hash::new();
        let scripts: Vec<&str> =
            ["sh", "ps1", "bat"].into_iter().filter(|extension| file(extension).is_some()).collect();
        match (file("md"), scripts.is_empty()) {
            (Some(_), false) => {
                return Err(format!("`{name}` is both a prompt and a script; a YAML state is one or the other"));
            }
            (Some(md), true) => {
                let (frontmatter, body) = split(&read(md)?);
                if let Some(frontmatter) = frontmatter {
                    // The frontmatter starts on the file's second line.
                    yaml_limits::check(&frontmatter).map_err(|error| format!("{md}: {}", error.shifted(1)))?;
                    match YamlLoader::load_from_str(&frontmatter).map_err(|error| format!("{md}: {error}"))?.first() {
                        Some(Yaml::Hash(keys)) => fields.extend(keys.clone()),
                        Some(Yaml::Null) | None => {}
                        Some(_) => return Err(format!("{md}: the frontmatter is not a mapping")),
                    }
                }
                fields.insert(Yaml::String("prompt".into()), Yaml::String(body));
            }
            (None, _) => {
                for extension in scripts {
                    let text = read(&format!("{name}.{extension}"))?;
                    fields.insert(Yaml::String(extension.into()), Yaml::String(text));
                }
            }
        }
        states.insert(Yaml::String(name.clone()), Yaml::Hash(fields));
    }
    let mut root = Hash::new();
    if let Ok(manifest) = std::fs::read_to_string(dir.join(MANIFEST_FILE)) {
        yaml_limits::check(&manifest).map_err(|error| format!("{MANIFEST_FILE}: {error}"))?;
        if let Ok(documents) = YamlLoader::load_from_str(&manifest)
            && let Some(Yaml::Hash(keys)) = documents.into_iter().next()
        {
            root.extend(keys.into_iter().filter(|(key, _)| key.as_str() != Some("states")));
        }
    }
    root.insert(Yaml::String("states".into()), Yaml::Hash(states));
    let text = emit(&Yaml::Hash(root))?;
    check_round_trip(dir, &names, &text)?;
    Ok(text)
}

/// The files of the YAML workflow `path` as a directory: (file name, contents).
pub(crate) fn yaml_to_directory(path: &Path) -> Result<Vec<(String, String)>, String> {
    // Read once: the states, then the manifest keys beside them (the text is within
    // the YAML limits, which loading checked).
    let loaded = YamlWorkflow::open(path).map_err(|error| error.to_string())?;
    let (workflow, text) = (&loaded.workflow, &loaded.text);
    let mut files = Vec::new();
    for name in workflow.listing().iter() {
        let text = match workflow.file(name) {
            Some(VirtualFile::Prompt(text) | VirtualFile::Script(text)) => text.to_string(),
            None => continue,
        };
        files.push((name.clone(), text));
    }
    if let Ok(documents) = YamlLoader::load_from_str(text)
        && let Some(Yaml::Hash(root)) = documents.into_iter().next()
    {
        let manifest: Hash = root.into_iter().filter(|(key, _)| key.as_str() != Some("states")).collect();
        if !manifest.is_empty() {
            files.push((MANIFEST_FILE.to_string(), emit(&Yaml::Hash(manifest))?));
        }
    }
    Ok(files)
}

fn emit(document: &Yaml) -> Result<String, String> {
    let mut text = String::new();
    let mut emitter = YamlEmitter::new(&mut text);
    emitter.multiline_strings(true);
    emitter.dump(document).map_err(|error| format!("cannot write YAML: {error:?}"))?;
    let body = text.strip_prefix("---\n").unwrap_or(&text);
    Ok(format!("{body}\n"))
}

/// Read `text` back and compare every state with the directory's file.
fn check_round_trip(dir: &Path, names: &[String], text: &str) -> Result<(), String> {
    let converted = YamlWorkflow::parse(&dir.with_extension("yaml"), text).map_err(|error| error.to_string())?;
    for file in converted.listing().iter() {
        let original = std::fs::read_to_string(dir.join(file)).map_err(|error| format!("{file}: {error}"))?;
        let (_, original_body) = split(&original);
        let same = match converted.file(file) {
            Some(VirtualFile::Script(text)) => text == original,
            Some(VirtualFile::Prompt(text)) => split(text).1 == original_body,
            None => false,
        };
        if !same {
            return Err(format!("`{file}` would not survive the conversion unchanged; it was not converted"));
        }
    }
    if converted.listing().len() < names.len() {
        return Err("some states would be lost in the conversion".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_round_trips_through_yaml() {
        let dir = tempfile::tempdir().expect("temp dir");
        let wf = dir.path().join("wf");
        std::fs::create_dir_all(&wf).expect("mkdir");
        let files = [
            (
                "START.md",
                "---\nallowed_transitions:\n  - {tag: goto, target: CHECK}\nmodel: opus\n---\nPlan it.\n\nThen: <goto>CHECK</goto>\n",
            ),
            ("CHECK.sh", "#!/bin/bash\necho '<result>ok: \"quoted\"</result>'\n"),
            ("NOTES.md", "no frontmatter, no trailing newline"),
        ];
        for (name, text) in files {
            std::fs::write(wf.join(name), text).expect("write");
        }
        std::fs::write(wf.join("workflow.yaml"), "id: demo\nname: Demo\n").expect("manifest");
        let yaml = directory_to_yaml(&wf).expect("converts");
        assert!(yaml.starts_with("id: demo\nname: Demo\nstates:\n  START:"), "{yaml}");
        let yaml_path = dir.path().join("wf.yaml");
        std::fs::write(&yaml_path, &yaml).expect("write");
        let back = yaml_to_directory(&yaml_path).expect("back");
        let names: Vec<&str> = back.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["START.md", "CHECK.sh", "NOTES.md", "workflow.yaml"]);
        for (name, text) in files {
            let converted = &back.iter().find(|(file, _)| file == name).expect("file").1;
            assert_eq!(split(converted).1, split(text).1, "{name}");
        }
        let frontmatter = split(&back[0].1).0.expect("frontmatter");
        assert!(frontmatter.contains("model: opus"), "{frontmatter}");
    }

    #[test]
    fn a_state_that_is_both_prompt_and_script_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("START.md"), "x").expect("write");
        std::fs::write(dir.path().join("START.sh"), "x").expect("write");
        assert_eq!(
            directory_to_yaml(dir.path()).unwrap_err(),
            "`START` is both a prompt and a script; a YAML state is one or the other"
        );
    }
}
