//! Records the git commit the extension is built from (`_core.__build_commit__`), so an
//! installed wheel, which has no git work tree beside it, still says which source made it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).filter(|c| !c.is_empty());
    let build = match commit {
        Some(c) => {
            // Tracked files of the package (Python and Rust) that differ from the commit.
            let dirty = git(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                "../../python",
                "../../crates",
            ])
            .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{c}-dirty")
            } else {
                c
            }
        }
        // A source archive without git: nothing to record.
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=TCPLAB_BUILD_COMMIT={build}");
    // Run again when HEAD moves (its reflog changes on every commit, checkout or reset) or
    // the index changes; without these lines any file of the crate would re-run it.
    for path in ["logs/HEAD", "index"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
