/**
 * `npm run bench:cold`: what each function costs at a cold start. Every
 * function is built as CDK builds it (`infra/bundle.ts`: esbuild, ESM with
 * code splitting, minified, node22, the AWS SDK left to the runtime), and
 * its sizes printed: what its cold start reads (recorded by a resolution
 * hook), what it ships, its source maps. Its init — importing the entry,
 * which builds its deps from its configuration — is timed against a
 * baseline that imports only the SDK packages that init imported: each pair
 * in turn, in fresh Node processes, several times, the median of each. The
 * ratio says what our own code adds to the SDK's part of a cold start.
 */
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { consumerFunctions } from '../../functions/consumers.ts';
import { endpointGroups, pageGroups } from '../../functions/groups.ts';
import { streamConsumerFunctions } from '../../functions/stream-consumers.ts';
import { bundleFunction, ENTRY_FILE } from '../../infra/bundle.ts';
import type { Bindings } from '../../shared/bindings.ts';
import { configNamesOf, deadLetterQueueEnv } from '../../shared/config.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const root = fileURLToPath(new URL('../../', import.meta.url));
// Under the repository, so that the SDK resolves from its node_modules.
const outRoot = join(root, 'node_modules', '.cache', 'bench-cold');

/** Plausible values for every variable a function's cold start checks. */
const SAMPLE: Record<string, string> = {
  TABLE_NAME: 'table',
  PUBLIC_API_URL: 'https://api.example.com/prod/api/v1',
  APP_FROM_ADDRESS: 'no-reply@example.com',
  PAGES_URL: 'https://join.example.com',
  LINK_SIGNING_SECRET_ARN:
    'arn:aws:secretsmanager:us-east-1:123456789012:secret:links',
  AWS_ACCOUNT_ID: '123456789012',
  AWS_REGION: 'us-east-1',
  SCHEDULE_GROUP_NAME: 'schedules',
  SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
  SCHEDULER_DEAD_LETTER_QUEUE_ARN: 'arn:aws:sqs:us-east-1:123456789012:dlq',
};
const sample = (name: string): string | undefined => {
  if (SAMPLE[name]) return SAMPLE[name];
  if (
    name.startsWith('QUEUE_URL_') ||
    name.startsWith('DEAD_LETTER_QUEUE_URL_')
  ) {
    return 'https://sqs.us-east-1.amazonaws.com/123456789012/queue';
  }
  if (name.startsWith('SCHEDULE_TARGET_QUEUE_ARN_')) {
    return 'arn:aws:sqs:us-east-1:123456789012:queue';
  }
  return undefined;
};

const envOf = (
  bindings: Bindings,
  extra: Record<string, string> = {},
): Record<string, string> => ({
  ...extra,
  ...Object.fromEntries(
    configNamesOf(bindings).flatMap((name) => {
      const value = sample(name);
      return value === undefined ? [] : [[name, value]];
    }),
  ),
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
});

/**
 * A module-resolution hook, registered in the child process before the
 * function is imported: it appends every module the import resolves (file
 * URLs and SDK package names) to the file named by `INIT_LOG`. So "read at
 * init" counts what a cold start really loads, chunks imported dynamically
 * while the function builds its deps included.
 */
const HOOKS = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const name = specifier.startsWith('@aws-sdk/') ? specifier : resolved.url;
  appendFileSync(process.env.INIT_LOG, name + '\\n');
  return resolved;
}`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

/** Milliseconds to import a module in a fresh Node process. */
const initMs = (
  file: string,
  env: Record<string, string>,
  flags: string[] = [],
) => {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  const out = execFileSync(
    process.execPath,
    [...flags, '--input-type=module', '-e', script],
    { env: { PATH: process.env.PATH ?? '', ...env }, cwd: root },
  );
  return Number(out.toString());
};

/**
 * Builds an entry as `AppFunction` does (`infra/bundle.ts`, source maps
 * on so that the third column can time them), imports it once with the
 * hook to learn what its cold start reads, and writes the baseline: a
 * module importing only the SDK packages that cold start imported.
 */
const bundle = (name: string, entry: string, env: Record<string, string>) => {
  const outdir = join(outRoot, name);
  rmSync(outdir, { recursive: true, force: true });
  bundleFunction({ entry, sourceMap: true }, outdir);
  const log = join(outRoot, `${name}.log`);
  writeFileSync(log, '');
  initMs(join(outdir, ENTRY_FILE), { ...env, INIT_LOG: log }, [
    '--import',
    `data:text/javascript,${encodeURIComponent(REGISTER)}`,
  ]);
  const loaded = new Set(readFileSync(log, 'utf8').split('\n'));
  const sdk = [...loaded].filter((module) => module.startsWith('@aws-sdk/'));
  // Node resolves real paths: node_modules may be a link (a worktree's).
  const ownPrefix = pathToFileURL(realpathSync(outdir)).href;
  const readAtInit = [...loaded]
    .filter((module) => module.startsWith(ownPrefix))
    .map((module) => fileURLToPath(module));
  const baseline = join(outdir, 'baseline.mjs');
  writeFileSync(baseline, sdk.map((p) => `import '${p}';`).join('\n'));
  const sizeOf = (files: string[]) =>
    files.reduce((sum, file) => sum + statSync(file).size, 0);
  const code = readdirSync(outdir)
    .filter((file) => file.endsWith('.mjs') && file !== 'baseline.mjs')
    .map((file) => join(outdir, file));
  return {
    outfile: join(outdir, ENTRY_FILE),
    baseline,
    initBytes: sizeOf(readAtInit),
    bytes: sizeOf(code),
    mapBytes: sizeOf(code.map((file) => `${file}.map`)),
  };
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

const main = async () => {
  mkdirSync(outRoot, { recursive: true });
  const functions = [
    ...[...endpointGroups, ...pageGroups].map((g) => ({
      name: g.name,
      entry: g.entry,
      bindings: g.bindings,
      extra: {},
    })),
    // A queue consumer is also told its dead-letter queue.
    ...consumerFunctions.map((c) => ({
      name: `${c.group.name} (queue consumer)`,
      entry: c.group.entry,
      bindings: c.bindings,
      extra: {
        [deadLetterQueueEnv(c.group.name)]:
          'https://sqs.us-east-1.amazonaws.com/123456789012/dlq',
      },
    })),
    ...streamConsumerFunctions.map((c) => ({
      name: `${c.group.name} (stream consumer)`,
      entry: c.group.entry,
      bindings: c.bindings,
      extra: {},
    })),
  ];
  console.log(
    `| function | KB read at init (minified) | KB shipped | map KB | init ms | SDK-only ms | ratio | ratio with --enable-source-maps |`,
  );
  console.log('|---|---|---|---|---|---|---|---|');
  // BENCH_FUNCTIONS=tags,contacts measures only those (names as printed).
  const only = process.env.BENCH_FUNCTIONS?.split(',').map((n) => n.trim());
  for (const fn of functions) {
    if (only && !only.some((name) => fn.name.startsWith(name))) continue;
    const env = envOf(fn.bindings, fn.extra);
    const built = bundle(fn.name.replace(/\W+/g, '-'), fn.entry, env);
    const own: number[] = [];
    const base: number[] = [];
    const mapped: number[] = [];
    // One warm-up each (the file system cache), then the pairs in turn.
    initMs(built.outfile, env);
    initMs(built.baseline, env);
    for (let run = 0; run < RUNS; run++) {
      own.push(initMs(built.outfile, env));
      base.push(initMs(built.baseline, env));
      mapped.push(initMs(built.outfile, env, ['--enable-source-maps']));
    }
    const [ownMs, baseMs, mappedMs] = [
      median(own),
      median(base),
      median(mapped),
    ];
    console.log(
      `| ${fn.name} | ${(built.initBytes / 1024).toFixed(0)} | ${(built.bytes / 1024).toFixed(0)} | ${(built.mapBytes / 1024).toFixed(0)} | ${ownMs.toFixed(0)} | ${baseMs.toFixed(0)} | ${(ownMs / baseMs).toFixed(2)} | ${(mappedMs / baseMs).toFixed(2)} |`,
    );
  }
  rmSync(outRoot, { recursive: true, force: true });
};

await main();
