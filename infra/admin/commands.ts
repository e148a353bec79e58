/**
 * The admin CLI's commands: parse the words and flags, call one operator
 * service, return one JSON-able object.
 */
import { parseArgs } from 'node:util';
import {
  addMember,
  createApiKey,
  removeMember,
  revokeApiKey,
} from '../../shared/access/admin.ts';
import {
  createOrganization,
  setSendingAllowed,
  setSendingEnabled,
} from '../../shared/organizations/organizations.ts';
import type { AdminDeps } from '../../shared/ports.ts';

/** A command: its words, the flags it needs, and what it does. */
interface Command {
  words: string;
  flags: string[];
  run(deps: AdminDeps, flags: Record<string, string>): Promise<object>;
}

/** Every command of the CLI. */
export const COMMANDS: Command[] = [
  {
    words: 'org create',
    flags: ['name'],
    run: (deps, f) => createOrganization(deps, { name: f.name ?? '' }),
  },
  {
    words: 'org allow',
    flags: ['org'],
    run: (deps, f) => setSendingAllowed(deps, { orgId: f.org ?? '' }, true),
  },
  {
    words: 'org disallow',
    flags: ['org'],
    run: (deps, f) => setSendingAllowed(deps, { orgId: f.org ?? '' }, false),
  },
  {
    words: 'member add',
    flags: ['org', 'email', 'role'],
    run: (deps, f) =>
      addMember(deps, {
        orgId: f.org ?? '',
        email: f.email ?? '',
        role: f.role ?? '',
      }),
  },
  {
    words: 'member remove',
    flags: ['org', 'email'],
    run: (deps, f) =>
      removeMember(deps, { orgId: f.org ?? '', email: f.email ?? '' }),
  },
  {
    words: 'key create',
    flags: ['org', 'email'],
    run: (deps, f) =>
      createApiKey(deps, { orgId: f.org ?? '', email: f.email ?? '' }),
  },
  {
    words: 'key revoke',
    flags: ['key'],
    run: (deps, f) => revokeApiKey(deps, { keyId: f.key ?? '' }),
  },
  {
    words: 'sending disable',
    flags: [],
    run: (deps) => setSendingEnabled(deps, false),
  },
  {
    words: 'sending enable',
    flags: [],
    run: (deps) => setSendingEnabled(deps, true),
  },
];

/** How to use the CLI, printed on a usage error. */
export const USAGE = `Usage: npm run --silent admin -- <command> [--stack <name> [--region <r>]] [--data-dir <dir>]
Commands:
${COMMANDS.map((c) => `  ${c.words}${c.flags.map((f) => ` --${f} <${f}>`).join('')}`).join('\n')}
Without --stack, acts on the local stack of --data-dir (default $LOCAL_DATA_DIR or .local).`;

/** A parsed command line. */
export interface Invocation {
  command: Command;
  flags: Record<string, string>;
  stack?: string;
  region?: string;
  dataDir?: string;
}

/** A mistake in the command line (exit code 2). */
export class UsageError extends Error {}

/** Parses argv into a command and its flags; `UsageError` on any mistake. */
export const parseInvocation = (argv: string[]): Invocation => {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: Object.fromEntries(
        [
          'name',
          'org',
          'email',
          'role',
          'key',
          'stack',
          'region',
          'data-dir',
        ].map((flag) => [flag, { type: 'string' as const }]),
      ),
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const words = parsed.positionals.join(' ');
  const command = COMMANDS.find((c) => c.words === words);
  if (!command) throw new UsageError(`Unknown command "${words}"`);
  const values = parsed.values as Record<string, string | undefined>;
  const missing = command.flags.filter((flag) => !values[flag]);
  if (missing.length) {
    throw new UsageError(
      `"${words}" needs ${missing.map((f) => `--${f}`).join(', ')}`,
    );
  }
  const extra = Object.keys(values).filter(
    (flag) =>
      !command.flags.includes(flag) &&
      !['stack', 'region', 'data-dir'].includes(flag),
  );
  if (extra.length) {
    throw new UsageError(
      `"${words}" does not take ${extra.map((f) => `--${f}`).join(', ')}`,
    );
  }
  const flags = Object.fromEntries(
    command.flags.map((flag) => [flag, values[flag] ?? '']),
  );
  return {
    command,
    flags,
    ...(values.stack ? { stack: values.stack } : {}),
    ...(values.region ? { region: values.region } : {}),
    ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
  };
};
