/**
 * The contract check itself (test/support/contract.ts), which the
 * in-process client runs on every answer: it must refuse each way an answer
 * can stray from its route's declaration.
 */

import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../shared/deps.ts';
import { created, htmlPage, paginated } from '../../shared/http/responses.ts';
import {
  html,
  json,
  page,
  type Route,
  routeFor,
} from '../../shared/http/route.ts';
import { contractProblems } from '../support/contract.ts';

const route = routeFor<Deps>();

const Thing = v.object({ id: v.string(), count: v.number() });

const keyed = route({
  method: 'POST',
  path: '/things',
  role: 'admin',
  summary: 'Make a thing',
  description: 'Makes a thing.',
  body: v.object({ name: v.string() }),
  responses: { 201: json(Thing, 'The thing') },
  errors: ['list.notFound'],
  handle: async () => created({ id: 'a', count: 1 }),
});

const listed = route({
  method: 'GET',
  path: '/things',
  role: 'member',
  summary: 'Things',
  description: 'Every thing.',
  responses: { 200: page(Thing, 'A page of things') },
  errors: [],
  handle: async () =>
    paginated({ items: [], total: 0 }, { page: 1, limit: 20 }),
});

const shown = route({
  method: 'GET',
  path: '/public/thing',
  role: 'public',
  summary: 'A page',
  description: 'A page.',
  query: v.object({ token: v.string() }),
  responses: { 200: html('The page') },
  errors: ['link.expired'],
  handle: async () => htmlPage(200, '<p>hi</p>'),
});

const answer = (
  statusCode: number,
  body: unknown,
  contentType = 'application/json',
) => ({
  statusCode,
  headers: { 'content-type': contentType },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

const check = (r: Route, statusCode: number, body: unknown, type?: string) =>
  contractProblems(r, answer(statusCode, body, type));

describe('the contract check of an answer', () => {
  it('accepts a declared status with the declared data in the envelope', () => {
    expect(
      check(keyed, 201, { success: true, data: { id: 'a', count: 2 } }),
    ).toEqual([]);
  });

  it('refuses a status the route does not declare', () => {
    expect(
      check(keyed, 200, { success: true, data: { id: 'a', count: 2 } }),
    ).toEqual(['POST /things answered 200, a status it does not declare']);
  });

  it('refuses data that does not match the schema, naming the field', () => {
    const problems = check(keyed, 201, {
      success: true,
      data: { id: 'a', count: '2' },
    });
    expect(problems.join()).toContain('data.count');
  });

  it('refuses a field the schema does not declare', () => {
    const problems = check(keyed, 201, {
      success: true,
      data: { id: 'a', count: 2, secret: 'x' },
    });
    expect(problems.join()).toContain('fields the schema does not declare');
  });

  it('refuses a success without the envelope', () => {
    expect(check(keyed, 201, { id: 'a', count: 2 })).not.toEqual([]);
  });

  it('checks a page: items of the schema and a pagination', () => {
    const pagination = { total: 1, page: 1, limit: 20, totalPages: 1 };
    expect(
      check(listed, 200, {
        success: true,
        data: [{ id: 'a', count: 1 }],
        pagination,
      }),
    ).toEqual([]);
    expect(
      check(listed, 200, { success: true, data: [{ id: 'a' }], pagination }),
    ).not.toEqual([]);
    expect(check(listed, 200, { success: true, data: [] })).not.toEqual([]);
  });

  it("accepts an error code the route or its pipeline declares, at the code's status", () => {
    expect(
      check(keyed, 404, { error: 'No list', code: 'list.notFound' }),
    ).toEqual([]);
    // The pipeline's: an admin route with a body.
    expect(
      check(keyed, 403, { error: 'Role', code: 'auth.roleTooLow' }),
    ).toEqual([]);
    expect(
      check(keyed, 415, { error: 'Type', code: 'request.mediaType' }),
    ).toEqual([]);
    expect(
      check(keyed, 400, {
        error: 'Invalid',
        code: 'request.invalid',
        details: [{ field: 'name', message: 'must be a string' }],
      }),
    ).toEqual([]);
  });

  it('refuses an error code the route does not declare, or at another status', () => {
    expect(
      check(keyed, 404, { error: 'No tag', code: 'tag.notFound' }),
    ).toEqual([
      'POST /things answered 404 with code tag.notFound, which it does not declare',
    ]);
    expect(
      check(keyed, 400, { error: 'No list', code: 'list.notFound' }),
    ).toEqual([
      'POST /things answered 400 with code list.notFound, whose status is 404',
    ]);
    expect(
      check(listed, 403, { error: 'Role', code: 'auth.roleTooLow' }),
    ).toEqual([
      'GET /things answered 403 with code auth.roleTooLow, which it does not declare',
    ]);
    expect(check(keyed, 418, { error: 'Tea', code: 'tea.pot' })).toEqual([
      'POST /things answered 418 with code tea.pot, not in the list',
    ]);
  });

  it('refuses an error body outside the envelope', () => {
    expect(check(keyed, 404, { message: 'No list' })).not.toEqual([]);
  });

  it('checks public pages: HTML for success, and errors at a declared status', () => {
    const type = 'text/html; charset=utf-8';
    expect(check(shown, 200, '<p>hi</p>', type)).toEqual([]);
    expect(check(shown, 200, { success: true })).not.toEqual([]);
    expect(check(shown, 410, '<p>expired</p>', type)).toEqual([]);
    expect(check(shown, 400, '<p>bad</p>', type)).toEqual([]);
    // The edge's 429s (method throttle, firewall per address) are JSON.
    expect(
      check(shown, 429, { error: 'Slow down', code: 'rateLimit.perSource' }),
    ).toEqual([]);
    expect(check(shown, 409, '<p>conflict</p>', type)).toEqual([
      'GET /public/thing answered 409, a status none of its error codes has',
    ]);
  });
});
