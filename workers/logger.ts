/**
 * The process's one logger (pino): JSON lines for log collectors, or pino-pretty's readable lines on a terminal.
 * Temporal's runtime logs (worker lifecycle, workflow and activity context loggers, the native core's forwarded
 * logs) go through it too, carrying their workflow id, activity type and the kit's job id.
 *
 * Secrets never reach the output: fields named like credentials are redacted, and as a last line every known secret
 * value (the API key, webhook secrets, the Temporal API key, payload keys) is cut out of each serialized line, so a
 * secret that slipped into an error message or a URL is removed too.
 */
import type { Logger, LogLevel, LogMetadata } from '@temporalio/common';
import { type Logger as Pino, pino, stdSerializers } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevelName } from '../config/observability.ts';

export type { Pino };

export interface LoggerOptions {
  level: LogLevelName;
  format: 'json' | 'pretty';
  /** Values that must never be written (shorter than 4 characters are ignored: they would shred the text). */
  secrets?: readonly string[];
  /** Defaults to stderr (stdout carries command results). */
  destination?: NodeJS.WritableStream;
}

const REDACTED_KEYS = [
  'apiKey',
  'secret',
  'secrets',
  'authorization',
  'password',
  '*.apiKey',
  '*.secret',
  '*.secrets',
  '*.authorization',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
];

export function scrubber(secrets: readonly string[]): (text: string) => string {
  const values = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const value of values) if (out.includes(value)) out = out.split(value).join('[redacted]');
    return out;
  };
}

export function createLogger(options: LoggerOptions): Pino {
  const scrub = scrubber(options.secrets ?? []);
  const destination =
    options.format === 'pretty'
      ? pretty({ destination: 2, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
      : (options.destination ?? pino.destination({ fd: 2, sync: true }));
  return pino(
    {
      level: options.level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: stdSerializers.err, error: stdSerializers.err },
      redact: { paths: REDACTED_KEYS, censor: '[redacted]' },
      hooks: { streamWrite: scrub },
    },
    destination,
  );
}

const LEVELS: Record<LogLevel, LogLevelName> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * SDK warnings about a setup the kit chose on purpose, written at debug level instead: the API queue's worker runs
 * activities only, so its workflow poller is off by design.
 */
const EXPECTED_WARNINGS = new Set(['No workflows registered, not polling for workflow tasks']);

/** Temporal's own words for a failure it wraps: the reason is the cause under them. */
const WRAPPER_MESSAGES = new Set(['Activity task failed', 'Child Workflow execution failed']);

/**
 * The reason under Temporal's wrappers of a logged failure ("Workflow failed" carries "Activity task failed"), so the
 * line says what the kit said (the file, the row or byte, the fix). By message, not class: a workflow's error reaches
 * the logger copied out of its sandbox, a plain `Error` with its causes.
 */
export function reasonUnder(error: unknown): string | undefined {
  let current = error as { message?: unknown; cause?: unknown } | undefined;
  while (current && WRAPPER_MESSAGES.has(String(current.message)) && typeof current.cause === 'object')
    current = current.cause as typeof current;
  return current !== error && typeof current?.message === 'string' ? current.message : undefined;
}

/**
 * Temporal's `Logger` over pino. The activity task token is dropped: long, opaque and useless to a reader. A failure
 * Temporal wrapped gets its `reason`.
 */
export function temporalLogger(logger: Pino): Logger {
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const { taskToken: _token, ...fields } = meta ?? {};
    const reason = reasonUnder(fields['error']);
    if (reason !== undefined) fields['reason'] = reason;
    const name = level === 'WARN' && EXPECTED_WARNINGS.has(message) ? 'debug' : (LEVELS[level] ?? 'info');
    logger[name](fields, message);
  };
  return {
    log: write,
    trace: (message, meta) => write('TRACE', message, meta),
    debug: (message, meta) => write('DEBUG', message, meta),
    info: (message, meta) => write('INFO', message, meta),
    warn: (message, meta) => write('WARN', message, meta),
    error: (message, meta) => write('ERROR', message, meta),
  };
}
