/**
 * Salesforce record ids: a three-character key prefix naming the object (`001` Account, `003` Contact, `00Q` Lead),
 * fifteen case-sensitive characters, and the three-character suffix that makes the 18-character form
 * case-insensitive. The API accepts either form and always answers with the 18-character one.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The 18-character form of a 15-character id. */
export function to18(id15: string): string {
  let suffix = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) {
      const c = id15.charAt(chunk * 5 + i);
      if (c >= 'A' && c <= 'Z') bits |= 1 << i;
    }
    suffix += ALPHABET.charAt(bits);
  }
  return id15 + suffix;
}

/** The 18-character id for an id in either form, or undefined when it is not an id at all. */
export function normalizeId(id: string): string | undefined {
  if (/^[a-zA-Z0-9]{15}$/.test(id)) return to18(id);
  if (/^[a-zA-Z0-9]{18}$/.test(id)) {
    const full = to18(id.slice(0, 15));
    return full.slice(15).toUpperCase() === id.slice(15).toUpperCase() ? full : undefined;
  }
  return undefined;
}

/** Hands out ids of one key prefix in order: `001` + a pod code + a counter in base 62. */
export class IdSequence {
  private next = 1;
  readonly prefix: string;
  constructor(prefix: string) {
    this.prefix = prefix;
  }
  take(): string {
    let n = this.next++;
    let digits = '';
    while (n > 0) {
      digits = BASE62.charAt(n % 62) + digits;
      n = Math.floor(n / 62);
    }
    return to18(`${this.prefix}Dn${digits.padStart(10, '0')}`);
  }
}
