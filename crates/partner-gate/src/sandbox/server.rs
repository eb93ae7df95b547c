//! The same walls around a program that keeps running — an MCP server
//! speaking over its stdio: it may write only in the places it is given,
//! reach the network only when allowed, never a Unix socket or a
//! terminal; its `/tmp` is its own, removed with it.

use std::path::{Path, PathBuf};

use super::{Plan, Prepared, Report, Walls, walls};
use crate::scene::Scene;

/// A program's walls, ready to raise in its child (see
/// [`Prepared::apply`]), with what the machine could not raise said.
pub struct Contained {
    /// Raised in the child between fork and exec.
    pub prepared: Prepared,
    /// Why raising them failed, read once the child is gone.
    pub report: Report,
    /// The walls this machine has.
    pub walls: Walls,
    /// The program's private temporary directory (removed on drop).
    pub tmp: PrivateDir,
    /// Where it starts: the directory asked for, else the first place it
    /// may write, else an empty directory of its own (removed on drop).
    pub dir: PathBuf,
    /// That directory of its own, when it has one.
    pub own_dir: Option<PrivateDir>,
}

/// A directory removed when dropped.
pub struct PrivateDir(PathBuf);

impl PrivateDir {
    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh directory only the user may enter.
fn private_dir(kind: &str) -> Result<PrivateDir, String> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = std::env::temp_dir().join(format!(
        "partner-mcp-{kind}-{}-{:016x}",
        std::process::id(),
        fastrand::u64(..)
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("its {kind} directory: {e}"))?;
    Ok(PrivateDir(dir))
}

/// The walls for a program that may write only under `writes` (each
/// absolute) and reach the network when `network`, started in `dir` —
/// which it may write too — or, without one, in the first of `writes`, or
/// in an empty directory of its own; `protected` are files it must not
/// read (partner's own). Fails where no wall at all can be raised, or the
/// directory is one no contained program may start in.
pub fn contain(
    dir: Option<&Path>,
    writes: &[PathBuf],
    network: bool,
    protected: &[PathBuf],
) -> Result<Contained, String> {
    let own_dir = match (dir, writes.first()) {
        (None, None) => Some(private_dir("home")?),
        _ => None,
    };
    let dir: PathBuf = match (dir, writes.first(), &own_dir) {
        (Some(d), _, _) => d.to_path_buf(),
        (None, Some(w), _) => w.clone(),
        (None, None, Some(own)) => own.path().to_path_buf(),
        (None, None, None) => return Err("no directory to start in".into()),
    };
    let scene = Scene::current()
        .in_dir(&dir)
        .protecting(protected.iter().cloned());
    let mut plan = Plan::for_command("", &scene);
    plan.writes = std::iter::once(super::plan::canonical(&dir))
        .chain(writes.iter().map(|w| super::plan::canonical(w)))
        .collect();
    plan.writes.dedup();
    plan.network = if network {
        vec!["server".into()]
    } else {
        Vec::new()
    };
    let walls = walls();
    if walls.absent() {
        return Err(format!(
            "no sandbox wall can be raised here: {}",
            walls.missing().unwrap_or_default()
        ));
    }
    let tmp = private_dir("tmp")?;
    let (prepared, report) = plan.prepare(&scene, tmp.path(), &walls)?;
    Ok(Contained {
        prepared,
        report,
        walls,
        tmp,
        dir,
        own_dir,
    })
}
