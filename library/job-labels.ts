/**
 * What Temporal's web UI shows of a job before it runs a step: a one-line summary naming the job and its input, and
 * details listing its input, output and options, with how to read its live progress. Set once, when it starts.
 */
/** A job as `startJob` receives it (structurally: this module is imported by library/jobs.ts). */
interface LabelledJob {
  workflow: string;
  input: { jobId: string; output: string; input?: unknown; request?: { topic_ids: string[] } };
}

const KIND: Record<string, string> = {
  bulkEnrich: 'enrich',
  enrichContacts: 'enrich-contacts',
  verifyEmails: 'verify-emails',
  intentExport: 'intent-export',
};

/** The last path segment of a URL or path (`s3://b/in/crm.csv` → `crm.csv`). */
function baseName(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1) || trimmed;
}

export function jobLabels(job: LabelledJob): { staticSummary: string; staticDetails: string } {
  const kind = KIND[job.workflow] ?? job.workflow;
  const { input } = job;
  const source =
    typeof input.input === 'string'
      ? baseName(input.input)
      : input.request
        ? `topics ${input.request.topic_ids.join(', ')}`
        : '';
  const details = [
    `**${kind}** job \`${input.jobId}\``,
    '',
    ...(typeof input.input === 'string' ? [`- input: ${input.input}`] : []),
    `- output: ${input.output}/${input.jobId}/`,
    ...Object.entries(input)
      .filter(([name, value]) => !['jobId', 'input', 'output', 'carried'].includes(name) && value !== undefined)
      .map(([name, value]) => `- ${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`),
    '',
    "Progress: this page's current details, or the `progress` query (`signal-kit status " + input.jobId + '`).',
  ];
  return { staticSummary: `${kind} ${source} · job ${input.jobId}`, staticDetails: details.join('\n') };
}
