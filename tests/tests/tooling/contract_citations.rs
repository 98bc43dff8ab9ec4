//! The contract, docs/contract.md, is cited by its path and section
//! numbers throughout the code, tests and tools; a citation of a section
//! it does not have (renumbered, removed) fails here.

use tests::workspace::workspace_root;

/// Code, tests and tools cite the contract by its path and the numbers of
/// its sections (several in one citation, as in `§2, §3.1`): every section
/// cited must be a heading of the contract.
#[test]
fn every_contract_citation_names_a_section_of_docs_contract_md() {
    let root = workspace_root();
    let contract = std::fs::read_to_string(root.join("docs/contract.md")).expect("docs/contract.md exists");
    let sections: std::collections::BTreeSet<String> = contract
        .lines()
        .filter(|line| line.starts_with("## ") || line.starts_with("### "))
        .filter_map(|line| line.split_whitespace().nth(1))
        .map(|number| number.trim_end_matches('.').to_owned())
        .collect();
    let mut problems = Vec::new();
    let mut pending = vec![root.join("crates"), root.join("tests"), root.join("xtask")];
    let mut citations = 0;
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).expect("source directories can be listed") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source files are UTF-8");
            // A citation starts at the contract's path and runs to the end of the line.
            for cited in text.split("docs/contract.md").skip(1) {
                let cited = cited.split(['\n', ')', '"']).next().unwrap_or("");
                for number in cited.split('§').skip(1) {
                    let number: String = number
                        .chars()
                        .take_while(|character| character.is_ascii_digit() || *character == '.')
                        .collect();
                    let number = number.trim_end_matches('.');
                    citations += 1;
                    if !sections.contains(number) {
                        problems.push(format!("{}: §{number}", path.display()));
                    }
                }
            }
        }
    }
    assert!(citations > 50, "only {citations} citations found; is the scan broken?");
    assert!(
        problems.is_empty(),
        "citations of sections docs/contract.md lacks:\n  {}",
        problems.join("\n  ")
    );
}
