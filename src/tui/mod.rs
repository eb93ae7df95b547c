//! The partner console: a full-screen terminal view over a running
//! constellation.

pub mod app;
pub mod backend;
pub mod command;
pub mod completion;
pub mod driver;
pub mod highlight;
pub mod keymap;
pub mod model;
pub mod panes;
pub mod prompt;
pub mod theme;
