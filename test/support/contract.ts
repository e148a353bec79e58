/**
 * The contract check of an answer: a route answers only a status it
 * declares, with a body its declaration describes — a success with the
 * declared schema in the spec's envelope (and no field the schema does not
 * name), an error with a code the route declares (or its pipeline adds)
 * whose status is the code's. The in-process client runs it on every answer
 * of every test.
 */
import { isDeepStrictEqual } from 'node:util';
import * as v from 'valibot';
import { ERROR_CODES, isErrorCode } from '../../shared/errors.ts';
import {
  ErrorEnvelope,
  pageEnvelope,
  successEnvelope,
} from '../../shared/http/envelopes.ts';
import { errorsOf, type Route } from '../../shared/http/route.ts';

/** An answer as a client receives it. */
export interface Received {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

const contentTypeOf = (headers: Record<string, string>) =>
  Object.entries(headers).find(
    ([name]) => name.toLowerCase() === 'content-type',
  )?.[1] ?? '';

/**
 * Parses with the schema and compares: a view schema has no transforms,
 * so any difference is a field the schema does not name (valibot objects
 * drop unknown keys).
 */
const schemaProblems = (schema: v.GenericSchema, value: unknown): string[] => {
  const result = v.safeParse(schema, value);
  if (!result.success) {
    return result.issues.map(
      (issue) =>
        `${v.getDotPath(issue) ?? '(body)'}: ${issue.message} (got ${JSON.stringify(issue.input)?.slice(0, 80)})`,
    );
  }
  if (!isDeepStrictEqual(result.output, value)) {
    return [
      `the body holds fields the schema does not declare: ${JSON.stringify(value).slice(0, 300)}`,
    ];
  }
  return [];
};

/** What is wrong with an answer of `route`; empty when it keeps the contract. */
export const contractProblems = (route: Route, answer: Received): string[] => {
  const { statusCode } = answer;
  const where = `${route.method} ${route.path} answered ${statusCode}`;
  const isHtml = contentTypeOf(answer.headers).startsWith('text/html');
  if (statusCode < 400) {
    const declared = route.responses[statusCode as 200];
    if (!declared) return [`${where}, a status it does not declare`];
    if (declared.kind === 'html') {
      return isHtml ? [] : [`${where} without an HTML page`];
    }
    if (declared.kind === 'file') {
      const type = contentTypeOf(answer.headers).split(';')[0]?.trim();
      return type === declared.contentType
        ? []
        : [`${where} with ${type}, not ${declared.contentType}`];
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [`${where} with a body that is not JSON`];
    }
    const envelope =
      declared.kind === 'json'
        ? successEnvelope(declared.schema)
        : pageEnvelope(declared.schema);
    return schemaProblems(envelope, body).map((p) => `${where}: ${p}`);
  }
  const codes = errorsOf(route);
  if (route.role === 'public' && isHtml) {
    const statuses = new Set(codes.map((code) => ERROR_CODES[code].status));
    return statuses.has(statusCode as 400)
      ? []
      : [`${where}, a status none of its error codes has`];
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return [`${where} with an error body that is not JSON`];
  }
  const problems = schemaProblems(ErrorEnvelope, body);
  if (problems.length) return problems.map((p) => `${where}: ${p}`);
  const { code } = body as { code: string };
  if (!isErrorCode(code))
    return [`${where} with code ${code}, not in the list`];
  if (!codes.includes(code)) {
    return [`${where} with code ${code}, which it does not declare`];
  }
  if (ERROR_CODES[code].status !== statusCode) {
    return [
      `${where} with code ${code}, whose status is ${ERROR_CODES[code].status}`,
    ];
  }
  return [];
};
