//! The sandbox's seccomp filters: the system calls an approved command
//! never needs and an attacker would. Always refused: sockets of the
//! local family (`AF_UNIX`, so no path-named or abstract socket can be
//! reached — `socketpair` stays), io_uring, ptrace and reading or writing
//! other processes' memory, `userfaultfd`, `perf_event_open`, `bpf`, the
//! kernel keyring, mounts and new namespaces, typing into a terminal
//! (`TIOCSTI`, `TIOCLINUX`), kernel modules, `kexec`, `reboot`, swap,
//! `acct`, the kernel log and file handles; x32 calls, and any call of
//! another architecture (32-bit) ends the process. With the network off
//! no socket can be made at all, and `connect`, `bind`, `listen` and
//! `accept` are refused; with it on, only IPv4, IPv6 and routing netlink
//! sockets can be. `clone3` answers "not implemented", so the C library
//! falls back to `clone`, whose namespace flags the filter can see.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, sock_filter,
};

/// System calls refused whatever the network, each outright.
const REFUSED: &[libc::c_long] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_userfaultfd,
    libc::SYS_perf_event_open,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_syslog,
    libc::SYS_quotactl,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
];

/// Calls refused when the network is off (there is no socket to use them
/// on but a `socketpair`'s; refused all the same).
const NETWORK_CALLS: &[libc::c_long] = &[
    libc::SYS_connect,
    libc::SYS_bind,
    libc::SYS_listen,
    libc::SYS_accept,
    libc::SYS_accept4,
];

/// The namespace flags a `clone` may not carry.
const NEW_NAMESPACES: &[u64] = &[
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
    0x80, // CLONE_NEWTIME
];

/// x32 system calls are numbered from here (same architecture word).
const X32_BIT: u32 = 0x4000_0000;

/// The filters, in the order they are installed.
pub(super) fn filters(network: bool) -> Result<Vec<BpfProgram>, String> {
    Ok(vec![refusals(network)?, no_clone3()?])
}

fn arch() -> Result<seccompiler::TargetArch, String> {
    std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| e.to_string())
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

/// The rules under which `socket` is refused.
fn socket_rules(network: bool) -> Result<Vec<SeccompRule>, String> {
    use SeccompCmpArgLen::Dword;
    use SeccompCmpOp::{Eq, Ne};
    if !network {
        return Ok(Vec::new());
    }
    let family = |op, f: i32| cond(0, Dword, op, f as u64);
    Ok(vec![
        // Any family but the internet's and routing netlink.
        rule(vec![
            family(Ne, libc::AF_INET)?,
            family(Ne, libc::AF_INET6)?,
            family(Ne, libc::AF_NETLINK)?,
        ])?,
        // Netlink only for routes (what looking up a name asks).
        rule(vec![
            family(Eq, libc::AF_NETLINK)?,
            cond(2, Dword, Ne, libc::NETLINK_ROUTE as u64)?,
        ])?,
    ])
}

/// The filter that answers `EPERM`.
fn refusals(network: bool) -> Result<BpfProgram, String> {
    use SeccompCmpArgLen::{Dword, Qword};
    use SeccompCmpOp::{Eq, MaskedEq};
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in REFUSED {
        rules.insert(*call, Vec::new());
    }
    rules.insert(libc::SYS_socket, socket_rules(network)?);
    if !network {
        for call in NETWORK_CALLS {
            rules.insert(*call, Vec::new());
        }
    }
    let clone = NEW_NAMESPACES
        .iter()
        .map(|flag| rule(vec![cond(0, Qword, MaskedEq(*flag), *flag)?]))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone);
    let ioctl = [libc::TIOCSTI, libc::TIOCLINUX]
        .iter()
        .map(|cmd| rule(vec![cond(1, Dword, Eq, *cmd)?]))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctl);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch()?,
    )
    .map_err(|e| e.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    Ok(refuse_x32(program))
}

/// `clone3` answers `ENOSYS`, so the C library uses `clone`.
fn no_clone3() -> Result<BpfProgram, String> {
    let rules = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch()?,
    )
    .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

/// The program with x32 calls refused right after its architecture
/// check (the first three instructions; nothing jumps across them).
fn refuse_x32(program: BpfProgram) -> BpfProgram {
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JGE_K: u16 = 0x05 | 0x30;
    const BPF_RET_K: u16 = 0x06;
    const NR_OFFSET: u32 = 0;
    let guard = [
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: NR_OFFSET,
        },
        sock_filter {
            code: BPF_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
    ];
    let mut out = Vec::with_capacity(program.len() + guard.len());
    out.extend_from_slice(&program[..3.min(program.len())]);
    out.extend_from_slice(&guard);
    out.extend_from_slice(&program[3.min(program.len())..]);
    out
}

/// Installs `filters` on the calling thread (between fork and exec; no
/// new privileges is set first, as seccomp requires).
pub(super) fn install(filters: &[BpfProgram]) -> std::io::Result<()> {
    for filter in filters {
        seccompiler::apply_filter(filter).map_err(|e| std::io::Error::other(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_x32_guard_follows_the_architecture_check() {
        let program = refusals(false).unwrap();
        // The architecture check: load, compare, kill.
        assert_eq!(program[0].code, 0x20);
        assert_eq!(program[2].k, libc::SECCOMP_RET_KILL_PROCESS);
        assert_eq!(program[4].k, X32_BIT);
        assert_eq!(program[5].k, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
    }
}
