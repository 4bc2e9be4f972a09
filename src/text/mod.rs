//! Small text helpers shared by messages everywhere.

pub mod duration;
