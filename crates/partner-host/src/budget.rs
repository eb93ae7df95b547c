//! Who may hold a connection open: the owner's Unix socket and TCP each
//! have their own budget, so a flood on one cannot take the other's
//! slots; connections that have not said hello have a small budget of
//! their own per peer address, and two seconds to say it. A connection is
//! admitted into a [`Slot`] that gives its place back when dropped.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a connection has to say hello.
pub const HELLO_DEADLINE: Duration = Duration::from_secs(2);
/// Most connections over the Unix socket (the owner's alone) at once.
pub const MAX_UNIX: usize = 256;
/// Most connections over TCP at once.
pub const MAX_TCP: usize = 128;
/// Most TCP connections not yet past hello, from all peers.
pub const MAX_UNGREETED: usize = 32;
/// Most TCP connections not yet past hello from one peer address.
pub const MAX_UNGREETED_PER_PEER: usize = 8;

/// Which door a connection came through: the Unix socket, or TCP from a peer address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entrance {
    /// The Unix socket.
    Unix,
    /// TCP, from this peer address.
    Tcp(IpAddr),
}

#[derive(Default)]
struct Counts {
    unix: usize,
    tcp: usize,
    ungreeted: usize,
    ungreeted_by_peer: HashMap<IpAddr, usize>,
}

/// The daemon's connection budgets.
#[derive(Default)]
pub struct Budget {
    counts: Mutex<Counts>,
}

/// A connection's place in the budget, given back when dropped.
pub struct Slot {
    budget: Arc<Budget>,
    door: Entrance,
    greeted: bool,
}

impl Budget {
    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for a new connection through `door`, or why there is none.
    pub fn admit(self: &Arc<Self>, door: Entrance) -> Result<Slot, String> {
        let mut counts = self.counts();
        match door {
            Entrance::Unix => {
                if counts.unix >= MAX_UNIX {
                    return Err(format!(
                        "too many connections ({MAX_UNIX} are open); try again later"
                    ));
                }
                counts.unix += 1;
            }
            Entrance::Tcp(peer) => {
                let from_peer = counts.ungreeted_by_peer.get(&peer).copied().unwrap_or(0);
                if counts.tcp >= MAX_TCP {
                    return Err(format!(
                        "too many TCP connections ({MAX_TCP} are open); try again later"
                    ));
                }
                if counts.ungreeted >= MAX_UNGREETED || from_peer >= MAX_UNGREETED_PER_PEER {
                    return Err("too many connections waiting to say hello".into());
                }
                counts.tcp += 1;
                counts.ungreeted += 1;
                *counts.ungreeted_by_peer.entry(peer).or_default() += 1;
            }
        }
        Ok(Slot {
            budget: Arc::clone(self),
            door,
            greeted: false,
        })
    }

    /// Connections open now through each door: Unix, then TCP.
    #[cfg(test)]
    fn open(&self) -> (usize, usize) {
        let counts = self.counts();
        (counts.unix, counts.tcp)
    }
}

impl Counts {
    fn leave_ungreeted(&mut self, peer: IpAddr) {
        self.ungreeted = self.ungreeted.saturating_sub(1);
        if let Some(n) = self.ungreeted_by_peer.get_mut(&peer) {
            *n -= 1;
            if *n == 0 {
                self.ungreeted_by_peer.remove(&peer);
            }
        }
    }
}

impl Slot {
    /// The connection said hello: it leaves the waiting budget.
    pub fn greeted(&mut self) {
        if !self.greeted {
            self.greeted = true;
            if let Entrance::Tcp(peer) = self.door {
                self.budget.counts().leave_ungreeted(peer);
            }
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.budget.counts();
        match self.door {
            Entrance::Unix => counts.unix -= 1,
            Entrance::Tcp(peer) => {
                counts.tcp -= 1;
                if !self.greeted {
                    counts.leave_ungreeted(peer);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tcp_flood_leaves_the_unix_socket_its_slots() {
        let budget = Arc::new(Budget::default());
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        let held: Vec<_> = (0..MAX_UNGREETED_PER_PEER)
            .map(|_| budget.admit(Entrance::Tcp(peer)).unwrap())
            .collect();
        assert!(budget.admit(Entrance::Tcp(peer)).is_err());
        let other: IpAddr = "127.0.0.2".parse().unwrap();
        assert!(budget.admit(Entrance::Tcp(other)).is_ok());
        assert!(budget.admit(Entrance::Unix).is_ok());
        drop(held);
        assert_eq!(budget.open(), (0, 0));
    }

    #[test]
    fn a_greeted_connection_frees_its_waiting_place() {
        let budget = Arc::new(Budget::default());
        let peer: IpAddr = "::1".parse().unwrap();
        let mut greeted: Vec<_> = (0..MAX_UNGREETED_PER_PEER)
            .map(|_| budget.admit(Entrance::Tcp(peer)).unwrap())
            .collect();
        greeted.iter_mut().for_each(Slot::greeted);
        assert!(budget.admit(Entrance::Tcp(peer)).is_ok());
        drop(greeted);
        assert_eq!(budget.open(), (0, 0));
    }
}
