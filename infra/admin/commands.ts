/**
 * The admin CLI's commands: parse the words and flags, call one operator
 * service (or, for `local …`, change one file of the local data dir), return
 * one JSON-able object.
 */
import { parseArgs } from 'node:util';
import {
  addMember,
  createApiKey,
  indexApiKeys,
  removeMember,
  revokeApiKey,
} from '../../shared/access/admin.ts';
import type { AdminDeps } from '../../shared/access/ports.ts';
import { LocalClock } from '../../shared/adapters/local/local-clock.ts';
import {
  createOrganization,
  recountOrganization,
  rekeySuppressions,
  setSendingAllowed,
  setSendingEnabled,
  setSendQuota,
  setSequenceCap,
} from '../../shared/organizations/organizations.ts';
import { liftOrganizationGuardrail } from '../../shared/reputation/reputation.ts';
import {
  advanceLocalClock,
  readLocalClock,
  resetLocalClock,
} from './local-clock.ts';
import {
  clearLocalDns,
  type LocalFiles,
  setLocalDnsRecord,
  setLocalOutage,
  setLocalQuota,
  setLocalSimulation,
  setLocalTenantStatus,
} from './local-commands.ts';
import { injectLocalProviderEvent } from './local-provider-events.ts';

/** What every command has: its words and the flags it needs or accepts. */
interface CommandWords {
  words: string;
  flags: string[];
  optionalFlags?: string[];
  /** Placeholders of this command's flags in the usage text. */
  placeholders?: Record<string, string>;
}

/** A command on a stack's operator services (local or deployed). */
interface StackCommand extends CommandWords {
  local?: false;
  run(deps: AdminDeps, flags: Record<string, string>): Promise<object>;
}

/**
 * A command on the files of the local data dir: it needs no running stack,
 * and there is nothing to act on in a deployed one.
 */
interface LocalCommand extends CommandWords {
  local: true;
  run(files: LocalFiles, flags: Record<string, string>): Promise<object>;
}

/** A command: its words, the flags it needs, and what it does. */
export type Command = StackCommand | LocalCommand;

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
    words: 'org quota',
    flags: ['org', 'max24h'],
    run: (deps, f) =>
      setSendQuota(deps, { orgId: f.org ?? '', max24h: f.max24h ?? '' }),
  },
  {
    words: 'org plan',
    flags: ['org', 'sequences'],
    run: (deps, f) =>
      setSequenceCap(deps, {
        orgId: f.org ?? '',
        sequences: f.sequences ?? '',
      }),
  },
  {
    words: 'org guardrail lift',
    flags: ['org'],
    run: (deps, f) => liftOrganizationGuardrail(deps, { orgId: f.org ?? '' }),
  },
  {
    words: 'org recount',
    flags: ['org'],
    run: (deps, f) => recountOrganization(deps, { orgId: f.org ?? '' }),
  },
  {
    words: 'suppressions rekey',
    flags: ['org'],
    run: (deps, f) => rekeySuppressions(deps, { orgId: f.org ?? '' }),
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
    optionalFlags: ['name', 'scopes'],
    placeholders: { name: 'keyName', scopes: 'read,audience,…' },
    run: (deps, f) =>
      createApiKey(deps, {
        orgId: f.org ?? '',
        email: f.email ?? '',
        ...(f.name !== undefined ? { name: f.name } : {}),
        ...(f.scopes !== undefined ? { scopes: f.scopes } : {}),
      }),
  },
  {
    words: 'key index',
    flags: ['org'],
    run: (deps, f) => indexApiKeys(deps, { orgId: f.org ?? '' }),
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
  {
    words: 'local dns set',
    flags: ['name', 'type', 'value'],
    optionalFlags: ['priority'],
    local: true,
    run: (files, f) => setLocalDnsRecord(files, f),
  },
  {
    words: 'local dns clear',
    flags: [],
    local: true,
    run: (files) => clearLocalDns(files),
  },
  {
    words: 'local provider suspend',
    flags: ['org'],
    local: true,
    run: (files, f) =>
      setLocalTenantStatus(files, { orgId: f.org ?? '' }, 'DISABLED'),
  },
  {
    words: 'local provider reinstate',
    flags: ['org'],
    local: true,
    run: (files, f) =>
      setLocalTenantStatus(files, { orgId: f.org ?? '' }, 'ENABLED'),
  },
  {
    words: 'local provider outage on',
    flags: [],
    local: true,
    run: (files) => setLocalOutage(files, true),
  },
  {
    words: 'local provider outage off',
    flags: [],
    local: true,
    run: (files) => setLocalOutage(files, false),
  },
  {
    words: 'local provider simulate',
    flags: [],
    optionalFlags: ['bounces', 'complaints', 'machine-opens', 'scanner-clicks'],
    placeholders: {
      bounces: 'share',
      complaints: 'share',
      'machine-opens': 'share',
      'scanner-clicks': 'share',
    },
    local: true,
    run: (files, f) => setLocalSimulation(files, f),
  },
  {
    words: 'local quota set',
    flags: ['max24h', 'rate'],
    local: true,
    run: (files, f) => setLocalQuota(files, f),
  },
  {
    words: 'local provider event',
    flags: ['type'],
    optionalFlags: ['message', 'campaign', 'email', 'link'],
    placeholders: {
      type: 'open|click',
      message: 'messageId',
      campaign: 'campaignId',
      email: 'address',
      link: 'url',
    },
    local: true,
    // Events are stamped with the stack's own (movable) time.
    run: (files, f) =>
      injectLocalProviderEvent(files, f, new LocalClock(files.clockFile)),
  },
  {
    words: 'local clock advance',
    flags: ['minutes'],
    local: true,
    run: (files, f) => advanceLocalClock(files, f),
  },
  {
    words: 'local clock show',
    flags: [],
    local: true,
    run: (files) => readLocalClock(files),
  },
  {
    words: 'local clock reset',
    flags: [],
    local: true,
    run: (files) => resetLocalClock(files),
  },
];

/** Placeholders in the usage text, where the flag's name says too little. */
const PLACEHOLDERS: Record<string, string> = {
  type: 'TXT|CNAME|MX',
  name: 'name',
  org: 'orgId',
  key: 'keyId',
  max24h: 'emailsPer24h',
  sequences: 'count',
  rate: 'emailsPerSecond',
};

const usageLine = (c: Command) => {
  const placeholder = (f: string) => c.placeholders?.[f] ?? PLACEHOLDERS[f];
  return [
    `  ${c.words}`,
    ...c.flags.map((f) => ` --${f} <${placeholder(f) ?? f}>`),
    ...(c.optionalFlags ?? []).map((f) => ` [--${f} <${placeholder(f) ?? f}>]`),
  ].join('');
};

/** How to use the CLI, printed on a usage error. */
export const USAGE = `Usage: npm run --silent admin -- <command> [--stack <name> [--region <r>]] [--data-dir <dir>]
Commands:
${COMMANDS.filter((c) => !c.local)
  .map(usageLine)
  .join('\n')}
Without --stack, acts on the local stack of --data-dir (default $LOCAL_DATA_DIR or .local).
Local-only commands (they act on the files of --data-dir, no --stack; only "local provider event" needs the stack running):
${COMMANDS.filter((c) => c.local)
  .map(usageLine)
  .join('\n')}`;

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
          'type',
          'value',
          'priority',
          'max24h',
          'sequences',
          'rate',
          'message',
          'campaign',
          'link',
          'minutes',
          'scopes',
          'bounces',
          'complaints',
          'machine-opens',
          'scanner-clicks',
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
  const optional = command.optionalFlags ?? [];
  const extra = Object.keys(values).filter(
    (flag) =>
      !command.flags.includes(flag) &&
      !optional.includes(flag) &&
      !['stack', 'region', 'data-dir'].includes(flag),
  );
  if (extra.length) {
    throw new UsageError(
      `"${words}" does not take ${extra.map((f) => `--${f}`).join(', ')}`,
    );
  }
  if (command.local && (values.stack || values.region)) {
    throw new UsageError(
      `"${words}" acts on the files of a local data dir: it does not take --stack or --region`,
    );
  }
  const flags = Object.fromEntries([
    ...command.flags.map((flag) => [flag, values[flag] ?? '']),
    ...optional
      .filter((flag) => values[flag] !== undefined)
      .map((flag) => [flag, values[flag] ?? '']),
  ]);
  return {
    command,
    flags,
    ...(values.stack ? { stack: values.stack } : {}),
    ...(values.region ? { region: values.region } : {}),
    ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
  };
};
