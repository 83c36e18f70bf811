// The CLI's command list: every command, its flags and its help text, in this one file (commander generates the
// help from these declarations, so it cannot drift from what is parsed). Each action imports its command's module
// only when it runs: `--help` and `--version` load commander and nothing else.

import { Command, CommanderError, Option, type OptionValues } from 'commander';
import { ConfigError, CrmPreflightError } from '../connectors/errors.ts';
import { UsageError } from './args.ts';

const EXIT_CODES = `Exit codes (--wait and status): 0 completed, 1 failed, 2 bad usage or configuration, 3 budget exhausted,
4 completed with failed batches, 5 still running (status), 6 no worker polls the job's task queues.`;

const EXAMPLES = `Examples:
  signal-kit demo                      the main job end to end on a local stack, into ./out
  signal-kit dev                       a local stack and a worker; prints the settings for another shell
  signal-kit worker                    a worker for SIGNAL_API_URL / SIGNAL_API_KEY on TEMPORAL_ADDRESS
  signal-kit enrich --input crm.csv --output s3://bucket/signals --limit 50 --wait
  signal-kit status JOB_ID`;

const OVERLAP = ['skip', 'buffer-one', 'buffer-all', 'cancel-other', 'terminate-other', 'allow-all'];

const WHERE = 'a path, file://, s3:// or gs:// URL';
const JOB_OUTPUT = `where the job writes its parts and manifest: ${WHERE}`;

// Flags that several commands declare alike, one group each: commander prints them in each command's help.

/** A job that reads a list of `values` (one `value` a row): its input, output and the input's column. */
const inputFlags = (command: Command, values: string, value: string) =>
  command
    .option('--input <url>', `CSV or JSONL of ${values}: ${WHERE}`)
    .option('--output <url>', JOB_OUTPUT)
    .option('--column <name>', `the column holding the ${value} (default: found by its header, as CRM exports name it)`)
    .option('--id-column <name>', "the column holding each row's record id (default: Id, Record ID, ... when present)")
    .option('--keep-columns <a,b>', 'input columns to carry into every output line')
    .option(
      '--encoding <name>',
      "the input's text encoding: utf-8, utf-16le, utf-16be or windows-1252 (default: found from the file)",
    )
    .option('--sheet <name>', 'the sheet of an .xlsx input to read (default: the first)');

/** Which signals enrich and push schedules ask for. */
const signalFilterFlags = (command: Command) =>
  command
    .option('--signal-types <a,b>', 'only these signal types')
    .option('--signal-subtypes <a,b>', 'only these signal subtypes (at most 25)');

/** A schedule's watermark state: which domains, and the output it is kept in (`--domains`: list every domain). */
const watermarkFlags = (command: Command, listFlag: boolean) => {
  command.option('--domain <d>', 'a push or feed: only this domain (repeatable)', collect);
  if (listFlag) command.option('--domains', 'a push or feed: list every domain');
  return command.option('--output <url>', 'the output the state is kept in (default: the schedule’s)');
};

/** A webhook subscription's settings. */
const subscriptionFlags = (command: Command) =>
  command
    .option('--url <url>', 'an absolute http(s) URL')
    .option('--types <a,b>', 'signal types')
    .option('--description <text>', 'a description');

/** What a command's action gives back: the process exit code. */
type Run = () => Promise<number>;

/**
 * The arguments after `command`'s name (and its parents'), as typed: for commands whose module still parses its own
 * argv. Commander has already checked them against the declared flags.
 */
function argvOf(command: Command): string[] {
  let depth = 0;
  for (let c = command; c.parent; c = c.parent) depth += 1;
  return typedArgs.get(root(command))?.slice(depth) ?? [];
}

const typedArgs = new WeakMap<Command, string[]>();
const root = (command: Command): Command => (command.parent ? root(command.parent) : command);

const TABLE_FORMATS =
  'also write the flat tables (docs/tables.md) as jsonl, csv or parquet; several comma-separated (e.g. parquet,csv)';

/** A command that takes flags only: each option as `[flags, description, default]`, and what runs with them. */
interface FlagCommand {
  name: string;
  description: string;
  options: Array<[string, string, string?]>;
  run: (flags: OptionValues, command: Command) => Promise<number>;
}

const FLAG_COMMANDS: FlagCommand[] = [
  {
    name: 'load',
    description:
      "load a finished job's, push run's, feed run's or sync night's tables into PostgreSQL or a DuckDB file, upserting by key (calls no API)",
    options: [
      ['--manifest <url>', `the job's or run's _manifest.json: ${WHERE}`],
      [
        '--into <url>',
        'the database: postgres://user[:password]@host[:port]/database[?sslmode=require], or duckdb:///abs/path/warehouse.duckdb',
      ],
      ['--table-prefix <prefix>', 'prefix of the table names (default: signal_kit_)'],
    ],
    run: async (flags) => (await import('./commands/load.ts')).runLoadCommand(flags),
  },
  // local stack
  {
    name: 'demo',
    description:
      'run the main job end to end on a local stack (sandbox + Temporal + ./out), then a night written back to a local HubSpot',
    options: [['--output <dir>', 'the folder the demo writes into', 'out']],
    run: async (flags) => (await import('./commands/demo.ts')).runDemoCommand(flags),
  },
  {
    name: 'dev',
    description:
      'start a local stack (Temporal, S3, GCS, sandbox, HubSpot and Salesforce stand-ins) and a worker; print its settings',
    options: [['--no-worker', 'start the stack without a worker']],
    run: async (flags) => (await import('./commands/dev.ts')).runDevCommand(flags),
  },
  {
    name: 'sandbox',
    description: 'run the local Signal Data Service sandbox',
    options: [
      ['--port <n>', 'port on 127.0.0.1 (default: a free one)'],
      ['--seed <n>', 'seed for the generated data'],
      ['--rate-limit <n>', 'requests per minute per account (0: off; default 300)'],
      ['--credits <n>', "the account's starting credits"],
    ],
    // The sandbox parses its own argv (it runs alone too: sandbox/main.ts).
    run: async (_flags, command) => (await import('../sandbox/main.ts')).runSandboxCli(argvOf(command)),
  },
  // worker
  {
    name: 'worker',
    description: 'run a worker (SIGNAL_API_URL, SIGNAL_API_KEY, TEMPORAL_ADDRESS, ...) until SIGINT or SIGTERM',
    options: [
      ['--health-port <n>', 'serve /livez and /readyz on this port'],
      ['--metrics-port <n>', 'serve Prometheus metrics on this port'],
      ['--make-current', "make this worker's build the current one of its deployment"],
    ],
    run: async (flags) => (await import('./commands/worker.ts')).runWorkerCommand(flags),
  },
  {
    name: 'build-workflows',
    description: 'write the workflow bundle a prebuilt worker starts from (SIGNAL_KIT_WORKFLOW_BUNDLE)',
    options: [
      ['--output <dir>', 'the folder for workflow-bundle.js and its build id', 'dist/worker'],
      ['--workflows <path>', "a module of your own that re-exports the kit's workflows next to yours"],
    ],
    run: async (flags) => (await import('./commands/build-workflows.ts')).runBuildWorkflowsCommand(flags),
  },
];

/** Builds the program; `exit` receives the code of whichever command ran. */
export function buildProgram(version: string, exit: (code: number) => void): Command {
  const program = new Command('signal-kit')
    .description('signal-kit: durable jobs for the Signal Data Service')
    .version(version, '-V, --version', 'print the signal-kit version')
    .helpCommand(true)
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .addHelpText('after', `\n${EXAMPLES}\n\n${EXIT_CODES}`);

  const action = actionOf(exit);
  addJobCommands(program, action);
  addCatalogCommands(program, action);
  addFlagCommands(program, action);
  addScheduleCommands(program, action);
  addCrmCommands(program, action);
  addWebhookCommands(program, action);
  return program;
}

/** A command's action: runs what `run` makes of the command and exits with the code it gives back. */
type ActionHandler = (this: Command) => Promise<void>;
type Action = (run: (command: Command) => Run) => ActionHandler;

function actionOf(exit: (code: number) => void): Action {
  return (run) =>
    async function (this: Command) {
      exit(await run(this)());
    };
}

/** The job commands (enrich, enrich-contacts, verify-emails, intent-export) and `status`. */
function addJobCommands(program: Command, action: Action): void {
  const jobFlags = (command: Command) =>
    command
      .option('--job-id <id>', 'the job id (default: derived from what the job does, so a rerun is the same job)')
      .option('--compression <kind>', 'output parts: gzip (default) or none')
      .option('--concurrency <n>', 'batches in flight at once')
      .option('--wait', 'follow the job to its end and exit with its code')
      .option('--dry-run', 'print rows, distinct, invalid, batches and credits; start nothing and call no API');

  const enrich = program.command('enrich').description('enrich a list of company domains with signals');
  jobFlags(
    signalFilterFlags(inputFlags(enrich, 'domains', 'domain'))
      .option('--detected-after <iso>', 'only signals detected after this date')
      .option('--limit <n>', 'signals per domain, at most 500 (2 credits each)')
      .option('--max-credits <n>', 'stop before spending more than this')
      .option('--format <list>', TABLE_FORMATS),
  ).action(action((command) => async () => jobCommand('enrichJob', command.opts())));

  const contacts = program
    .command('enrich-contacts')
    .description('enrich a CRM contact export person by person (email or LinkedIn URL): contact, employer, signals');
  jobFlags(
    inputFlags(contacts, 'contacts (Email, LinkedIn URL, ...)', 'email or LinkedIn URL')
      .option('--signal-types <a,b>', 'only these person-level signal types')
      .option('--detected-after <iso>', 'only signals detected after this date')
      .option('--limit <n>', 'signals per contact, at most 500 (2 credits each)')
      .option('--max-credits <n>', 'stop before spending more than this')
      .option('--format <list>', TABLE_FORMATS),
  ).action(action((command) => async () => jobCommand('enrichContactsJob', command.opts())));

  const verifyEmails = program.command('verify-emails').description('verify a list of email addresses');
  jobFlags(
    inputFlags(verifyEmails, 'addresses', 'address')
      .option('--max-credits <n>', 'stop before spending more than this')
      .option('--format <list>', TABLE_FORMATS),
  ).action(action((command) => async () => jobCommand('verifyEmailsJob', command.opts())));

  jobFlags(
    program
      .command('intent-export')
      .description('export the people showing intent on some topics')
      .option('--topics <b2b_1,b2b_2>', 'topic ids')
      .option('--output <url>', JOB_OUTPUT)
      .option('--email-validated', 'only people with a validated email')
      .option('--seniority <a,b>', 'only these seniorities (e.g. Vp,Cxo)')
      .option('--department <a,b>', 'only these departments')
      .option('--limit <n>', 'at most this many rows')
      .option('--resubmit', 'submit again when an earlier submit of this job has an unknown outcome'),
  ).action(action((command) => async () => jobCommand('intentExportJob', command.opts())));

  program
    .command('status')
    .description("a job's state, progress while it runs, and its result")
    .argument('<job-id>', 'the job id printed when it started')
    .action(
      action(
        (command) => async () => (await import('./commands/job-commands.ts')).runStatusCommand(command.args[0] ?? ''),
      ),
    );
}

/** The free catalogs: `topics search` and `signal-types`. */
function addCatalogCommands(program: Command, action: Action): void {
  const topics = program.command('topics').description('the buyer-intent topic catalog (free)');
  topics
    .command('search')
    .description('find topic ids (b2b_<n>) by a word of their name; prints a table, or JSON with --json')
    .argument('<text>', 'a word or phrase of the topic name, or a topic id')
    .option('--limit <n>', 'at most this many topics (default 50, at most 1000)')
    .option('--cursor <cursor>', 'the next page, as printed by the previous one')
    .option('--json', 'print the answer as JSON')
    .action(
      action((command) => async () => {
        const { runCatalogCommand, topicsRequest } = await import('./commands/catalog.ts');
        const flags = command.opts();
        return runCatalogCommand('topics search', () => topicsRequest(command.args[0], flags), flags.json === true);
      }),
    );
  program
    .command('signal-types')
    .description('every signal type with its category, subtypes and signal count (free); --json for all of it')
    .option('--json', 'print the answer as JSON')
    .action(
      action((command) => async () => {
        const { runCatalogCommand } = await import('./commands/catalog.ts');
        return runCatalogCommand('signal-types', () => ({ what: 'signal-types' }), command.opts().json === true);
      }),
    );
}

/** Commands whose flags go to one function of their module, imported only when the command runs. */
function addFlagCommands(program: Command, action: Action): void {
  for (const { name, description, options, run } of FLAG_COMMANDS) {
    const command = program.command(name).description(description);
    for (const [flags, text, value] of options) command.option(flags, text, value);
    command.action(action((self) => () => run(self.opts(), self)));
  }
}

/** `schedule` and its subcommands, for schedules of every kind. */
function addScheduleCommands(program: Command, action: Action): void {
  const schedule = program
    .command('schedule')
    .description(
      'schedules of every kind: pushes of new signals for a watchlist, feeds of new search or intent results, ' +
        'and the nightly CRM sync of an export',
    );
  const scheduleAction = action(
    (command) => async () =>
      (await import('./commands/schedule.ts')).runScheduleCommand(command.name(), command.args[0], command.opts()),
  );
  addScheduleCreate(schedule, scheduleAction);
  schedule
    .command('list')
    .description('every schedule of every kind, with its next and recent runs')
    .action(scheduleAction);
  for (const [name, description] of [
    ['describe', "a schedule's definition, state and recent runs"],
    ['delete', 'delete a schedule'],
  ] as const) {
    schedule.command(name).description(description).argument('<name>', 'the schedule name').action(scheduleAction);
  }
  for (const [name, description] of [
    ['pause', 'pause a schedule'],
    ['unpause', 'resume a paused schedule'],
  ] as const) {
    schedule
      .command(name)
      .description(description)
      .argument('<name>', 'the schedule name')
      .option('--note <text>', 'why')
      .action(scheduleAction);
  }
  schedule
    .command('trigger')
    .description("start a run now, as the schedule would (it applies the schedule's overlap policy)")
    .argument('<name>', 'the schedule name')
    .addOption(overlap("overlap policy for this run (default: the schedule's own)"))
    .action(scheduleAction);
  schedule
    .command('run')
    .description(
      'one run now (refused while a run of the schedule is in progress); with --wait it exits like a job: 0, 1, 3, 4',
    )
    .argument('<name>', 'the schedule name')
    .option('--full-refresh', 'a push: ignore the watermarks and push everything again')
    .option('--wait', 'follow the run to its end')
    .action(scheduleAction);
  schedule
    .command('backfill')
    .description('a push: push the signals detected in [from, to), into a partition of its own')
    .argument('<name>', 'the schedule name')
    .option('--from <iso>', 'start of the window')
    .option('--to <iso>', 'end of the window (exclusive)')
    .option('--wait', 'follow the run to its end')
    .action(scheduleAction);
  const state = schedule
    .command('state')
    .description("the schedule's state (a push's or feed's watermarks, a CRM sync's companies), last run and failure");
  watermarkFlags(state.argument('<name>', 'the schedule name'), true).action(scheduleAction);
  const reset = schedule
    .command('reset')
    .description("forget the schedule's state (watermarks, a CRM sync's companies): the next run starts over");
  watermarkFlags(reset.argument('<name>', 'the schedule name'), false).action(scheduleAction);
}

const overlap = (description: string) => new Option('--overlap <policy>', description).choices(OVERLAP);

/** `schedule create`, with the flags of every kind of schedule. */
function addScheduleCreate(schedule: Command, scheduleAction: ActionHandler): void {
  const create = schedule
    .command('create')
    .description(
      'create a schedule: a push of new signals for a watchlist (default), or (--kind) a feed of new search or intent ' +
        'results, or the nightly CRM sync of an export',
    )
    .option('--name <name>', 'the schedule name (lower-case letters, digits, - or _)')
    .option(
      '--kind <kind>',
      'push (default), enrich or enrich-contacts (the nightly CRM sync), company-search, contact-search, intent-contacts',
    )
    .option('--watchlist <url>', `push: a .csv or .jsonl(.gz) of domains: ${WHERE}`)
    .option(
      '--input <url>',
      `enrich, enrich-contacts: the CRM export (.csv, .tsv/.txt, .xlsx or .jsonl), read afresh each run: ${WHERE}`,
    )
    .option('--id-column <name>', "enrich: the column holding each row's record id (default: Id, Record ID, ...)")
    .option('--keep-columns <a,b>', 'enrich: export columns to carry into every row')
    .option(
      '--encoding <name>',
      "enrich: the export's text encoding: utf-8, utf-16le, utf-16be or windows-1252 (default: found from the file)",
    )
    .option('--sheet <name>', 'enrich: the sheet of an .xlsx export to read (default: the first)')
    .option(
      '--notify <url>',
      'POST one signed event (Standard Webhooks; a Slack incoming webhook gets text) when a run fails, stops on its ' +
        'budget or ends with failed batches (enrich: or records the CRM rejected); the worker signs with SIGNAL_KIT_NOTIFY_SECRET',
    )
    .option('--allow-missing-input', 'enrich: create it though the export is not there yet (it lands before the night)')
    .option('--write-back <crm>', "enrich: write each night's changes to the CRM by record id: hubspot or salesforce")
    .option(
      '--write-fields <a,b>',
      'enrich: the rows columns the write-back writes (default: status, signal_count, latest_signal_*)',
    )
    .option(
      '--write-policy <field=policy...>',
      'enrich: a field written only where the CRM holds nothing (fill-empty) or always (overwrite, the default)',
    )
    .option(
      '--skip-crm-check',
      "enrich: create without reading the CRM's schema first (a CRM not reachable from here; the night still checks it)",
    )
    .option('--output <url>', `where each run writes: ${WHERE}`)
    .option('--every <duration>', 'how often, as Temporal durations: 30m, 6h, 1d (a 1d schedule runs at 00:00 UTC)')
    .option('--at <HH:MM>', 'or each day at this time (HH:MM or HH:MM:SS, 24-hour) in --timezone')
    .option('--cron <expr>', 'or on a cron expression ("30 2 * * 1-5"; 7 fields with seconds and year) in --timezone')
    .option('--timezone <zone>', 'the IANA time zone of --at and --cron (default UTC), e.g. Europe/Berlin');
  signalFilterFlags(create)
    .option('--column <name>', 'the column holding the domain (default: detected)')
    .option('--limit <n>', 'signals per domain (enrich: per company and night), at most 500')
    .option('--since <iso>', 'the first run pushes signals detected after this date (feeds: default a week back)')
    .option('--max-credits <n>', 'credit budget per run')
    .option('--concurrency <n>', 'batches in flight at once')
    .option('--lookback <duration>', 'also look this far back before the watermark (late signals)')
    .option('--format <list>', TABLE_FORMATS)
    .addOption(overlap('what a run due while another runs does (default: skip)'))
    .option('--industries <a,b>', 'company-search: only these industries')
    .option('--employee-count-min <n>', 'company-search: head count range overlapping this low bound')
    .option('--employee-count-max <n>', 'company-search: head count range overlapping this high bound')
    .option('--keywords <a,b>', 'company-search: social posts mentioning any of these words')
    .option('--technologies <a,b>', 'company-search: social posts naming any of these technologies')
    .option('--competitors <a,b>', 'company-search: social posts naming any of these competitors')
    .option('--pain-points <a,b>', 'company-search: social posts naming any of these pain points')
    .option('--initiatives <a,b>', 'company-search: social posts naming any of these initiatives')
    .option('--seniority <a,b>', 'contact-search, intent-contacts: only these seniorities (e.g. Vp,Cxo)')
    .option('--department <a,b>', 'contact-search, intent-contacts: only these departments')
    .option('--job-title <text>', 'contact-search: job titles containing this text')
    .option('--topics <b2b_1,b2b_2>', 'intent-contacts: topic ids (signal-kit topics search finds them)')
    .option('--email-validated', 'intent-contacts: only people with a validated email')
    .option('--has-email', 'intent-contacts: only people with an email')
    .option('--has-mobile', 'intent-contacts: only people with a mobile phone')
    .option('--paused', 'create it paused')
    .option('--note <text>', 'a note kept with the schedule')
    .action(scheduleAction);
}

/** `crm check` and `crm fields`: the CRM a night writes back to. */
function addCrmCommands(program: Command, action: Action): void {
  const crm = program.command('crm').description('the CRM a night writes back to: its connection, scopes and fields');
  const crmFlags = (command: Command) =>
    command
      .argument('<crm>', 'hubspot or salesforce')
      .option('--kind <kind>', 'enrich (accounts, default) or enrich-contacts')
      .option('--write-fields <a,b>', "the rows columns the write-back writes (default: the night's)");
  crmFlags(
    crm.command('check').description('test the connection, the scopes and every field a write-back needs'),
  ).action(
    action((command) => async () => (await import('./commands/crm.ts')).runCrmCheck(command.args[0], command.opts())),
  );
  crmFlags(crm.command('fields').description("the kit's fields: created in HubSpot (--create), printed for Salesforce"))
    .option('--create', "hubspot: create the missing properties in the kit's property group")
    .action(
      action(
        (command) => async () => (await import('./commands/crm.ts')).runCrmFields(command.args[0], command.opts()),
      ),
    );
}

/** `webhooks serve` and the subscription commands. */
function addWebhookCommands(program: Command, action: Action): void {
  const webhooks = program.command('webhooks').description('receive signal events, and manage subscriptions');
  const manage = action((command) => async () => {
    const { runManageCommand } = await import('./commands/webhooks.ts');
    const sub = command.name() as 'subscribe' | 'list' | 'update' | 'delete' | 'test';
    return runManageCommand(sub, command.args[0], command.opts());
  });
  webhooks
    .command('serve')
    .description(
      'receive events over HTTP and start deliverSignalEvent for each one, until SIGINT or SIGTERM\n' +
        '--auth signature: SIGNAL_KIT_WEBHOOK_SECRETS=whsec_...[,whsec_...] [SIGNAL_KIT_WEBHOOK_TOLERANCE_SECONDS=300]\n' +
        '--auth token: SIGNAL_KIT_WEBHOOK_TOKEN (16+ characters) in SIGNAL_KIT_WEBHOOK_TOKEN_HEADER (x-webhook-token)',
    )
    .option('--port <n>', 'port to listen on (0 picks a free port)')
    .option('--host <host>', 'address to listen on (default: 127.0.0.1)')
    .option('--path <path>', 'URL path of the endpoint (default: /webhooks)')
    .option('--auth <mode>', 'signature (default), token or none')
    .option('--allow-unauthenticated', 'required with --auth none')
    .action(action((command) => async () => (await import('./commands/webhooks.ts')).runServeCommand(command.opts())));
  subscriptionFlags(
    webhooks.command('subscribe').description('subscribe a URL to signal events (through a running worker)'),
  ).action(manage);
  webhooks.command('list').description("the account's subscriptions").action(manage);
  subscriptionFlags(
    webhooks.command('update').description('change a subscription').argument('<id>', 'the subscription id'),
  )
    .option('--status <status>', 'active or paused')
    .action(manage);
  webhooks
    .command('delete')
    .description('delete a subscription')
    .argument('<id>', 'the subscription id')
    .action(manage);
  webhooks
    .command('test')
    .description('send a test event (exit 1 when it was not delivered)')
    .argument('<id>', 'the subscription id')
    .action(manage);
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** A job command: its flags become the job (every mistake named by its flag), then it starts, waits or dry-runs. */
async function jobCommand(
  build: 'enrichJob' | 'enrichContactsJob' | 'verifyEmailsJob' | 'intentExportJob',
  flags: OptionValues,
): Promise<number> {
  const jobs = await import('./commands/job-commands.ts');
  return jobs.runJobCommand(jobs[build](flags), flags);
}

/**
 * `schedule` argv (`['create', '--name', …]`) parsed by the command list, without running anything: the subcommand,
 * its schedule name and its flags, for callers that drive `runScheduleCommand` in process (tests).
 */
export function parseScheduleArgv(argv: string[]): { sub: string; name: string | undefined; flags: OptionValues } {
  const [sub = '', ...rest] = argv;
  const schedule = buildProgram('', () => {}).commands.find((command) => command.name() === 'schedule');
  const command = schedule?.commands.find((candidate) => candidate.name() === sub);
  if (!command) throw new UsageError(`unknown subcommand "schedule ${sub}"`);
  const { operands, unknown } = command.parseOptions(rest);
  if (unknown.length > 0) throw new UsageError(`unknown option '${unknown[0]}' for "schedule ${sub}"`);
  if (operands.length > command.registeredArguments.length)
    throw new UsageError(`unexpected argument "${operands[command.registeredArguments.length]}"`);
  return { sub, name: operands[0], flags: command.opts() };
}

/** Runs the CLI on `argv` (without node and the script) and resolves to the exit code. */
export async function runCli(argv: string[], version: string): Promise<number> {
  let code = 0;
  const program = buildProgram(version, (c) => {
    code = c;
  });
  typedArgs.set(program, argv);
  const where = ['signal-kit', ...commandPath(program, argv)].join(' ');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      if (error.code === 'commander.help') return error.exitCode === 0 ? 0 : 2;
      console.error(`${where}: ${error.message.replace(/^error: /, '')} (see ${where} --help)`);
      return 2;
    }
    if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      error instanceof CrmPreflightError ||
      isParseArgsError(error)
    ) {
      console.error(`${where}: ${(error as Error).message}`);
      return 2;
    }
    console.error(`${where}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

/** The command words at the start of `argv` that name commands (`['schedule', 'create']`). */
function commandPath(program: Command, argv: string[]): string[] {
  const path: string[] = [];
  let current = program;
  for (const word of argv) {
    const next = current.commands.find((command) => command.name() === word);
    if (!next) break;
    path.push(word);
    current = next;
  }
  return path;
}

function isParseArgsError(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    typeof (error as { code?: unknown }).code === 'string' &&
    String((error as unknown as { code: string }).code).startsWith('ERR_PARSE_ARGS')
  );
}
