//! Checks of the workspace's own shape that no compiler makes: every
//! source file says why it exists in a `//!` line, and the field limits the
//! README and the contract print are the ones the code enforces. They run
//! with `cargo test --workspace`, so `.ci/run` holds the tree to them.

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
}
