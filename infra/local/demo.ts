/**
 * The demo organization created on the first start of a local stack, so a
 * new user can call the API at once.
 */
import { join } from 'node:path';
import { addMember, createApiKey } from '../../shared/access/admin.ts';
import type { AdminDeps } from '../../shared/access/ports.ts';
import {
  createOrganization,
  setSendingAllowed,
} from '../../shared/organizations/organizations.ts';
import { writePrivateFile } from './private-file.ts';

/** What the demo seed created. */
export interface Demo {
  orgId: string;
  ownerEmail: string;
  keyId: string;
  apiKey: string;
}

/**
 * Creates the demo organization (on the sending allowlist), its owner and an
 * owner key, and keeps them in `demo.json` of the data dir (mode 0600): a local
 * convenience, so the key survives a restart of the stack.
 */
export const seedDemo = async (
  deps: AdminDeps,
  dataDir: string,
): Promise<Demo> => {
  const org = await createOrganization(deps, { name: 'Demo Organization' });
  await setSendingAllowed(deps, { orgId: org.id }, true);
  const ownerEmail = 'owner@demo.example';
  await addMember(deps, { orgId: org.id, email: ownerEmail, role: 'owner' });
  const key = await createApiKey(deps, {
    orgId: org.id,
    email: ownerEmail,
    name: 'Demo key',
  });
  const demo = { orgId: org.id, ownerEmail, ...key };
  // It holds an owner key: readable by the user only, like secrets.json.
  await writePrivateFile(
    join(dataDir, 'demo.json'),
    `${JSON.stringify(demo, null, 2)}\n`,
  );
  return demo;
};
