//! The escape suite: approved commands that try, as an attacker would, to
//! act outside their sandbox — through sockets (the partner's daemon,
//! PostgreSQL's, a tmux server's, abstract, loopback), signals, terminals,
//! links, `/proc`, build tools' directories, the environment, ptrace,
//! namespaces, mounts, io_uring, `userfaultfd`, `keyctl`, `bpf` and more.
//! Each one must fail, and each is checked from outside too: no door was
//! knocked on, no secret came back, no file outside changed, no process
//! outside was touched. Every wall is required: a machine that lacks one
//! fails the suite rather than skipping it.
//!
//! The suite runs twice: with every wall, and without namespaces — where
//! Landlock and seccomp alone must still stop every attempt marked
//! `second_wall`.

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

use partner::gate::process::{RunOptions, run};
use partner::gate::sandbox::{self, Plan, Walls};

use crate::support::sandbox::{SECRET, World};

/// One try at getting out.
struct Attempt {
    /// What it tries.
    name: &'static str,
    /// The command; it prints ESCAPED if what it tried worked.
    command: String,
    /// Landlock and seccomp alone stop it (without namespaces).
    second_wall: bool,
    /// What it must print (a control that shows it really ran).
    prints: Option<&'static str>,
    /// Harmless to try with no wall at all, where it must get out (which
    /// shows the suite would see it getting out).
    control: bool,
}

fn attempt(name: &'static str, command: String) -> Attempt {
    Attempt {
        name,
        command,
        second_wall: true,
        prints: None,
        control: false,
    }
}

/// An attempt also tried with no wall, where it must get out.
fn control(name: &'static str, command: String) -> Attempt {
    Attempt {
        control: true,
        ..attempt(name, command)
    }
}

const PY: &str = "/usr/bin/python3 -c";

/// A process outside every sandbox, with a secret in its environment.
fn sleeper() -> Child {
    Command::new("sleep")
        .arg("600")
        .env("SLEEPER_SECRET", SECRET)
        .spawn()
        .unwrap()
}

/// Whether `pid` runs and is not stopped.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, r)| r.trim().chars().next())
        })
        .is_some_and(|state| state != 'T' && state != 'Z' && state != 't')
}

/// A pseudo-terminal this process holds: its master and the slave's path.
fn pty() -> (std::fs::File, String) {
    // SAFETY: posix_openpt/grantpt/unlockpt/ptsname_r on a descriptor we
    // own and a buffer on the stack.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_NONBLOCK);
        assert!(master >= 0);
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        use std::os::fd::FromRawFd;
        (std::fs::File::from_raw_fd(master), path)
    }
}

/// A block device of this machine, if it has one.
fn disk() -> Option<String> {
    std::fs::read_dir("/sys/block")
        .ok()?
        .flatten()
        .map(|e| format!("/dev/{}", e.file_name().to_string_lossy()))
        .find(|p| std::path::Path::new(p).exists() && !p.contains("loop") && !p.contains("ram"))
}

/// The places an attempt names: the world's doors and paths, the process
/// and terminal outside, the tmux server and the host's `/tmp` file.
struct Places {
    daemon: String,
    work_sock: String,
    other: String,
    abstract_name: String,
    tcp_host: String,
    tcp_port: String,
    udp_port: String,
    home: String,
    work: String,
    outside: String,
    db: String,
    sleeper: u32,
    pts: String,
    tmux: String,
    host_tmp: String,
}

impl Places {
    fn of(w: &World, sleeper: u32, pts: &str, tmux: &str, host_tmp: &str) -> Places {
        let tcp = w.address("TCP on 127.0.0.1");
        let (tcp_host, tcp_port) = tcp.split_once(' ').unwrap();
        let udp = w.address("UDP on 127.0.0.1");
        Places {
            daemon: w.address("the partner's daemon socket"),
            work_sock: w.address("a socket in the working directory"),
            other: w.address("another service's socket"),
            abstract_name: w.address("an abstract socket"),
            tcp_host: tcp_host.to_string(),
            tcp_port: tcp_port.to_string(),
            udp_port: udp.split_once(' ').unwrap().1.to_string(),
            home: w.home.display().to_string(),
            work: w.work.display().to_string(),
            outside: w.outside.display().to_string(),
            db: w.db.display().to_string(),
            sleeper,
            pts: pts.to_string(),
            tmux: tmux.to_string(),
            host_tmp: host_tmp.to_string(),
        }
    }
}

/// A Python connection to the Unix socket at `path`.
fn unix(path: &str) -> String {
    format!(
        "{PY} 'import socket;s=socket.socket(socket.AF_UNIX);s.connect(\"{path}\");s.send(b\"hello\");print(\"ESCAPED\")'"
    )
}

/// A raw system call `nr` with `args`, through Python's ctypes.
fn syscall(nr: &str, args: &str) -> String {
    format!(
        "{PY} 'import ctypes;l=ctypes.CDLL(None,use_errno=True);r=l.syscall({nr}{args});print(\"ESCAPED\" if r>=0 else \"refused\")'"
    )
}

/// Sockets: the daemon's, others', abstract, loopback, netlink, packet.
fn socket_attempts(p: &Places) -> Vec<Attempt> {
    let Places {
        daemon,
        work_sock,
        other,
        abstract_name,
        tcp_host,
        tcp_port,
        udp_port,
        outside,
        tmux,
        ..
    } = p;
    vec![
        control("the daemon's socket (python)", unix(daemon)),
        control(
            "the daemon's socket (socat)",
            format!("echo '{{\"op\":\"hello\"}}' | socat - UNIX-CONNECT:{daemon} && echo ESCAPED"),
        ),
        control(
            "the daemon's socket (perl)",
            format!(
                "perl -MIO::Socket::UNIX -e '$s=IO::Socket::UNIX->new(Peer=>\"{daemon}\") or exit 1; print \"ESCAPED\\n\"'"
            ),
        ),
        control("a socket in the working directory", unix(work_sock)),
        control("another service's socket", unix(other)),
        control(
            "an abstract socket",
            format!(
                "{PY} 'import socket;s=socket.socket(socket.AF_UNIX);s.connect(\"\\0{abstract_name}\");print(\"ESCAPED\")'"
            ),
        ),
        attempt(
            "PostgreSQL's socket",
            "psql -h /var/run/postgresql -d test -Atc \"select 'ESC'||'APED'\"".into(),
        ),
        control(
            "a tmux server's socket",
            format!("tmux -S {tmux} run-shell 'touch {outside}/pwned' && echo ESCAPED"),
        ),
        attempt(
            "the default tmux server",
            format!("tmux run-shell 'touch {outside}/pwned' && echo ESCAPED"),
        ),
        control(
            "TCP to loopback (bash /dev/tcp)",
            format!("echo x > /dev/tcp/{tcp_host}/{tcp_port} && echo ESCAPED"),
        ),
        control(
            "TCP to loopback (python)",
            format!(
                "{PY} 'import socket;socket.create_connection((\"{tcp_host}\",{tcp_port}),2);print(\"ESCAPED\")'"
            ),
        ),
        control(
            "UDP to loopback",
            format!(
                "{PY} 'import socket;s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.sendto(b\"x\",(\"127.0.0.1\",{udp_port}));print(\"ESCAPED\")'"
            ),
        ),
        attempt(
            "a netlink socket for kernel events",
            format!(
                "{PY} 'import socket;socket.socket(socket.AF_NETLINK,socket.SOCK_DGRAM,15);print(\"ESCAPED\")'"
            ),
        ),
        attempt(
            "a packet socket",
            format!(
                "{PY} 'import socket;socket.socket(socket.AF_PACKET,socket.SOCK_RAW);print(\"ESCAPED\")'"
            ),
        ),
        Attempt {
            prints: Some("PAIR-OK"),
            ..attempt(
                "a socketpair still works",
                format!(
                    "{PY} 'import socket;a,b=socket.socketpair();a.send(b\"PAIR-OK\");print(b.recv(7).decode())'"
                ),
            )
        },
    ]
}

/// Processes and terminals: signals out, leftovers, typing and writing
/// into the partner's terminal.
fn process_attempts(p: &Places) -> Vec<Attempt> {
    let Places {
        sleeper, work, pts, ..
    } = p;
    vec![
        attempt(
            "stopping a process outside",
            format!("kill -STOP {sleeper} && echo ESCAPED"),
        ),
        attempt(
            "killing a process outside",
            format!("kill -9 {sleeper} && echo ESCAPED"),
        ),
        Attempt {
            second_wall: false,
            ..attempt("killing every process", "kill -9 -1; sleep 0.2".into())
        },
        attempt(
            "a leftover started with setsid",
            format!("setsid sh -c 'sleep 2; touch {work}/late' >/dev/null 2>&1 &"),
        ),
        attempt(
            "typing into the terminal (TIOCSTI on /dev/tty)",
            format!(
                "{PY} 'import fcntl,termios;f=open(\"/dev/tty\",\"w\");fcntl.ioctl(f,termios.TIOCSTI,b\"a\");print(\"ESCAPED\")'"
            ),
        ),
        attempt(
            "typing into the partner's terminal (TIOCSTI on its pty)",
            format!(
                "{PY} 'import fcntl,termios;f=open(\"{pts}\",\"w\");fcntl.ioctl(f,termios.TIOCSTI,b\"a\");print(\"ESCAPED\")'"
            ),
        ),
        attempt(
            "taking the partner's terminal as its own",
            format!(
                "{PY} 'import os,fcntl,termios;os.setsid();fd=os.open(\"{pts}\",os.O_RDWR);fcntl.ioctl(fd,termios.TIOCSCTTY,1);print(\"ESCAPED\")'"
            ),
        ),
        attempt(
            "writing to the partner's terminal",
            format!("echo pwned > {pts} && echo ESCAPED"),
        ),
    ]
}

/// Files: secrets through links and `/proc`, the partner's files, build
/// tools' directories, start-up files, outside, devices.
fn file_attempts(p: &Places) -> Vec<Attempt> {
    let Places {
        home,
        work,
        outside,
        db,
        sleeper,
        host_tmp,
        ..
    } = p;
    vec![
        control(
            "the key through /proc/self/cwd",
            "cat /proc/self/cwd/../.ssh/id_rsa".into(),
        ),
        attempt(
            "the key through /proc/1/root",
            format!("cat /proc/1/root{home}/.ssh/id_rsa"),
        ),
        control(
            "the key through a link planted in the working directory",
            format!("ln -sfn {home}/.ssh keys; cat keys/id_rsa"),
        ),
        attempt(
            "the key through a hard link",
            format!("ln {home}/.ssh/id_rsa hard && cat hard"),
        ),
        control(
            "another process's environment",
            format!("cat /proc/{sleeper}/environ"),
        ),
        attempt(
            "another process's memory",
            format!("{PY} 'open(\"/proc/{sleeper}/mem\",\"rb\");print(\"ESCAPED\")'"),
        ),
        control("the partner's database", format!("cat {db}")),
        attempt(
            "writing the partner's database",
            format!("echo x >> {db} && echo ESCAPED"),
        ),
        control("cloud credentials", format!("cat {home}/.aws/credentials")),
        control("stored passwords", format!("cat {home}/.netrc")),
        control(
            "the partner's data directory",
            format!("cat {home}/.local/share/partner/x.db"),
        ),
        control(
            "cargo's credentials, cargo named",
            format!("cargo --version >/dev/null 2>&1; cat {home}/.cargo/credentials.toml"),
        ),
        attempt(
            "cargo's configuration, cargo named",
            format!(
                "cargo --version >/dev/null 2>&1; echo '[build]' >> {home}/.cargo/config.toml && echo ESCAPED"
            ),
        ),
        attempt(
            "the partner's data through pip's grant",
            format!(
                "pip --version >/dev/null 2>&1; echo x > {home}/.local/share/partner/y && echo ESCAPED"
            ),
        ),
        control(
            "a start-up file",
            format!("echo evil >> {home}/.bashrc && echo ESCAPED"),
        ),
        control(
            "writing outside the working directory",
            format!("touch {outside}/pwned && echo ESCAPED"),
        ),
        attempt(
            "writing the system",
            "touch /etc/partner-pwned && echo ESCAPED".into(),
        ),
        attempt(
            "the machine's memory",
            format!("{PY} 'open(\"/dev/mem\",\"rb\");print(\"ESCAPED\")'"),
        ),
        attempt(
            "making a device",
            format!("mknod {work}/disk b 254 0 && echo ESCAPED"),
        ),
        Attempt {
            second_wall: false,
            ..attempt("the host's /tmp", format!("cat {host_tmp}"))
        },
    ]
}

/// The kernel: namespaces, mounts, ptrace, io_uring and other calls,
/// capabilities, the environment, cgroups, settings.
fn kernel_attempts(p: &Places) -> Vec<Attempt> {
    let Places { work, sleeper, .. } = p;
    vec![
        attempt(
            "a new user namespace",
            "unshare -r true && echo ESCAPED".into(),
        ),
        attempt(
            "a new mount namespace",
            "unshare -m true && echo ESCAPED".into(),
        ),
        attempt(
            "unmounting what hides /run",
            "umount -l /run && echo ESCAPED".into(),
        ),
        attempt(
            "mounting over the working directory",
            format!("mount -t tmpfs none {work} && echo ESCAPED"),
        ),
        attempt(
            "entering the host's namespaces",
            "nsenter -t 1 -m -p true && echo ESCAPED".into(),
        ),
        attempt("chroot", "chroot / true && echo ESCAPED".into()),
        attempt(
            "ptrace",
            "strace -f -o /dev/null true && echo ESCAPED".into(),
        ),
        attempt(
            "io_uring",
            syscall("425", ",8,ctypes.create_string_buffer(120)"),
        ),
        attempt("userfaultfd", syscall("323", ",0")),
        attempt("the kernel keyring", syscall("250", ",0,-3,0")),
        attempt(
            "bpf",
            syscall("321", ",0,ctypes.create_string_buffer(64),64"),
        ),
        attempt(
            "perf_event_open",
            syscall("298", ",ctypes.create_string_buffer(128),0,-1,-1,0"),
        ),
        attempt(
            "another process's memory (process_vm_readv)",
            syscall("310", &format!(",{sleeper},0,0,0,0,0")),
        ),
        attempt("an x32 system call", syscall("0x40000027", "")),
        attempt(
            "capabilities",
            "grep -q 'CapEff:.0000000000000000' /proc/self/status || echo ESCAPED".into(),
        ),
        attempt(
            "the partner's environment",
            "env | grep -E '^(CARGO_|PARTNER_|RUST|OPENAI|ANTHROPIC)' && echo ESCAPED".into(),
        ),
        attempt(
            "leaving its cgroup",
            "echo $$ > /sys/fs/cgroup/cgroup.procs && echo ESCAPED".into(),
        ),
        attempt(
            "the kernel log",
            "dmesg >/dev/null 2>&1 && echo ESCAPED".into(),
        ),
        attempt(
            "a kernel setting",
            "echo 1 > /proc/sys/kernel/sysrq && echo ESCAPED".into(),
        ),
        attempt(
            "the host name",
            "hostname pwned 2>/dev/null && echo ESCAPED".into(),
        ),
    ]
}

/// Every attempt, with the world's places filled in.
fn attempts(w: &World, sleeper: u32, pts: &str, tmux: &str, host_tmp: &str) -> Vec<Attempt> {
    let places = Places::of(w, sleeper, pts, tmux, host_tmp);
    let mut all = socket_attempts(&places);
    all.extend(process_attempts(&places));
    all.extend(file_attempts(&places));
    all.extend(kernel_attempts(&places));
    if let Some(disk) = disk() {
        all.push(attempt(
            "a disk",
            format!("{PY} 'open(\"{disk}\",\"rb\").read(1);print(\"ESCAPED\")'"),
        ));
    }
    all
}

/// What one attempt left behind that it should not have (empty when it
/// was stopped); the world is put back as it was for the next one.
fn breaches(w: &World, a: &Attempt, output: &str, sleeper: u32) -> Vec<String> {
    let mut found = Vec::new();
    if output.contains("ESCAPED") {
        found.push("it said it got out".into());
    }
    if output.contains(SECRET) {
        found.push("a secret came back".into());
    }
    if !output.contains("RAN-42") {
        found.push("it did not run to its end".into());
    }
    if let Some(text) = a.prints
        && !output.contains(text)
    {
        found.push(format!("the control did not print {text}"));
    }
    for (door, n) in w.reached() {
        found.push(format!("{door} was reached {n} time(s)"));
    }
    w.forget_knocks();
    if !running(sleeper) {
        found.push("the process outside was stopped or killed".into());
    }
    for (path, want) in [
        (w.home.join(".bashrc"), "# bashrc\n"),
        (w.home.join(".cargo/config.toml"), "# config\n"),
        (w.db.clone(), SECRET),
    ] {
        if std::fs::read_to_string(&path).ok().as_deref() != Some(want) {
            found.push(format!("{} changed", path.display()));
            std::fs::write(&path, want).unwrap();
        }
    }
    for path in [
        w.outside.join("pwned"),
        PathBuf::from("/etc/partner-pwned"),
        w.home.join(".local/share/partner/y"),
    ] {
        if path.exists() {
            found.push(format!("{} was written", path.display()));
            let _ = std::fs::remove_file(&path);
        }
    }
    found
}

/// The world's outside parts: a process, a terminal, a tmux server and a
/// file in the host's `/tmp`.
struct Outside {
    sleeper: Child,
    master: std::fs::File,
    pts: String,
    tmux: PathBuf,
    host_tmp: PathBuf,
}

impl Outside {
    fn new(w: &World) -> Outside {
        let sleeper = sleeper();
        let (master, pts) = pty();
        let tmux = w.root.join("tmux.sock");
        let started = Command::new("tmux")
            .args([
                "-S",
                tmux.to_str().unwrap(),
                "new-session",
                "-d",
                "sleep 600",
            ])
            .status()
            .unwrap();
        assert!(started.success(), "the test's tmux server did not start");
        let host_tmp = std::env::temp_dir().join(format!(
            "partner-host-secret-{}",
            w.root.file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&host_tmp, SECRET).unwrap();
        Outside {
            sleeper,
            master,
            pts,
            tmux,
            host_tmp,
        }
    }

    /// What reached the terminal partner holds.
    fn typed(&self) -> Option<String> {
        let mut typed = [0u8; 64];
        // SAFETY: read(2) into a stack buffer from the non-blocking master.
        let n = unsafe {
            libc::read(
                self.master.as_raw_fd(),
                typed.as_mut_ptr().cast(),
                typed.len(),
            )
        };
        (n > 0).then(|| String::from_utf8_lossy(&typed[..n as usize]).into_owned())
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-S", self.tmux.to_str().unwrap(), "kill-server"])
            .status();
        let _ = self.sleeper.kill();
        let _ = self.sleeper.wait();
        let _ = std::fs::remove_file(&self.host_tmp);
    }
}

/// Runs every attempt `only` keeps behind `walls` (with none: no sandbox
/// at all); how many were tried, and what each left behind.
fn try_each(
    walls: Option<&Walls>,
    only: fn(&Attempt) -> bool,
) -> (usize, Vec<(String, Vec<String>)>) {
    let w = World::new();
    let outside = Outside::new(&w);
    let scene = w.scene();
    let list = attempts(
        &w,
        outside.sleeper.id(),
        &outside.pts,
        outside.tmux.to_str().unwrap(),
        outside.host_tmp.to_str().unwrap(),
    );
    let mut results = Vec::new();
    for a in list.iter().filter(|a| only(a)) {
        let command = format!("{}\necho \"RAN-$((40 + 2))\"", a.command);
        let plan = Plan::for_command(&command, &scene);
        let ran = run(
            &command,
            &RunOptions {
                dir: &w.work,
                timeout: Duration::from_secs(20),
                cap: 64 * 1024,
                cancel: None,
                sandbox: walls.map(|_| (&plan, &scene)),
                walls,
                cgroup: true,
            },
        )
        .unwrap_or_else(|e| panic!("{}: could not run: {e}", a.name));
        let output = format!("{}{}", ran.stdout, ran.stderr);
        let mut found = breaches(&w, a, &output, outside.sleeper.id());
        if let Some(text) = outside.typed() {
            found.push(format!("the partner's terminal received {text:?}"));
        }
        found
            .iter_mut()
            .for_each(|f| f.push_str(&format!(" [{}]", output.trim())));
        results.push((a.name.to_string(), found));
    }
    // The leftover's two seconds, then its mark.
    if walls.is_some() {
        std::thread::sleep(Duration::from_secs(3));
        if w.work.join("late").exists() {
            results.push((
                "a leftover started with setsid".into(),
                vec!["it outlived its command".into()],
            ));
        }
    }
    (results.len(), results)
}

/// The attempts that got out, one line each.
fn escaped(results: &[(String, Vec<String>)]) -> Vec<String> {
    results
        .iter()
        .filter(|(_, found)| !found.is_empty())
        .map(|(name, found)| format!("{name}: {}", found.join("; ")))
        .collect()
}

/// The number of attempts the suite makes (the README and SECURITY.md
/// give it).
const ATTEMPTS_AT_LEAST: usize = 64;

#[test]
fn no_attempt_gets_out_from_behind_every_wall() {
    let walls = sandbox::walls();
    assert!(
        walls.complete(),
        "this machine must raise every wall: {:?}",
        walls.missing()
    );
    let (tried, results) = try_each(Some(&walls), |_| true);
    assert!(tried >= ATTEMPTS_AT_LEAST, "only {tried} attempts");
    let escaped = escaped(&results);
    assert!(
        escaped.is_empty(),
        "{} of {tried} attempts got out:\n{}",
        escaped.len(),
        escaped.join("\n")
    );
}

#[test]
fn landlock_and_seccomp_alone_still_stop_what_they_can() {
    let mut walls = sandbox::walls();
    assert!(walls.complete(), "{:?}", walls.missing());
    walls.namespaces = Err("left out by the test".into());
    let (tried, results) = try_each(Some(&walls), |a| a.second_wall);
    assert!(tried >= 62, "only {tried} attempts");
    let escaped = escaped(&results);
    assert!(
        escaped.is_empty(),
        "{} of {tried} attempts got out past Landlock and seccomp:\n{}",
        escaped.len(),
        escaped.join("\n")
    );
}

/// The suite sees an escape when there is one: the attempts harmless to
/// make with no sandbox at all each get out there.
#[test]
fn without_a_sandbox_the_controls_get_out() {
    let (tried, results) = try_each(None, |a| a.control);
    assert!(tried >= 20, "only {tried} controls");
    let stayed: Vec<&String> = results
        .iter()
        .filter(|(_, found)| found.is_empty())
        .map(|(name, _)| name)
        .collect();
    assert!(
        stayed.is_empty(),
        "these attempts did nothing even unsandboxed, so the suite cannot tell: {stayed:?}"
    );
    // The environment attempt is meaningful: the test's own has such names.
    assert!(std::env::vars().any(|(k, _)| k.starts_with("CARGO_")));
}
