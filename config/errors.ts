/** A configuration problem, named by its setting, found before anything starts (the CLI exits 2). */
export class ConfigError extends Error {
  override readonly name: string = 'ConfigError';
}

/**
 * Temporal did not answer at the configured address. A configuration error too: the fix is almost always the
 * address, the TLS settings or the profile, so the message names the setting that chose the address.
 */
export class TemporalUnreachableError extends ConfigError {
  override readonly name = 'TemporalUnreachableError';
  readonly address: string;
  readonly source: string;
  constructor(address: string, source: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`cannot reach Temporal at ${address} (set by ${source}): ${reason}`, { cause });
    this.address = address;
    this.source = source;
  }
}

/**
 * The worker's spool directory (where paid answers the output refused wait for a re-run) is not the worker's alone:
 * another user owns it, others may write to it, or it is a symbolic link. The worker does not start; `fix` says what
 * to run (or which setting to change).
 */
export class UnsafeSpoolError extends ConfigError {
  override readonly name = 'UnsafeSpoolError';
  readonly path: string;
  readonly fix: string;
  constructor(path: string, problem: string, fix: string) {
    super(`the spool directory ${path} ${problem}: ${fix} (or set SIGNAL_KIT_SPOOL_DIR to a directory of your own)`);
    this.path = path;
    this.fix = fix;
  }
}
