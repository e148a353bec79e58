/**
 * Bindings decide what a function's code may call. These checks are made
 * by the type checker (`npm run typecheck`, run by CI): each
 * `@ts-expect-error` below fails the build the day the line it marks
 * compiles, that is, the day a group could call what it did not bind.
 */

import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { endpointGroup, endpointGroups } from '../../functions/groups.ts';
import { sendConfirmation } from '../../shared/audience/confirmation.ts';
import {
  type DepsOf,
  type endpoints,
  type mail,
  PIPELINE_ACTIONS,
  table,
} from '../../shared/bindings.ts';
import { ok } from '../../shared/http/responses.ts';
import { json, routeFor } from '../../shared/http/route.ts';

const tableOnly = [
  table({ stores: [], actions: [...PIPELINE_ACTIONS] }),
] as const;
const route = routeFor<DepsOf<typeof tableOnly>>();
const Sent = v.object({ sent: v.boolean() });

describe('bindings', () => {
  it('type a route with its group deps: a capability not bound does not compile', () => {
    const declared = route({
      method: 'POST',
      path: '/example',
      role: 'admin',
      summary: 'An example',
      description: 'Sends mail from a group that binds only the table',
      responses: { 200: json(Sent, 'Sent') },
      errors: [],
      handle: async (deps) => {
        // @ts-expect-error the group binds no mailer
        await deps.mailer.send({
          from: 'a@b.test',
          to: 'c@d.test',
          subject: '',
          html: '',
          text: '',
        });
        // @ts-expect-error nor links, nor the endpoints nor readiness
        await sendConfirmation(deps, 'org', {} as never);
        return ok({ sent: true });
      },
    });
    expect(declared.path).toBe('/example');
  });

  it('type a route with the stores its table binding names: a store not named does not compile', () => {
    const listsOnly = [
      table({ stores: ['lists'], actions: ['dynamodb:GetItem'] }),
    ] as const;
    const declared = routeFor<DepsOf<typeof listsOnly>>()({
      method: 'GET',
      path: '/example',
      role: 'member',
      summary: 'An example',
      description: 'Reads a list, and would read a contact',
      responses: { 200: json(Sent, 'Sent') },
      errors: [],
      handle: async (deps) => {
        await deps.lists.get('org', 'list');
        // @ts-expect-error the table binding names no contacts store
        await deps.contacts.get('org', 'contact');
        return ok({ sent: false });
      },
    });
    expect(declared.path).toBe('/example');
  });

  it('refuse a group whose routes need more than its bindings', () => {
    const needsMail = routeFor<
      DepsOf<readonly [typeof mail, typeof endpoints]>
    >()({
      method: 'GET',
      path: '/mailer',
      role: 'member',
      summary: 'Needs the mailer',
      description: 'Needs the mailer',
      responses: { 200: json(Sent, 'Sent') },
      errors: [],
      handle: async (deps) => ok({ sent: Boolean(deps.mailer) }),
    });
    const declare = () =>
      endpointGroup({
        name: 'example',
        description: 'An example',
        entry: 'functions/example/lambda.ts',
        bindings: tableOnly,
        // @ts-expect-error the route needs the mailer, the group binds none
        routes: [needsMail],
        pipeline: () => async () => ({ statusCode: 200, body: '' }),
      });
    expect(declare().routes).toHaveLength(1);
  });

  it('every group of the API binds something and names each kind once', () => {
    for (const group of endpointGroups) {
      const kinds = group.bindings.map((binding) => binding.kind);
      expect(kinds.length, group.name).toBeGreaterThan(0);
      expect(new Set(kinds).size, group.name).toBe(kinds.length);
    }
  });
});
