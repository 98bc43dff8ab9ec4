//! Reading this process's environment the one way every roster binary
//! does: a variable set to the empty string counts as unset.

/// Reads an environment variable of this process; a non-UTF-8 value comes
/// back lossy, so a pid check fails on it rather than skipping it. A
/// variable set to the empty string counts as unset, as `process_env_os`
/// says.
pub fn process_env(name: &str) -> Option<String> {
    process_env_os(name).map(|value| value.to_string_lossy().into_owned())
}

/// Reads an environment variable of this process, raw. The one place every
/// roster and harness variable is read: one set to the empty string counts
/// as unset (`ROSTER_AGENT=` in a wrapper script or a harness's settings
/// file is how people unset a variable), never as an invalid value.
pub fn process_env_os(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name).filter(|value| !value.is_empty())
}
