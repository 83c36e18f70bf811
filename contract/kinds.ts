/**
 * The kinds of run, declared once: the manifest contract, the kinds' own types, the schedule kinds and the commands
 * read them from here. Four kinds of run write a manifest: a job (one of `JOB_KINDS`), a scheduled push run, a
 * scheduled feed run (one of `FEED_KINDS`) and a night of the CRM sync (`SYNC_KIND`).
 */
export const JOB_KINDS = ['enrich', 'verify-emails', 'intent-export', 'enrich-contacts'] as const;

export type JobKind = (typeof JOB_KINDS)[number];

export const FEED_KINDS = ['company-search', 'contact-search', 'intent-contacts'] as const;

export type FeedKind = (typeof FEED_KINDS)[number];

export const isFeedKind = (value: unknown): value is FeedKind => FEED_KINDS.some((kind) => kind === value);

/** The `kind` a sync night's manifest names. */
export const SYNC_KIND = 'crm-sync';

/** The kinds of run whose manifest the contract describes (a push run's manifest has no `kind` field). */
export const RUN_KINDS = ['job', 'push', 'feed', 'sync'] as const;

export type RunKind = (typeof RUN_KINDS)[number];
