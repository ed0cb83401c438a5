/**
 * The exit status of `serve`, `cluster init` or `restore` refused because the data is
 * newer than this release reads (docs/upgrading.md): apart from 1, so that a
 * supervisor can stop restarting into it (systemd's RestartPreventExitStatus=).
 */
export const formatTooNewExitStatus = 3;
