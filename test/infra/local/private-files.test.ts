import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seedDemo } from '../../../infra/local/demo.ts';
import { localSecret } from '../../../infra/local/secrets.ts';
import { createTestDeps } from '../../support/dynamo.ts';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe('files of the local stack that hold secrets', () => {
  it('A13: writes demo.json (an owner key) with mode 0600, even over a wider file', async () => {
    // Arrange: a data dir whose demo.json was left world-readable.
    const { admin } = await createTestDeps();
    const dataDir = await mkdtemp(join(tmpdir(), 'private-files-'));
    await writeFile(join(dataDir, 'demo.json'), '{}', { mode: 0o644 });
    // Act
    const demo = await seedDemo(admin, dataDir);
    // Assert
    expect(await modeOf(join(dataDir, 'demo.json'))).toBe(0o600);
    expect(demo.apiKey).toMatch(/^emk_/);
  });

  it('writes secrets.json with mode 0600, even over a wider file', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'private-files-'));
    await writeFile(join(dataDir, 'secrets.json'), '{}', { mode: 0o644 });
    await localSecret(dataDir, 'linkSigning');
    expect(await modeOf(join(dataDir, 'secrets.json'))).toBe(0o600);
  });
});
