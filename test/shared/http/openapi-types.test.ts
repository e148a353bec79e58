/**
 * A client written against the document's types: `openapi-typescript`
 * turns the OpenAPI document into TypeScript, a small `openapi-fetch`
 * client uses them, and the TypeScript compiler checks it. Correct calls
 * compile; a call the server would refuse does not (each is marked
 * `@ts-expect-error`, which itself fails when no error is there).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../../functions/groups.ts';
import { buildOpenApi } from '../../../shared/http/openapi.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Compiling the client reads the generated types: a limit against a hang. */
const TIMEOUT = 120_000;

/** The client: each refused call is on the line after its directive. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths, webhooks } from './api.js';

const client = createClient<paths>({ baseUrl: 'https://mail.example.test/api/v1' });
const listId = '00000000-0000-4000-8000-000000000001';
const path = { params: { path: { listId } } } as const;

export const imports = () =>
  client.POST('/lists/{listId}/contacts/bulk', {
    ...path,
    body: {
      contacts: [
        { email: 'ada@example.test', firstName: 'Ada', tags: ['vip'], status: 'subscribed', optinIp: '198.51.100.7', confirmedAt: '2026-11-01T09:00:00Z' },
        { email: 'grace@example.test' },
      ],
    },
  });

export const renames = () =>
  client.PATCH('/contacts/{contactId}', {
    params: { path: { contactId: listId } },
    body: { firstName: null, status: 'unsubscribed' },
  });

export const typo = () =>
  // @ts-expect-error: a bulk entry has no emial (and needs its email)
  client.POST('/lists/{listId}/contacts/bulk', { ...path, body: { contacts: [{ emial: 'ada@example.test' }] } });

/** An entry as the document types it (a call's literal may carry more keys through openapi-fetch). */
type ImportEntry = paths['/lists/{listId}/contacts/bulk']['post']['requestBody']['content']['application/json']['contacts'][number];
export const entry: ImportEntry = { email: 'ada@example.test', confirmedIp: '2001:db8::1' };
// @ts-expect-error: a bulk entry has no emial
export const typoBesideEmail: ImportEntry = { email: 'ada@example.test', emial: 'x' };

/** A PATCH body stays typed (its "at least one field" is a constraint, not an alternative). */
type ContactChange = paths['/contacts/{contactId}']['patch']['requestBody']['content']['application/json'];
export const change: ContactChange = { lastName: 'Lovelace' };
// @ts-expect-error: a contact has no firstNme
export const misspelt: ContactChange = { firstNme: 'Ada' };
// @ts-expect-error: no such status
export const wrongStatus: ContactChange = { status: 'active' };

export const doubleOptIn = () =>
  // @ts-expect-error: a bulk import sends nothing: no doubleOptIn
  client.POST('/lists/{listId}/contacts/bulk', { ...path, body: { contacts: [{ email: 'ada@example.test', doubleOptIn: true }] } });

export const unknownStatus = () =>
  // @ts-expect-error: no such status
  client.POST('/lists/{listId}/contacts/bulk', { ...path, body: { contacts: [{ email: 'ada@example.test', status: 'active' }] } });

/** A webhook receiver, typed from the document's \`webhooks\` (issue 32). */
type Unsubscribed = webhooks['contact.unsubscribed']['post']['requestBody']['content']['application/json'];
export const onUnsubscribed = (event: Unsubscribed): string =>
  \`\${event.id} \${event.type} \${event.data.contact.email} by \${event.data.via ?? 'unknown'}\`;
type Clicked = webhooks['mail.clicked']['post']['requestBody']['content']['application/json'];
export const onClicked = (event: Clicked): string => \`\${event.data.link} \${event.data.mail.campaignId ?? ''}\`;
// @ts-expect-error: an unsubscribed event names no tag
export const tagOfUnsubscribed = (event: Unsubscribed) => event.data.tag;

/** Campaign control (issue 33): pause, then read why; a pause takes no body. */
const campaign = { params: { path: { campaignId: listId } } } as const;
export const pauseAndRead = async () => {
  const { data } = await client.POST('/campaigns/{campaignId}/pause', campaign);
  const reason = data?.data.paused?.reason;
  const byRequest: NonNullable<typeof reason> = 'requested';
  return \`\${data?.data.status} \${reason === byRequest ? 'paused' : 'running'}\`;
};
export const cancelReason = async () => {
  const { data } = await client.POST('/campaigns/{campaignId}/cancel', campaign);
  return data?.data.failure?.reason === 'cancelled';
};
// @ts-expect-error: there is no "stop" action (pause, resume, cancel, unschedule)
export const stop = () => client.POST('/campaigns/{campaignId}/stop', campaign);
`;

/** The compiler's diagnostics of `file`, as `line: message`. */
const diagnosticsOf = (file: string): string[] => {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const line =
      diagnostic.file && diagnostic.start !== undefined
        ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line +
          1
        : 0;
    return `${line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
};

describe('a client typed from the OpenAPI document', () => {
  let dir: string;

  beforeAll(async () => {
    // Below the repository's node_modules, so `openapi-fetch` resolves.
    const cache = join(repoRoot, 'node_modules', '.cache');
    await mkdir(cache, { recursive: true });
    dir = await mkdtemp(join(cache, 'openapi-client-'));
    const types = astToString(
      await openapiTS(buildOpenApi(endpointGroups) as never),
    );
    await writeFile(join(dir, 'package.json'), '{"type": "module"}\n');
    await writeFile(join(dir, 'api.ts'), types);
    await writeFile(join(dir, 'client.ts'), CLIENT);
    await writeFile(
      join(dir, 'without-directives.ts'),
      CLIENT.replaceAll('// @ts-expect-error', '// expected:'),
    );
  }, TIMEOUT);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'compiles the correct calls, and refuses each call the server would refuse',
    () => {
      // Act
      const diagnostics = diagnosticsOf(join(dir, 'client.ts'));
      // Assert: an unused @ts-expect-error is itself a diagnostic.
      expect(diagnostics).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'refuses the typo for what it is: an entry without email, or with emial',
    () => {
      // Act
      const diagnostics = diagnosticsOf(join(dir, 'without-directives.ts'));
      const lines = CLIENT.split('\n');
      const refused = lines.flatMap((text, i) =>
        text.includes('// @ts-expect-error') ? [i + 2] : [],
      );
      // Assert: exactly the marked calls fail, the typos naming `emial`.
      expect([
        ...new Set(diagnostics.map((d) => Number(d.split(':')[0]))),
      ]).toEqual(refused);
      const typos = diagnostics.filter((d) =>
        [refused[0], refused[1]].includes(Number(d.split(':')[0])),
      );
      expect(typos.join('\n')).toMatch(/emial/);
    },
    TIMEOUT,
  );
});
