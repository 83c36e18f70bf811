/**
 * Machinery shared by the fault drills (test/drills/, bench/drills/): child `signal-kit worker` processes that can
 * be killed with SIGKILL, the CLI as a child process, seeded inputs whose every row has a known fate, a recording
 * proxy in front of the sandbox (which call paid for which batch, and a gate that keeps new calls from reaching it),
 * and the checks every drill ends with: each input accounted for exactly once, every manifested part intact.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { Client } from '@temporalio/client';
import type { JobResult, Manifest } from '../../activities/jobs/types.ts';
import { openStore } from '../../connectors/storage/index.ts';
import type { Store } from '../../connectors/storage/store.ts';
import type { JobEnv } from '../../devstack/job-env.ts';
import { type ServerProcess, startProcess } from '../../devstack/process.ts';
import type { Sandbox } from '../../sandbox/index.ts';
import { enrichIdeal } from '../promises/oracle.ts';

export const repo = fileURLToPath(new URL('../../', import.meta.url));
export const cliMain = join(repo, 'cli/main.ts');

// ---------------------------------------------------------------------------------------------- seeded randomness

/** mulberry32: a small seeded PRNG, so that a drill's kill points and inputs are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const between = (random: () => number, low: number, high: number) =>
  low + Math.floor(random() * (high - low + 1));

// ---------------------------------------------------------------------------------------------- child processes

export interface ChildWorker {
  readonly pid: number;
  readonly process: ServerProcess;
  /** SIGKILL to the worker's whole process group: a crash, nothing is drained. */
  kill(): Promise<void>;
  /** SIGTERM (the worker drains), SIGKILL after the grace period. */
  stop(graceMs?: number): Promise<void>;
  output(): string;
}

/**
 * Starts `node cli/main.ts worker` in its own process group (registered, so a test that dies leaves no worker
 * behind) and resolves once it polls: the worker prints its banner after both Temporal workers are created.
 */
export async function startChildWorker(
  env: Record<string, string>,
  timeoutMs = 60_000,
  options: { args?: string[]; tailLines?: number } = {},
): Promise<ChildWorker> {
  const proc = startProcess({
    name: 'signal-kit-worker',
    command: process.execPath,
    args: [cliMain, 'worker', ...(options.args ?? [])],
    cwd: repo,
    env,
    tailLines: options.tailLines ?? 200,
  });
  const deadline = Date.now() + timeoutMs;
  while (!proc.outputTail().includes('signal-kit worker: pid')) {
    if (proc.hasExited() || Date.now() > deadline) {
      await proc.kill();
      throw new Error(`the child worker did not start:\n${proc.outputTail()}`);
    }
    await sleep(20);
  }
  return {
    pid: proc.pid,
    process: proc,
    kill: () => proc.kill(),
    stop: (graceMs) => proc.stop(graceMs),
    output: () => proc.outputTail(),
  };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** True when the command had to be killed at the deadline (it hung). */
  timedOut: boolean;
}

/** Runs `node cli/main.ts ...args` to its end (SIGKILL at the deadline, reported as `timedOut`). */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliMain, ...args], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, timedOut });
    });
  });
}

// ---------------------------------------------------------------------------------------------- inputs

export interface DrillInput {
  /** The file's URL (file://). */
  url: string;
  rows: number;
  /** The normalized domain of every distinct valid row: exactly one output line each. */
  distinct: Set<string>;
  /** 1-based data rows that hold no domain: exactly one `invalid` line each. */
  invalidRows: number[];
}

/**
 * A CRM-like CSV of `distinct` companies: each once as a bare domain, some again in other spellings (duplicates
 * after normalization), and some junk rows, shuffled by `seed`.
 */
export async function writeDomainsCsv(
  dir: string,
  name: string,
  options: { distinct: number; seed: number; duplicates?: number; junk?: number; prefix?: string },
): Promise<DrillInput> {
  const random = seeded(options.seed);
  const prefix = options.prefix ?? `drill${options.seed}`;
  const domains = Array.from({ length: options.distinct }, (_, i) => `${prefix}-co${i}.com`);
  const cells: { value: string; valid: boolean }[] = domains.map((d) => ({ value: d, valid: true }));
  const spellings = [(d: string) => `https://www.${d}/about`, (d: string) => d.toUpperCase(), (d: string) => `${d}.`];
  for (let i = 0; i < (options.duplicates ?? Math.floor(options.distinct / 10)); i++) {
    const domain = domains[Math.floor(random() * domains.length)]!;
    cells.push({ value: spellings[i % spellings.length]!(domain), valid: true });
  }
  const junk = ['', 'n/a', 'not a website', 'http://', '???', '10.0.0.1', 'foo@'];
  for (let i = 0; i < (options.junk ?? 5); i++) cells.push({ value: junk[i % junk.length]!, valid: false });
  for (let i = cells.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [cells[i], cells[j]] = [cells[j]!, cells[i]!];
  }
  const lines = ['id,name,website'];
  const invalidRows: number[] = [];
  cells.forEach((cell, i) => {
    lines.push(`${i},Company ${i},"${cell.value}"`);
    if (!cell.valid) invalidRows.push(i + 1);
  });
  const path = join(dir, name);
  await writeFile(path, `${lines.join('\n')}\n`);
  return { url: pathToFileURL(path).href, rows: cells.length, distinct: new Set(domains), invalidRows };
}

const tempDirs: string[] = [];

/** A fresh temporary directory, removed by removeTempDirs(). */
export async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `signal-kit-drill-${label}-`));
  tempDirs.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

// ---------------------------------------------------------------------------------------------- output checks

export type Line = Record<string, unknown>;

export interface CheckedOutput {
  manifest: Manifest;
  lines: Line[];
  /** Every line as JSON, sorted: two runs of the same input compare equal. */
  lineSet: string[];
}

async function readAllBytes(store: Store, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.openRead(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Reads a job's manifest and every manifested part back through the store and checks that each part's bytes, sha256
 * and line count are what the manifest says (no part published incomplete); throws a message saying what is wrong.
 */
export async function readCheckedParts(
  output: string,
  jobId: string,
): Promise<{ manifest: Manifest; lines: Line[]; problems: string[] }> {
  const store = openStore(output);
  const manifest = JSON.parse(await store.readText(`${jobId}/_manifest.json`)) as Manifest;
  const problems: string[] = [];
  const lines: Line[] = [];
  for (const part of manifest.parts) {
    const raw = await readAllBytes(store, part.key);
    const sha256 = createHash('sha256').update(raw).digest('hex');
    if (raw.length !== part.bytes) problems.push(`${part.key}: ${raw.length} bytes, manifest says ${part.bytes}`);
    if (sha256 !== part.sha256) problems.push(`${part.key}: sha256 ${sha256}, manifest says ${part.sha256}`);
    const text = part.key.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
    if (text !== '' && !text.endsWith('\n')) problems.push(`${part.key}: no final newline`);
    const partLines = text.split('\n').filter((line) => line !== '');
    if (partLines.length !== part.lines)
      problems.push(`${part.key}: ${partLines.length} lines, manifest says ${part.lines}`);
    for (const [i, line] of partLines.entries()) {
      try {
        lines.push(JSON.parse(line) as Line);
      } catch {
        problems.push(`${part.key}: line ${i + 1} is not JSON`);
      }
    }
  }
  if (problems.length) throw new Error(`job ${jobId} output at ${output}:\n  ${problems.join('\n  ')}`);
  return { manifest, lines, problems };
}

/**
 * readCheckedParts, then the accounting: one line per distinct valid input, none missing, none twice; one `invalid`
 * line per bad row; the manifest's counts add up to the lines.
 */
export async function checkJobOutput(
  output: string,
  jobId: string,
  expected: { distinct: Set<string>; invalidRows: number[]; field?: string },
): Promise<CheckedOutput> {
  const { manifest, lines, problems } = await readCheckedParts(output, jobId);
  const field = expected.field ?? 'domain';
  const seen = new Map<string, number>();
  const invalidRows: number[] = [];
  for (const line of lines) {
    if (line['status'] === 'invalid') {
      invalidRows.push(Number(line['row']));
      continue;
    }
    const value = String(line[field]);
    seen.set(value, (seen.get(value) ?? 0) + 1);
  }
  const twice = [...seen].filter(([, n]) => n > 1).map(([v, n]) => `${v} ×${n}`);
  const extra = [...seen.keys()].filter((v) => !expected.distinct.has(v));
  const missing = [...expected.distinct].filter((v) => !seen.has(v));
  if (twice.length) problems.push(`${twice.length} inputs written more than once: ${twice.slice(0, 5).join(', ')}`);
  if (extra.length) problems.push(`${extra.length} lines for no input: ${extra.slice(0, 5).join(', ')}`);
  if (missing.length) problems.push(`${missing.length} inputs with no line: ${missing.slice(0, 5).join(', ')}`);
  const sortedRows = (rows: number[]) => [...rows].sort((a, b) => a - b).join(',');
  if (sortedRows(invalidRows) !== sortedRows(expected.invalidRows)) {
    problems.push(`invalid rows ${sortedRows(invalidRows)}, expected ${sortedRows(expected.invalidRows)}`);
  }
  const counted = manifest.counts.ok + manifest.counts.not_found + manifest.counts.error + manifest.counts.invalid;
  if (counted !== lines.length || manifest.counts.lines !== lines.length) {
    problems.push(`manifest counts ${JSON.stringify(manifest.counts)} do not add up to ${lines.length} lines`);
  }
  if (problems.length) throw new Error(`job ${jobId} output at ${output}:\n  ${problems.join('\n  ')}`);
  return { manifest, lines, lineSet: lines.map((line) => JSON.stringify(line)).sort() };
}

/**
 * Holds the output of a bulk enrichment of `input` against the sandbox's truth: every `ok` line carries exactly the
 * signals that exist for its domain (the newest `limit`), every `not_found` line a domain that resolves to nothing.
 * Returns what the spec charges for the distinct domains (2 credits per signal): the cost a drill must equal.
 */
export function enrichTruthCredits(sandbox: Sandbox, input: DrillInput, lines: Line[], limit: number): number {
  const ideal = enrichIdeal(sandbox, [...input.distinct], { limit });
  const status = new Map(ideal.domains.map((d) => [d.domain, d.status]));
  const problems: string[] = [];
  for (const line of lines) {
    if (line['status'] === 'invalid') continue;
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

// ---------------------------------------------------------------------------------------------- API proxy

export interface ProxyCall {
  seq: number;
  method: string;
  path: string;
  /** The `domains` of a bulk enrich call. */
  domains?: string[];
  startedAt: number;
  /** Set once the sandbox's answer has been passed on whole. */
  answeredAt?: number;
  status?: number;
  /** `x-credits-charged` of the answer. */
  credits: number;
  requestId?: string;
}

export interface ApiProxy {
  readonly url: string;
  readonly calls: ProxyCall[];
  /** Calls that reached the proxy while it was closed and have not been forwarded. */
  held(): number;
  /** Forwarded calls whose answer has not been passed on yet. */
  inFlight(): number;
  /** From now on, calls wait at the proxy: they do not reach the sandbox, so nothing new is charged. */
  close(): void;
  /** Forwards the waiting calls whose client is still connected, and every later call. */
  open(): void;
  /** Resolves when no forwarded call is waiting for the sandbox's answer. */
  drained(timeoutMs?: number): Promise<void>;
  /** From now on, calls reach the sandbox (and are charged) but their answers wait at the proxy. */
  holdAnswers(): void;
  /** Answers waiting at the proxy. */
  heldAnswers(): number;
  /** Passes the waiting answers on, and every later one. */
  releaseAnswers(): void;
  stop(): Promise<void>;
}

/**
 * A recording HTTP proxy in front of the sandbox, on 127.0.0.1. It records which call carried which domains and
 * what the sandbox charged for it (by request id, the same id as in the ledger), and it can be closed: a drill closes
 * it, waits until every answered call has been saved by the kit, and kills the worker with calls hanging in it.
 */
export async function startApiProxy(target: string): Promise<ApiProxy> {
  const upstream = new URL(target);
  const calls: ProxyCall[] = [];
  const waiting: (() => void)[] = [];
  const answers: (() => void)[] = [];
  let open = true;
  let holdingAnswers = false;
  let forwarded = 0;
  let seq = 0;

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, call: ProxyCall) => {
    forwarded += 1;
    let settled = false;
    const settle = () => {
      if (!settled) {
        settled = true;
        forwarded -= 1;
      }
    };
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        call.status = answer.statusCode;
        call.credits = Number(answer.headers['x-credits-charged'] ?? 0);
        call.requestId = String(answer.headers['x-request-id'] ?? '');
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.once('error', () => {
          res.destroy();
          settle();
        });
        answer.once('end', () => {
          const pass = () => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(chunks));
            call.answeredAt = Date.now();
            settle();
          };
          if (holdingAnswers) answers.push(pass);
          else pass();
        });
      },
    );
    out.once('error', () => {
      res.destroy();
      settle();
    });
    // If the kit's socket goes away (a killed worker), the sandbox still finishes, and still charges, the call.
    out.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      const body = Buffer.concat(chunks);
      const call: ProxyCall = {
        seq: ++seq,
        method: req.method ?? 'GET',
        path: (req.url ?? '/').split('?')[0]!,
        startedAt: Date.now(),
        credits: 0,
      };
      if (call.path.endsWith('/enrich/bulk')) {
        try {
          call.domains = (JSON.parse(body.toString('utf8')) as { domains?: string[] }).domains;
        } catch {
          // not ours to judge
        }
      }
      calls.push(call);
      const go = () => {
        if (req.socket.destroyed || res.destroyed) return; // the worker died while its call was held
        forward(req, res, body, call);
      };
      if (open) go();
      else waiting.push(go);
    });
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    held: () => waiting.length,
    inFlight: () => forwarded,
    close() {
      open = false;
    },
    open() {
      open = true;
      for (const go of waiting.splice(0)) go();
    },
    holdAnswers() {
      holdingAnswers = true;
    },
    heldAnswers: () => answers.length,
    releaseAnswers() {
      holdingAnswers = false;
      for (const pass of answers.splice(0)) pass();
    },
    async drained(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (forwarded > 0) {
        if (Date.now() > deadline) throw new Error(`${forwarded} proxied calls still unanswered after ${timeoutMs} ms`);
        await sleep(5);
      }
    },
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Batch index of every distinct value, from the job's own batch files (`<output>/<jobId>/work/batch-N.jsonl`). */
export async function batchIndex(output: string, jobId: string): Promise<Map<string, number>> {
  const store = openStore(output);
  const index = new Map<string, number>();
  for await (const info of store.list(`${jobId}/work/`)) {
    const match = /batch-(\d+)\.jsonl$/.exec(info.key);
    if (!match) continue;
    const text = await store.readText(info.key);
    for (const line of text.split('\n')) {
      if (line) index.set((JSON.parse(line) as { v: string }).v, Number(match[1]));
    }
  }
  return index;
}

/** The highest attempt number any `activity` of the workflow reached (from its history). */
export async function maxAttempt(client: Client, workflowId: string, activity: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const types = new Map<number, string>();
  let most = 0;
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) types.set(Number(event.eventId), scheduled.activityType?.name ?? '');
    const started = event.activityTaskStartedEventAttributes;
    if (started && types.get(Number(started.scheduledEventId)) === activity)
      most = Math.max(most, started.attempt ?? 0);
  }
  return most;
}

/** Waits (bounded) until `check` holds. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000, everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------- the kill drill

export interface KillRecord {
  /** Answered calls of the job when the worker died. */
  afterCalls: number;
  /** Calls hanging in the worker, held at the proxy (they never reached the sandbox). */
  heldCalls: number;
  /** From the kill until the job's next answered call (a new worker took over). */
  recoveryMs: number;
}

export interface KillDrillOptions {
  env: JobEnv;
  proxy: ApiProxy;
  /** The running child worker; killed and replaced (the last one is returned). */
  worker: ChildWorker;
  workerEnv: Record<string, string>;
  workflow: string;
  /** The workflow's input; `jobId` and `output` (file://) locate the job. */
  input: { jobId: string; output: string };
  kills: number;
  seed: number;
  /**
   * `saved`: kill at random points where every call the sandbox answered is saved (new calls held at the proxy),
   * alternately at once and once a call hangs in the worker. `anywhere`: at any instant. `sigterm`: at any instant,
   * but SIGTERM, as a deploy stops a worker (it drains its running activities, then exits).
   */
  mode: 'saved' | 'anywhere' | 'sigterm';
}

export interface KillDrillOutcome {
  worker: ChildWorker;
  result: JobResult;
  kills: KillRecord[];
  /** Answered calls that were not saved when their worker died (paid again): only in `anywhere` mode. */
  lost: ProxyCall[];
  /** Paid calls per batch index. */
  paidPerBatch: Map<number, number>;
  /** Batch index of a call. */
  batchOf: (call: ProxyCall) => number;
  /** Ledger delta of the job (all accounts). */
  charged: number;
  wallMs: number;
}

/**
 * Runs a batch job (file:// output) while killing its worker (SIGKILL to the process group, or SIGTERM) `kills`
 * times at seeded random points, starting a new worker after each. Returns what happened; the caller judges it.
 */
export async function runKillDrill(options: KillDrillOptions): Promise<KillDrillOutcome> {
  const { env, proxy, workerEnv, input } = options;
  const started = Date.now();
  const outDir = fileURLToPath(input.output);
  const firstCall = proxy.calls.length;
  const ledgerStart = env.sandbox.ledger.total();
  const c = env.config();
  const handle = await env.client.workflow.start(options.workflow, {
    workflowId: input.jobId,
    taskQueue: c.taskQueue,
    args: [{ ...input, taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue }],
  });
  let finished = false;
  const outcome = handle.result().finally(() => {
    finished = true;
  }) as Promise<JobResult>;
  outcome.catch(() => {});
  await until('the input to be prepared', () => existsSync(join(outDir, input.jobId, 'work', '_prepared.json')));
  const batchOf = await batchIndex(input.output, input.jobId);
  const batchOfCall = (call: ProxyCall) => batchOf.get(call.domains![0]!)!;
  const saved = (call: ProxyCall) =>
    existsSync(join(outDir, input.jobId, 'parts', `part-${String(batchOfCall(call)).padStart(5, '0')}.jsonl.gz`));
  const jobCalls = () => proxy.calls.slice(firstCall).filter((call) => call.domains);
  const answered = () => jobCalls().filter((call) => call.status === 200 && call.answeredAt);

  const random = seeded(options.seed);
  const kills: KillRecord[] = [];
  const lost = new Map<number, ProxyCall>();
  let worker = options.worker;
  for (let k = 0; k < options.kills; k++) {
    // A seeded random point: after 1–3 more answered calls and 0–150 ms ...
    const target = answered().length + between(random, 1, 3);
    await until(`call ${target} of the job to be answered`, () => answered().length >= target, 120_000, 5);
    await sleep(between(random, 0, 150));
    let heldCalls = 0;
    if (options.mode === 'saved') {
      // ... where new calls are held at the proxy and every call the sandbox answered is saved; then either at once
      // (the worker dies between saving parts and reporting them) or once a call hangs in it (it dies mid-call).
      proxy.close();
      await proxy.drained();
      await until('every answered call to be saved', () => answered().every(saved), 10_000, 5);
      if (k % 2 === 0) await until('a call to be held', () => proxy.held() > 0, 15_000, 5);
      await sleep(between(random, 0, 100));
      heldCalls = proxy.held();
    }
    const afterCalls = answered().length;
    const killedAt = Date.now();
    if (options.mode === 'sigterm') await worker.stop(60_000);
    else await worker.kill();
    // Calls already forwarded still reach the sandbox, which answers and charges them with nobody listening.
    await proxy.drained();
    // With no worker alive, every answered call whose part is not there is lost (it will be paid again).
    for (const call of answered()) if (!saved(call)) lost.set(call.seq, call);
    proxy.open();
    worker = await startChildWorker(workerEnv);
    const before = answered().length;
    await until('a new worker to take over', () => answered().length > before || finished, 120_000, 5);
    kills.push({ afterCalls, heldCalls, recoveryMs: Date.now() - killedAt });
  }

  const result = await outcome;
  const paidPerBatch = new Map<number, number>();
  for (const call of answered()) {
    if (call.credits > 0) paidPerBatch.set(batchOfCall(call), (paidPerBatch.get(batchOfCall(call)) ?? 0) + 1);
  }
  return {
    worker,
    result,
    kills,
    lost: [...lost.values()],
    paidPerBatch,
    batchOf: batchOfCall,
    charged: env.sandbox.ledger.total() - ledgerStart,
    wallMs: Date.now() - started,
  };
}
