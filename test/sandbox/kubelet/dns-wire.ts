// The little of the DNS wire format (RFC 1035) the sandbox's name server needs: read one question
// from a query, write an authoritative answer with A records, an empty answer (the name exists but
// has no record of that type) or NXDOMAIN. Anything else in a query (EDNS0 options, more
// questions) is ignored, as a minimal authoritative server may.
export const TYPE_A = 1;
export const TYPE_AAAA = 28;
const CLASS_IN = 1;
const HEADER_BYTES = 12;
const FLAG_QR = 0x8000;
const FLAG_AA = 0x0400;
const FLAG_RD = 0x0100;
const FLAG_RA = 0x0080;
const OPCODE_MASK = 0x7800;

export const RCODE_NOERROR = 0;
export const RCODE_FORMERR = 1;
export const RCODE_NXDOMAIN = 3;
export const RCODE_NOTIMP = 4;

export interface DnsQuestion {
  id: number;
  flags: number;
  /** Lower-case, without the trailing dot. */
  name: string;
  type: number;
  class: number;
  /** The question's bytes (name, type, class) as sent, echoed back in the answer. */
  raw: Buffer;
}

/** Reads the first question of a query; undefined when the message is not a well-formed query. */
export function parseQuery(msg: Buffer): DnsQuestion | undefined {
  if (msg.length < HEADER_BYTES) return undefined;
  const flags = msg.readUInt16BE(2);
  if (flags & FLAG_QR || msg.readUInt16BE(4) < 1) return undefined;
  const labels: string[] = [];
  let at = HEADER_BYTES;
  for (;;) {
    if (at >= msg.length) return undefined;
    const len = msg.readUInt8(at);
    at += 1;
    if (len === 0) break;
    // Compression pointers (0xC0) never appear in a question's first name; refuse them.
    if (len > 63 || at + len > msg.length) return undefined;
    labels.push(msg.toString('latin1', at, at + len));
    at += len;
  }
  if (at + 4 > msg.length) return undefined;
  return {
    id: msg.readUInt16BE(0),
    flags,
    name: labels.join('.').toLowerCase(),
    type: msg.readUInt16BE(at),
    class: msg.readUInt16BE(at + 2),
    raw: msg.subarray(HEADER_BYTES, at + 4),
  };
}

/** The answer to `q`: `ips` as A records (TTL `ttl`), or an empty answer with `rcode`. */
export function encodeAnswer(q: DnsQuestion, rcode: number, ips: string[] = [], ttl = 0): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt16BE(q.id, 0);
  header.writeUInt16BE(FLAG_QR | FLAG_AA | FLAG_RA | (q.flags & (OPCODE_MASK | FLAG_RD)) | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(ips.length, 6);
  const answers = ips.map(ip => {
    const rr = Buffer.alloc(16);
    rr.writeUInt16BE(0xc000 | HEADER_BYTES, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(TYPE_A, 2);
    rr.writeUInt16BE(CLASS_IN, 4);
    rr.writeUInt32BE(ttl, 6);
    rr.writeUInt16BE(4, 10);
    ip.split('.').forEach((octet, i) => rr.writeUInt8(Number(octet), 12 + i));
    return rr;
  });
  return Buffer.concat([header, q.raw, ...answers]);
}

/** A FORMERR reply echoing the id of a message we could not read (if it has one). */
export function encodeFormatError(msg: Buffer): Buffer | undefined {
  if (msg.length < 2) return undefined;
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt16BE(msg.readUInt16BE(0), 0);
  header.writeUInt16BE(FLAG_QR | RCODE_FORMERR, 2);
  return header;
}

export function isInternetClass(q: DnsQuestion): boolean {
  return q.class === CLASS_IN;
}
