//! The partner console: a full-screen terminal view over a running
//! constellation.

pub mod highlight;
pub mod keymap;
pub mod theme;
