// The sandbox's name server: answers Pod and Service names from the kubelet's live view, over UDP
// on a loopback address of its own, port 53 (resolv.conf cannot name another port).
//
// Why, when the hosts file already has every name: Go programs such as etcd read /etc/hosts
// through a 5-second cache. When the operator adds a member, the leader looks the new member's
// name up before its Pod exists, caches a hosts file without it, and cannot dial the member for
// up to 5 s after the Pod is up; etcd's own 5 s "connected to every voter" wait before the next
// membership change then starts late too. DNS answers are never cached by Go, so a name is
// reachable the moment its Pod has an address. Port 53 needs root (or CAP_NET_BIND_SERVICE):
// without it the sandbox keeps the hosts file alone, which works, only slower.
import { createSocket, type Socket } from 'node:dgram';
import {
  RCODE_NOERROR,
  RCODE_NOTIMP,
  RCODE_NXDOMAIN,
  TYPE_A,
  encodeAnswer,
  encodeFormatError,
  isInternetClass,
  parseQuery,
} from './dns-wire.ts';

/** The addresses of a name (lower-case, no trailing dot); empty when the sandbox does not know it. */
export type NameLookup = (name: string) => string[];

export interface NameServer {
  /** The loopback address it listens on, port 53. */
  readonly ip: string;
  close(): Promise<void>;
}

export const DNS_PORT = 53;

/** Answers one query message; undefined when nothing sensible can be sent back. */
export function answer(msg: Buffer, lookup: NameLookup): Buffer | undefined {
  const q = parseQuery(msg);
  if (!q) return encodeFormatError(msg);
  if ((q.flags & 0x7800) !== 0 || !isInternetClass(q)) return encodeAnswer(q, RCODE_NOTIMP);
  const ips = lookup(q.name);
  // Every name a sandbox process may ask for is ours or does not exist: there is no upstream.
  if (ips.length === 0) return encodeAnswer(q, RCODE_NXDOMAIN);
  // A known name has only IPv4 addresses: any other type gets an empty NOERROR answer.
  return encodeAnswer(q, RCODE_NOERROR, q.type === TYPE_A ? ips : []);
}

/**
 * Listens on `ip`:53, or on the first of `candidates` that can be bound. Rejects with the last
 * error (EACCES when not privileged) when none can.
 */
export async function startNameServer(candidates: string[], lookup: NameLookup): Promise<NameServer> {
  let lastError: unknown = new Error('no address to listen on');
  for (const ip of candidates) {
    try {
      const socket = await bind(ip);
      socket.on('message', (msg, peer) => {
        const reply = answer(msg, lookup);
        if (reply) socket.send(reply, peer.port, peer.address);
      });
      return { ip, close: () => new Promise<void>(resolve => socket.close(() => resolve())) };
    } catch (err) {
      lastError = err;
      if ((err as NodeJS.ErrnoException).code === 'EACCES') break;
    }
  }
  throw lastError;
}

function bind(ip: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', err => {
      socket.close();
      reject(err);
    });
    socket.bind({ address: ip, port: DNS_PORT, exclusive: true }, () => {
      socket.removeAllListeners('error');
      socket.on('error', () => undefined); // a reply to a vanished client; nothing to do
      resolve(socket);
    });
  });
}

/** Loopback addresses for the name server, outside the Pod address ranges (127.100-199.x.x). */
export function nameServerCandidates(count = 8): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(`127.53.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`);
  }
  return out;
}
