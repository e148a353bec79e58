/**
 * The networks of mail security scanners: addresses from which no person
 * reads mail, so an open or a click from them is a machine's. A short,
 * maintained table of ranges their owners publish (or that were seen
 * scanning), each with its source; docs/features/engagement.md keeps the
 * evidence. Whole cloud networks (Azure, Google Cloud) are not here: a
 * person's browser can sit behind them.
 */
import { BlockList, isIP } from 'node:net';

/** What a range may judge: every request, or only clicks. */
type Scope = 'all' | 'clicks';

/** One range of a scanner's network. */
interface ScannerRange {
  cidr: string;
  scope: Scope;
  /** Whose it is, as a verdict names it. */
  owner: string;
}

/**
 * The ranges. Microsoft's Exchange Online Protection ranges are those of
 * its filtering tier (endpoint sets 9 and 10 of the Microsoft 365 URLs and
 * IP address ranges): mailboxes are not read from them, while Outlook on
 * the web's image proxy fetches from other Exchange Online ranges, so those
 * stay out. Safe Links' delivery-time detonations were seen from
 * 40.94.0.0/16 (mautic/mautic#9400): clicks only there, as a person's own
 * click comes from their own browser. Barracuda publishes the ranges its
 * Email Gateway Defense connects from, one block per region.
 */
const RANGES: readonly ScannerRange[] = [
  { cidr: '40.92.0.0/15', scope: 'all', owner: 'microsoft-eop' },
  { cidr: '40.107.0.0/16', scope: 'all', owner: 'microsoft-eop' },
  { cidr: '52.100.0.0/14', scope: 'all', owner: 'microsoft-eop' },
  { cidr: '104.47.0.0/17', scope: 'all', owner: 'microsoft-eop' },
  { cidr: '2a01:111:f400::/48', scope: 'all', owner: 'microsoft-eop' },
  { cidr: '2a01:111:f403::/48', scope: 'all', owner: 'microsoft-eop' },
  { cidr: '40.94.0.0/16', scope: 'clicks', owner: 'microsoft-safe-links' },
  { cidr: '209.222.82.0/24', scope: 'all', owner: 'barracuda' },
  { cidr: '3.24.133.128/25', scope: 'all', owner: 'barracuda' },
  { cidr: '15.222.16.128/25', scope: 'all', owner: 'barracuda' },
  { cidr: '35.157.190.224/27', scope: 'all', owner: 'barracuda' },
  { cidr: '18.185.115.192/26', scope: 'all', owner: 'barracuda' },
  { cidr: '18.184.203.224/27', scope: 'all', owner: 'barracuda' },
  { cidr: '13.200.136.128/25', scope: 'all', owner: 'barracuda' },
  { cidr: '35.176.92.96/27', scope: 'all', owner: 'barracuda' },
  { cidr: '18.133.136.96/27', scope: 'all', owner: 'barracuda' },
  { cidr: '18.133.136.128/26', scope: 'all', owner: 'barracuda' },
];

/** One block list per scope and owner, built once. */
const LISTS = RANGES.map((range) => {
  const [address = '', prefix = ''] = range.cidr.split('/');
  const list = new BlockList();
  list.addSubnet(
    address,
    Number(prefix),
    isIP(address) === 6 ? 'ipv6' : 'ipv4',
  );
  return { ...range, list };
});

/**
 * The scanner whose network an address belongs to, for this kind of
 * event; undefined for any other address (or none, or an unreadable one).
 */
export const scannerNetworkOf = (
  ipAddress: string | undefined,
  event: 'open' | 'click',
): string | undefined => {
  const address = ipAddress?.trim() ?? '';
  const family = isIP(address);
  if (family === 0) return undefined;
  const type = family === 6 ? 'ipv6' : 'ipv4';
  return LISTS.find(
    ({ list, scope }) =>
      (scope === 'all' || event === 'click') && list.check(address, type),
  )?.owner;
};
