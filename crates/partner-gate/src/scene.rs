//! Where a command would run: the home directory, the working directory,
//! the homes of other users and the partner's own files. The safety layer
//! judges paths against a scene, so that `*`, `~root`, `../..` and a glob
//! mean what they would mean when the command runs, and the sandbox is
//! built from the same scene.

use std::path::{Path, PathBuf};

/// The place a command runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scene {
    home: String,
    dir: String,
    protected: Vec<String>,
    kept: Vec<String>,
}

impl Scene {
    /// The scene of this process: `$HOME` and the current directory.
    pub fn current() -> Scene {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()))
            .unwrap_or_else(|| PathBuf::from("/root"));
        let dir = std::env::current_dir().unwrap_or_else(|_| home.clone());
        Scene::new(&home, &dir)
    }

    /// A scene with this home and working directory (both absolute).
    pub fn new(home: &Path, dir: &Path) -> Scene {
        let text = |p: &Path| super::paths::clean(&p.to_string_lossy());
        Scene {
            home: text(home),
            dir: text(dir),
            protected: Vec::new(),
            kept: Vec::new(),
        }
    }

    /// The same scene running in `dir`.
    pub fn in_dir(&self, dir: &Path) -> Scene {
        Scene {
            dir: super::paths::clean(&dir.to_string_lossy()),
            ..self.clone()
        }
    }

    /// The same scene with more of the partner's own files protected
    /// (the database in use, its WAL, the socket): a relative path is
    /// taken from this process's directory, and a path through links is
    /// protected where it leads too.
    pub fn protecting(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Scene {
        let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        for p in paths {
            let absolute = here.join(&p);
            let real = super::sandbox::plan::canonical(&absolute);
            for path in [absolute, real] {
                let text = super::paths::clean(&path.to_string_lossy());
                if text.starts_with('/') && !self.protected.contains(&text) {
                    self.protected.push(text);
                }
            }
        }
        self
    }

    /// The same scene with the constellation's own files a command may
    /// read but never change (its config, policy, verbs and tools): where
    /// they lie in a writable directory, the sandbox keeps them read-only.
    pub fn keeping(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Scene {
        let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        for p in paths {
            let real = super::sandbox::plan::canonical(&here.join(&p));
            let text = super::paths::clean(&real.to_string_lossy());
            if text.starts_with('/') && !self.kept.contains(&text) {
                self.kept.push(text);
            }
        }
        self
    }

    /// The constellation's files kept read-only.
    pub fn kept(&self) -> &[String] {
        &self.kept
    }

    /// The home directory.
    pub fn home(&self) -> &Path {
        Path::new(&self.home)
    }

    /// The working directory.
    pub fn dir(&self) -> &Path {
        Path::new(&self.dir)
    }

    pub(crate) fn home_str(&self) -> &str {
        &self.home
    }

    pub(crate) fn dir_str(&self) -> &str {
        &self.dir
    }

    /// The partner's own files beyond the table (absolute).
    pub fn protected(&self) -> &[String] {
        &self.protected
    }

    /// A user's home directory (`~root`, `~ada`): from `/etc/passwd`, else
    /// `/home/NAME`.
    pub(crate) fn user_home(&self, user: &str) -> String {
        if user == "root" {
            return "/root".into();
        }
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
        passwd
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                (f.len() >= 6 && f[0] == user).then(|| f[5].to_string())
            })
            .next()
            .unwrap_or_else(|| format!("/home/{user}"))
    }

    /// A path as the partner reads it: under the home, `~/…`.
    pub fn show(&self, abs: &str) -> String {
        if abs == self.home {
            "~".into()
        } else if let Some(rest) = abs
            .strip_prefix(self.home.as_str())
            .filter(|r| r.starts_with('/') && self.home != "/")
        {
            format!("~{rest}")
        } else {
            abs.to_string()
        }
    }

    /// A path relative to the working directory shown as `./…`.
    pub fn show_dir(&self, abs: &str) -> String {
        if abs == self.dir {
            "./".into()
        } else {
            self.show(abs)
        }
    }
}
