//! Radio duty cycling beneath the MAC. NullRDC (the radio always on) is no layer at all; a
//! duty-cycling layer decides when a frame's receiver can hear it and how the sender reaches
//! it (strobing), whatever MAC (`mac/`) queued the frame.

pub mod contikimac;
