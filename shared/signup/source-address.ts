/**
 * The source a sign-up counts against. An IPv4 address is one source; an
 * IPv6 address counts with its whole /64, since one subscriber line or one
 * server usually holds a /64 (2^64 addresses) and could otherwise take a
 * fresh counter per request. IPv4 written as IPv6 (`::ffff:192.0.2.1`)
 * counts as the IPv4 address. Parsing and prefixes are ipaddr.js's.
 */
import ipaddr from 'ipaddr.js';

/** The counter key of a visitor's address: `192.0.2.1`, `2001:db8:1:2::/64`. */
export const sourceOf = (ip: string | undefined): string => {
  if (!ip || !ipaddr.isValid(ip)) return 'unknown';
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(
    `${address.toString()}/64`,
  );
  return `${network.toString()}/64`;
};
