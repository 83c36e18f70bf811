import type { Sandbox } from '../../sandbox/index.ts';
import type { DrillInput } from '../../testkit/drill-input.ts';
import type { Line } from '../../testkit/job-output.ts';
import { enrichIdeal } from '../promises/oracle.ts';

/**
 * The distinct domains a drill input's answering lines carry: its domains, and the domains the sandbox resolves its
 * rows enriched by company name to (rows named after no company would answer `not_found` with no domain: none here).
 */
export function answeredDomains(sandbox: Sandbox, input: DrillInput): Set<string> {
  const named = input.byName.map(({ name }) => sandbox.truth.companyDomainOf({ company_name: name }));
  if (named.some((domain) => domain === null)) throw new Error('a drill row is named after no company');
  return new Set([...input.distinct, ...(named as string[])]);
}

/**
 * Holds the output of a bulk enrichment of `input` against the sandbox's truth: every `ok` line carries exactly the
 * signals that exist for its domain (the newest `limit`), every `not_found` line a domain that resolves to nothing.
 * Returns what the spec charges for the distinct domains, the rows enriched by name included (2 credits per
 * signal): the cost a drill must equal.
 */
export function enrichTruthCredits(sandbox: Sandbox, input: DrillInput, lines: Line[], limit: number): number {
  const ideal = enrichIdeal(sandbox, [...answeredDomains(sandbox, input)], { limit });
  const status = new Map(ideal.domains.map((d) => [d.domain, d.status]));
  const problems: string[] = [];
  for (const line of lines) {
    if (line['status'] === 'invalid' || line['status'] === 'duplicate') continue; // no signals of its own
    const domain = String(line['domain']);
    const ids = ((line['signals'] as { signal_id: string }[] | undefined) ?? []).map((s) => s.signal_id);
    const truth = ideal.signalIds.get(domain) ?? [];
    if (line['status'] !== status.get(domain))
      problems.push(`${domain}: ${line['status']}, truth ${status.get(domain)}`);
    else if (ids.join() !== truth.join()) problems.push(`${domain}: ${ids.length} signals, truth ${truth.length}`);
  }
  if (problems.length)
    throw new Error(`output differs from the sandbox's truth:\n  ${problems.slice(0, 10).join('\n  ')}`);
  return ideal.credits;
}
