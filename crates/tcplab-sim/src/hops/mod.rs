//! Path components added since the first set (which live beside this
//! module): each one file behind `component::Component`.

pub mod leo;
pub mod trace;
pub mod varying;
