//! The systemd user unit that runs `roster-notify` (`systemctl --user
//! enable --now roster-notify`): the one text the Debian package, the
//! tarball and `cargo xtask install` ship, each with the path its binary
//! is installed at.

/// The unit's file name.
pub const UNIT_NAME: &str = "roster-notify.service";

/// The unit, starting `executable` (an absolute path, or a bare name
/// systemd looks up in its own fixed search path: /usr/local/bin, /usr/bin,
/// …).
pub fn user_unit(executable: &str) -> String {
    format!(
        "[Unit]\n\
         Description=roster-notify: tell when an agent session waits for you\n\
         Documentation=man:roster-notify(1)\n\
         # The desktop backend needs the session bus; notices wait for it.\n\
         After=dbus.socket graphical-session.target\n\
         PartOf=graphical-session.target\n\
         \n\
         [Service]\n\
         ExecStart={executable}\n\
         # Stopped with SIGTERM, which ends it cleanly (exit 0).\n\
         Restart=on-failure\n\
         RestartSec=5\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_starts_the_binary_given_and_is_wanted_by_the_default_target() {
        let unit = user_unit("/usr/bin/roster-notify");
        assert!(unit.contains("\nExecStart=/usr/bin/roster-notify\n"), "{unit}");
        assert!(unit.contains("\nWantedBy=default.target\n"), "{unit}");
    }
}
