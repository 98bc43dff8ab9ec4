//! A small tmpfs that only this process and its children see: a private
//! mount namespace, so filling the disk on purpose never touches the
//! machine's own file systems and the mount vanishes with the soak.
//!
//! Must run while the process is still single-threaded: namespaces belong
//! to threads, and only threads created afterwards inherit the new one.

use std::path::Path;

use anyhow::{Context, bail};
use nix::errno::Errno;
use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::{CloneFlags, unshare};

/// Enters a private mount namespace. As root that is one `unshare`; as
/// anyone else a user namespace that maps the caller to root comes with it.
pub fn enter_private_mount_namespace() -> anyhow::Result<()> {
    match unshare(CloneFlags::CLONE_NEWNS) {
        Ok(()) => {}
        Err(Errno::EPERM) => enter_user_and_mount_namespaces()?,
        Err(errno) => bail!("unshare a mount namespace: {}", errno.desc()),
    }
    // Without this, mounts below would propagate back to the machine's
    // namespace wherever `/` is a shared mount (systemd makes it one).
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
        .map_err(|errno| anyhow::anyhow!("make / a private mount: {}", errno.desc()))
}

fn enter_user_and_mount_namespaces() -> anyhow::Result<()> {
    let uid = nix::unistd::getuid().as_raw();
    let gid = nix::unistd::getgid().as_raw();
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS).map_err(|errno| {
        anyhow::anyhow!(
            "unshare a mount namespace: not root, and no user namespace either ({}); run the soak as root",
            errno.desc()
        )
    })?;
    std::fs::write("/proc/self/setgroups", "deny").context("write /proc/self/setgroups")?;
    std::fs::write("/proc/self/uid_map", format!("0 {uid} 1")).context("write /proc/self/uid_map")?;
    std::fs::write("/proc/self/gid_map", format!("0 {gid} 1")).context("write /proc/self/gid_map")?;
    Ok(())
}

/// Mounts a tmpfs of `bytes` on `target` (an existing directory).
pub fn mount_small_tmpfs(target: &Path, bytes: u64) -> anyhow::Result<()> {
    let options = format!("size={bytes},mode=0700");
    mount(
        Some("tmpfs"),
        target,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(options.as_str()),
    )
    .map_err(|errno| anyhow::anyhow!("mount a tmpfs on {}: {}", target.display(), errno.desc()))
}

/// Detaches the tmpfs, so the directory under it can be removed.
pub fn unmount(target: &Path) {
    let _ = umount2(target, MntFlags::MNT_DETACH);
}
