//! A world to try escaping from: a fake home full of fake secrets
//! (outside `/tmp`, which the sandbox replaces, so that what hides them is
//! the wall under test and not the private `/tmp`), a working directory
//! in it, a place outside, the partner's database and socket, and doors
//! that count who knocks: Unix sockets (path-named, abstract, in the
//! working directory), TCP and UDP on loopback.

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// The secret every fake secret file holds.
pub const SECRET: &str = "FAKE-SECRET-9f31c";

/// A fake home, a working directory, doors and secrets.
pub struct World {
    _root: tempfile::TempDir,
    /// The root of it all.
    pub root: PathBuf,
    /// The fake home.
    pub home: PathBuf,
    /// The working directory (in the home).
    pub work: PathBuf,
    /// A directory outside the working directory.
    pub outside: PathBuf,
    /// The partner's database (in its own directory).
    pub db: PathBuf,
    /// Doors, and how many were let in.
    pub doors: Vec<Door>,
    stop: Arc<AtomicBool>,
}

/// A listening door and how many came through it.
pub struct Door {
    /// What it is.
    pub name: &'static str,
    /// Its address as a command would name it.
    pub address: String,
    /// Connections (or datagrams) it took.
    pub reached: Arc<AtomicUsize>,
}

impl Drop for World {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A temporary directory where the sandbox shows the host's own files:
/// the integration tests' temporary directory, unless that lies under a
/// place the sandbox replaces (a clone in `/tmp`), then the user's cache.
/// What hides a secret there is then the wall under test, and what a
/// command writes there is the host's file, not a private copy.
pub fn outside_tmp() -> tempfile::TempDir {
    let target = std::fs::canonicalize(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let replaced = ["/tmp", "/var/tmp", "/run", "/dev/shm"]
        .iter()
        .any(|r| target.starts_with(r));
    let base = if replaced {
        let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
        let base = home.join(".cache/partner-tests");
        std::fs::create_dir_all(&base).unwrap();
        base
    } else {
        target
    };
    tempfile::tempdir_in(base).unwrap()
}

impl World {
    /// A new world under a directory the sandbox shows as it is.
    pub fn new() -> World {
        let root = outside_tmp();
        let path = std::fs::canonicalize(root.path()).unwrap();
        let home = path.join("home");
        let work = home.join("work");
        let outside = path.join("outside");
        for (file, text) in [
            (".ssh/id_rsa", SECRET),
            (".ssh/id_rsa.pub", "ssh-rsa public"),
            (".aws/credentials", SECRET),
            (".netrc", SECRET),
            (".cargo/credentials.toml", SECRET),
            (".cargo/config.toml", "# config\n"),
            (".cargo/registry/index/x", "cache"),
            (".cache/pip/x", "cache"),
            (".local/share/partner/x.db", SECRET),
            (".bashrc", "# bashrc\n"),
        ] {
            write(&home.join(file), text);
        }
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let db = path.join("data").join("c.db");
        write(&db, SECRET);
        let stop = Arc::new(AtomicBool::new(false));
        let mut world = World {
            _root: root,
            root: path,
            home,
            work,
            outside,
            db,
            doors: Vec::new(),
            stop,
        };
        world.open_doors();
        world
    }

    /// The partner's own files the scene protects.
    pub fn own_files(&self) -> Vec<PathBuf> {
        let with = |s: &str| PathBuf::from(format!("{}{s}", self.db.display()));
        vec![self.db.clone(), with("-wal"), with("-shm"), with(".sock")]
    }

    /// The scene of a command run in the working directory.
    pub fn scene(&self) -> partner::gate::Scene {
        partner::gate::Scene::new(&self.home, &self.work).protecting(self.own_files())
    }

    fn door(&mut self, name: &'static str, address: String) -> Arc<AtomicUsize> {
        let reached = Arc::new(AtomicUsize::new(0));
        self.doors.push(Door {
            name,
            address,
            reached: Arc::clone(&reached),
        });
        reached
    }

    fn open_doors(&mut self) {
        let daemon = PathBuf::from(format!("{}.sock", self.db.display()));
        self.unix("the partner's daemon socket", &daemon);
        let in_work = self.work.join("app.sock");
        self.unix("a socket in the working directory", &in_work);
        let other = self.root.join("run").join("postgres.sock");
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        self.unix("another service's socket", &other);
        self.abstract_unix();
        self.tcp("127.0.0.1:0", "TCP on 127.0.0.1");
        self.tcp("[::1]:0", "TCP on ::1");
        self.udp();
    }

    fn unix(&mut self, name: &'static str, path: &Path) {
        let listener = UnixListener::bind(path).unwrap();
        listener.set_nonblocking(true).unwrap();
        let reached = self.door(name, path.display().to_string());
        let stop = Arc::clone(&self.stop);
        std::thread::spawn(move || {
            accept_all(stop, reached, move || listener.accept().map(|s| s.0))
        });
    }

    fn abstract_unix(&mut self) {
        use std::os::linux::net::SocketAddrExt;
        let name = format!(
            "partner-test-{}",
            std::process::id() as u64 * 1_000_003
                + std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .subsec_nanos() as u64
        );
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let listener = UnixListener::bind_addr(&addr).unwrap();
        listener.set_nonblocking(true).unwrap();
        let reached = self.door("an abstract socket", name);
        let stop = Arc::clone(&self.stop);
        std::thread::spawn(move || {
            accept_all(stop, reached, move || listener.accept().map(|s| s.0))
        });
    }

    fn tcp(&mut self, bind: &str, name: &'static str) {
        let Ok(listener) = std::net::TcpListener::bind(bind) else {
            return;
        };
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let reached = self.door(name, format!("{} {}", addr.ip(), addr.port()));
        let stop = Arc::clone(&self.stop);
        std::thread::spawn(move || {
            accept_all(stop, reached, move || listener.accept().map(|s| s.0))
        });
    }

    fn udp(&mut self) {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let port = socket.local_addr().unwrap().port();
        let reached = self.door("UDP on 127.0.0.1", format!("127.0.0.1 {port}"));
        let stop = Arc::clone(&self.stop);
        std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            while !stop.load(Ordering::SeqCst) {
                if socket.recv(&mut buf).is_ok() {
                    reached.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
    }

    /// The address of the door named `name`.
    pub fn address(&self, name: &str) -> String {
        self.doors
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.address.clone())
            .unwrap_or_else(|| panic!("no door {name}"))
    }

    /// Forgets who knocked so far.
    pub fn forget_knocks(&self) {
        for d in &self.doors {
            d.reached.store(0, Ordering::SeqCst);
        }
    }

    /// The doors someone came through, and how many times.
    pub fn reached(&self) -> Vec<(&'static str, usize)> {
        std::thread::sleep(Duration::from_millis(100));
        self.doors
            .iter()
            .map(|d| (d.name, d.reached.load(Ordering::SeqCst)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

/// Accepts (and reads a little from) every connection until stopped,
/// counting them.
fn accept_all<S: Read>(
    stop: Arc<AtomicBool>,
    reached: Arc<AtomicUsize>,
    mut accept: impl FnMut() -> std::io::Result<S>,
) {
    while !stop.load(Ordering::SeqCst) {
        match accept() {
            Ok(mut stream) => {
                reached.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 64];
                let _ = stream.read(&mut buf);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}
