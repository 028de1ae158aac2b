//! Paths as generated files and messages show them: relative to the working directory and
//! lexically normalised, so the same folder reads the same however it was spelled and no
//! machine's absolute paths end up in checked-in files.

use std::path::{Component, Path};

/// `path` relative to the working directory, with `.` and `..` resolved and `/` separators:
/// `schemas`, `./schemas` and `$PWD/schemas` all give `schemas`; a folder beside the working
/// directory gives `../shared/x`. Falls back to the normalised path itself when the working
/// directory is unknown.
pub fn display_path(path: &Path) -> String {
    match std::env::current_dir() {
        Ok(cwd) => relative_to(path, &cwd),
        Err(_) => join(&normalize(path)),
    }
}

/// `path` relative to the absolute folder `base` (lexically: links are not followed).
pub fn relative_to(path: &Path, base: &Path) -> String {
    let target = normalize(&base.join(path));
    let base = normalize(base);
    let common = target.iter().zip(&base).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); base.len() - common];
    parts.extend(target[common..].iter().cloned());
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

/// The components of `path` after resolving `.` and `..` (a `..` above the root is dropped,
/// as the kernel does; a relative path keeps its leading `..`s).
fn normalize(path: &Path) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut rooted = false;
    for c in path.components() {
        match c {
            Component::Prefix(p) => parts.push(p.as_os_str().to_string_lossy().into_owned()),
            Component::RootDir => rooted = true,
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.last().is_some_and(|p| p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..".to_string());
                }
            }
            Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
        }
    }
    parts
}

fn join(parts: &[String]) -> String {
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_folder_agree() {
        let base = Path::new("/work/main");
        for spelling in ["schemas", "./schemas", "/work/main/schemas", "a/../schemas", "/work/main/./schemas/"] {
            assert_eq!(relative_to(Path::new(spelling), base), "schemas", "{spelling}");
        }
        assert_eq!(relative_to(Path::new("../shared/k"), base), "../shared/k");
        assert_eq!(relative_to(Path::new("/work/shared/k"), base), "../shared/k");
        assert_eq!(relative_to(Path::new("/work/main"), base), ".");
        assert_eq!(relative_to(Path::new("/opt/kafka/message"), base), "../../opt/kafka/message");
    }
}
