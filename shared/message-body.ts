/**
 * The body a queue message is sent as: its JSON, with the characters a
 * queue refuses written as escapes. The sender writes it, and whoever
 * measures a message against a queue's size limit measures it.
 */

/**
 * The characters a message body may not hold as they are: U+FFFE and
 * U+FFFF, which SQS refuses (InvalidMessageContents), and the surrogates
 * of a character past U+FFFF (an emoji), which SQS takes but the local
 * stack's engine (fauxqs) refuses. JSON.stringify already escapes the
 * controls and lone surrogates.
 */
const REFUSED_BY_SQS = /[\uD800-\uDFFF\uFFFE\uFFFF]/g;

/**
 * A message as its body: JSON, with those characters written as `\uXXXX`
 * escapes — the same JSON to the consumer that parses it, and never a
 * refusal that no retry can cure (a contact named with an emoji once held
 * a stream shard on the local stack, each retry refused again). An escape
 * is longer than its character (12 bytes for an emoji's 4), so a size
 * limit is checked on this, never on the plain JSON.
 */
export const messageBody = (message: unknown): string =>
  (JSON.stringify(message) ?? '').replace(
    REFUSED_BY_SQS,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** The bytes of a message's body. */
export const messageBytes = (message: unknown): number =>
  Buffer.byteLength(messageBody(message));
