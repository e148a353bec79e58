/**
 * Where a webhook may go: the rules of an endpoint URL and of the
 * addresses its host resolves to. An address is allowed only when
 * ipaddr.js classes it as public unicast: loopback, private, link-local
 * (the metadata service at 169.254.169.254 among them), unique-local (AWS's
 * IPv6 metadata address fd00:ec2::254 among them), carrier-grade NAT,
 * multicast, unspecified, broadcast, reserved and documentation ranges,
 * NAT64 and 6to4 prefixes (which embed an IPv4 address) are refused, and
 * an IPv4 address written as IPv6 (`::ffff:10.0.0.1`) is judged as the
 * IPv4 address it is. The local stack may allow loopback (its inbox), never
 * the rest. The URL's check runs at registration; the address check runs
 * on every attempt, on what the host resolves to then.
 */
import ipaddr from 'ipaddr.js';
import type { WebhookUrlRules } from './delivery-ports.ts';
import { MAX_WEBHOOK_URL_LENGTH } from './model.ts';

/** The metadata services' addresses, named in refusals. */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254']);

/**
 * IPv6's global unicast block. ipaddr.js calls every IPv6 address outside
 * its named ranges unicast, the IETF-reserved ::/8 among them — where the
 * deprecated IPv4-compatible form lives (`::a9fe:a9fe`, which a URL parser
 * makes of `[::169.254.169.254]`): only this block is public.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** How ipaddr.js's range names read in a refusal. */
const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local (private) address',
  carrierGradeNat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
};

/**
 * Why an address may not be called, or undefined when it may. Anything
 * but public unicast is refused (loopback allowed by `allowLoopback`).
 */
export const addressRefusal = (
  address: string,
  rules: Pick<WebhookUrlRules, 'allowLoopback'>,
): string | undefined => {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  // An IPv4 address written as IPv6 is that IPv4 address.
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  const shown = parsed.toString();
  if (range === 'unicast') {
    if (parsed.kind() === 'ipv4' || parsed.match(GLOBAL_UNICAST_V6)) {
      return undefined;
    }
    return `${address} is not a public address (outside IPv6's global unicast 2000::/3)`;
  }
  if (range === 'loopback' && rules.allowLoopback) return undefined;
  if (METADATA.has(shown)) {
    return `${address} is the cloud's instance metadata address`;
  }
  return `${address} is ${RANGE_NAMES[range] ?? `not a public address (${range})`}`;
};

/** The address a URL's host is written as, if it is one (IPv6 unbracketed). */
const literalAddress = (hostname: string): string | undefined => {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(bare) ? bare : undefined;
};

/**
 * Why a URL may not be an endpoint here, or undefined when it may: http or
 * https (https only on AWS), no user name or password, no fragment, at
 * most 1,000 characters, and a host written as an address must be one the
 * rules allow (a name is checked when it resolves, on each attempt); no
 * space or control character, which the parser would silently drop.
 */
export const urlRefusal = (
  text: string,
  rules: WebhookUrlRules,
): string | undefined => {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) {
    return `must be at most ${MAX_WEBHOOK_URL_LENGTH.toLocaleString('en')} characters`;
  }
  // The URL parser drops spaces and controls (`http://exa\tmple.com/`
  // calls example.com): the endpoint would show what it never calls.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refused on purpose
  if (/[\u0000-\u0020\u007f]/.test(text)) {
    return 'must not hold spaces or control characters';
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return 'must be an https URL';
  }
  if (url.protocol === 'http:' && rules.httpsOnly) {
    return 'must be an https URL (http is taken by the local stack only)';
  }
  if (url.username || url.password) {
    return 'must not hold a user name or password: sign-in is the signature’s job';
  }
  if (url.hash) return 'must not have a fragment (#…)';
  const address = literalAddress(url.hostname);
  if (address) {
    const refusal = addressRefusal(address, rules);
    if (refusal) return `must reach a public address: ${refusal}`;
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (
    !rules.allowLoopback &&
    (host === 'localhost' || host.endsWith('.localhost'))
  ) {
    return 'must reach a public address: localhost is this machine';
  }
  return undefined;
};
