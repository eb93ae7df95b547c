//! partner's foundations, which every other crate may use and which use
//! no other partner crate: time ([`clock`]: the `Clock` trait, the system
//! and manual clocks, spans and RFC 3339), the bounds a constellation
//! configures ([`bounds`]), files only their owner may read ([`files`]),
//! work run on behalf of agents so that it cannot end the process
//! ([`isolate`]: contained panics, deep work on a big stack), the signal
//! that stops it ([`cancel`]), what search by meaning needs of an
//! embedder ([`embedder`]), and who may come in through a daemon's socket
//! ([`doorman`]: its cookie, and whether a peer runs inside a sandbox).
//!
//! It may not import anything of partner's: it is the bottom of the graph.

pub mod bounds;
pub mod cancel;
pub mod clock;
pub mod doorman;
pub mod embedder;
pub mod files;
pub mod isolate;
pub mod judged;

/// Lets a type that names itself on the wire be compared with that name:
/// `status == "executed"` reads as the JSON does.
#[macro_export]
macro_rules! wire_name_eq {
    ($type:ty, $name:ident) => {
        impl PartialEq<str> for $type {
            fn eq(&self, other: &str) -> bool {
                self.$name() == other
            }
        }
        impl PartialEq<&str> for $type {
            fn eq(&self, other: &&str) -> bool {
                self.$name() == *other
            }
        }
    };
}
