//! Being written: see main.rs for the entry points this module provides.
