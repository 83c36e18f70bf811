/**
 * The kinds of scheduled feed, declared once: the feed's types, the manifest contract, the schedule kinds and the
 * `schedule create` command read them from here.
 */
export const FEED_KINDS = ['company-search', 'contact-search', 'intent-contacts'] as const;

export type FeedKind = (typeof FEED_KINDS)[number];

export const isFeedKind = (value: unknown): value is FeedKind => FEED_KINDS.some((kind) => kind === value);
