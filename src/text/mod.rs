//! Small text helpers shared by messages everywhere.

pub(crate) mod duration;
pub(crate) mod excerpt;
