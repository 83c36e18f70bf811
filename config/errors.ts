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
