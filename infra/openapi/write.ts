/**
 * `npm run openapi`: writes the OpenAPI 3.1 document of every endpoint
 * group to `dist/openapi.json` (or the path given), from the route
 * declarations, as the `docs` group serves it (with the relative server
 * `/api/v1`). CI lints the file with redocly.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endpointGroups } from '../../functions/groups.ts';
import { buildOpenApi } from '../../shared/http/openapi.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const target = resolve(repoRoot, process.argv[2] ?? 'dist/openapi.json');

const document = buildOpenApi(endpointGroups);
await mkdir(dirname(target), { recursive: true });
await writeFile(target, `${JSON.stringify(document, null, 2)}\n`);
const operations = Object.values(document.paths ?? {}).flatMap((item) =>
  Object.keys(item),
).length;
console.log(`Wrote ${target}: ${operations} operations`);
