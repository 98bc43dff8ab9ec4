//! Checks of the workspace's own shape that no compiler makes: every
//! source file says why it exists in a `//!` line and is named in the code
//! map (docs/architecture.md), and the field limits the README and the
//! contract print are the ones the code enforces. They run with `cargo
//! test --workspace`, so `.ci/run` holds the tree to them.

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use ::tests::workspace::workspace_root;
    use registry_core::record::FIELD_LIMITS;

    /// Every `.rs` file below `directory`, skipping build output.
    fn rust_files(directory: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(directory) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "target" || name.to_string_lossy().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                rust_files(&path, found);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                found.push(path);
            }
        }
    }

    #[test]
    fn every_source_file_starts_with_a_line_saying_why_it_exists() {
        let root = workspace_root();
        let mut files = Vec::new();
        for top in ["crates", "xtask", "tests", "fuzz"] {
            rust_files(&root.join(top), &mut files);
        }
        assert!(files.len() > 100, "only {} source files found under {}", files.len(), root.display());
        let without: Vec<String> = files
            .iter()
            .filter(|path| {
                let text = std::fs::read_to_string(path).unwrap_or_default();
                !text.starts_with("//!")
            })
            .map(|path| path.strip_prefix(&root).unwrap_or(path).display().to_string())
            .collect();
        assert!(
            without.is_empty(),
            "files whose first line is not a `//!` line:\n  {}",
            without.join("\n  ")
        );
    }

    /// The `| field | limit |` rows of a document, as `(field text, limit
    /// text)`.
    fn limit_rows(text: &str) -> Vec<(String, String)> {
        text.lines()
            .map(str::trim)
            .filter(|line| line.starts_with("| `"))
            .filter_map(|line| {
                let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
                (cells.len() == 2).then(|| (cells[0].to_owned(), cells[1].to_owned()))
            })
            .collect()
    }

    /// Regression: the limits were written by hand in the contract, the
    /// README and register's manual, with nothing tying them to the
    /// constants the checks use.
    #[test]
    fn the_documented_field_limits_are_the_enforced_ones() {
        let root = workspace_root();
        for document in ["README.md", "docs/contract.md"] {
            let text = std::fs::read_to_string(root.join(document)).expect("read the document");
            let rows = limit_rows(&text);
            for limit in FIELD_LIMITS {
                let key = limit.field.key();
                let row = rows
                    .iter()
                    .find(|(fields, _)| fields.split(", ").any(|field| field.trim_matches('`') == key))
                    .unwrap_or_else(|| panic!("{document} has no limit row for `{key}`: {rows:?}"));
                let expected = format!("{} {}", limit.max, limit.unit_name());
                assert!(
                    row.1.starts_with(&expected),
                    "{document} says `{key}` is limited to {:?}, the code to {expected}",
                    row.1
                );
            }
        }
    }

    /// The text of each `### name` section of the code map, by name: up to
    /// the next heading.
    fn map_sections(map: &str) -> std::collections::HashMap<String, String> {
        let mut sections = std::collections::HashMap::new();
        let mut current: Option<(String, String)> = None;
        for line in map.lines() {
            if line.starts_with('#') {
                sections.extend(current.take());
                if let Some(name) = line.strip_prefix("### ") {
                    current = Some((name.trim().to_owned(), String::new()));
                }
                continue;
            }
            if let Some((_, text)) = &mut current {
                text.push_str(line);
                text.push('\n');
            }
        }
        sections.extend(current);
        sections
    }

    /// Whether `text` holds `name` as a name of its own: not the tail or
    /// the head of a longer one (`files.rs` is not named by
    /// `config_files.rs`).
    fn mentions(text: &str, name: &str) -> bool {
        let part_of_a_name = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
        text.match_indices(name).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(part_of_a_name) && (name.ends_with('/') || !after.is_some_and(part_of_a_name))
        })
    }

    /// Whether the section of a crate names its source file `path` (from
    /// `src/`): by that path or by its file name; a folder's `mod.rs` by
    /// the folder (`store/`), the crate's `lib.rs` and `main.rs` by the
    /// crate's own section.
    fn names(section: &str, path: &Path) -> bool {
        let file = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        let folder = path.parent().filter(|folder| !folder.as_os_str().is_empty());
        match (file, folder) {
            ("lib.rs" | "main.rs", None) => true,
            ("mod.rs", Some(folder)) => mentions(section, &format!("{}/", folder.display())),
            _ => mentions(section, &path.display().to_string()) || mentions(section, file),
        }
    }

    /// Regression: 13 source files, all of `registry-core/src/adopted/`
    /// among them, had been named nowhere in the map.
    #[test]
    fn every_source_file_is_named_in_the_code_map() {
        let root = workspace_root();
        let map =
            std::fs::read_to_string(root.join("docs/architecture.md")).expect("read docs/architecture.md");
        let sections = map_sections(&map);
        let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
            .expect("read crates/")
            .flatten()
            .map(|entry| entry.path())
            .collect();
        crates.push(root.join("xtask"));
        crates.sort();
        let mut unnamed = Vec::new();
        for crate_directory in &crates {
            let name = crate_directory.file_name().and_then(|name| name.to_str()).unwrap_or_default();
            let source = crate_directory.join("src");
            let mut files = Vec::new();
            rust_files(&source, &mut files);
            let section = sections.get(name).map(String::as_str).unwrap_or_default();
            for file in files {
                let path = file.strip_prefix(&source).unwrap_or(&file);
                if !names(section, path) {
                    unnamed.push(file.strip_prefix(&root).unwrap_or(&file).display().to_string());
                }
            }
        }
        assert!(
            unnamed.is_empty(),
            "source files docs/architecture.md does not name in their crate's `### <crate>` section (by \
             path from src/, by file name, or a mod.rs by its folder):\n  {}",
            unnamed.join("\n  ")
        );
    }

    #[test]
    fn a_name_is_found_whole_and_a_folder_names_its_mod_rs() {
        assert!(mentions("`files.rs` (the atomic write)", "files.rs"));
        assert!(!mentions("`config_files.rs`", "files.rs"));
        assert!(!mentions("files.rsx", "files.rs"));
        assert!(names("store/     the directory", Path::new("store/mod.rs")));
        assert!(!names("restore/", Path::new("store/mod.rs")));
        assert!(names("", Path::new("lib.rs")));
        assert!(!names("", Path::new("hosts/lib.rs")));
        assert!(names("`hosts/watch.rs`", Path::new("hosts/watch.rs")));
    }
}
