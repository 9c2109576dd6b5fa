// Pod IPs: one loopback address per Pod, 127.<a>.<b>.<c> counted up from a base. Linux routes all
// of 127.0.0.0/8 to `lo`, so no interface setup is needed. 127.0.0.1 is never handed out, nor
// .0/.255 host parts. Released addresses are reused (lowest first). Before an address is handed
// out, the ports the Pod declares (and etcd's 2379/2380) are probed, so a sandbox never collides
// with another one, or with a test's own etcd, running on the same machine.
import { createServer } from 'node:net';
import { CLIENT_PORT, PEER_PORT } from '../../../shared/names.ts';

/** A random base in 127.100-199.x.0, so sandboxes started side by side rarely overlap. */
export function randomBase(): string {
  return `127.${100 + Math.floor(Math.random() * 100)}.${Math.floor(Math.random() * 256)}.0`;
}

function toInt(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some(p => !Number.isInteger(p) || p < 0 || p > 255) || parts[0] !== 127) {
    throw new Error(`ipBase must be an IPv4 address in 127.0.0.0/8, got "${ip}"`);
  }
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
}

function toIp(n: number): string {
  return [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

function usable(n: number): boolean {
  const last = n & 255;
  return last !== 0 && last !== 255 && toIp(n) !== '127.0.0.1' && n < toInt('127.255.255.255');
}

/** Resolves when nothing listens on ip:port (we could bind it ourselves). */
export function portFree(ip: string, port: number): Promise<boolean> {
  return new Promise(resolve => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: ip, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export class PodIpAllocator {
  private next: number;
  private readonly free: number[] = [];
  private readonly used = new Set<number>();

  /** @param base e.g. '127.66.0.0' or '127.66.0' (first address handed out: 127.66.0.1, or base+1) */
  constructor(base: string) {
    const full = base.split('.').length === 3 ? `${base}.0` : base;
    this.next = toInt(full);
  }

  /** A free address whose `ports` (plus 2379/2380) are not in use by anything on the machine. */
  async allocate(ports: number[] = []): Promise<string> {
    const probe = [...new Set([CLIENT_PORT, PEER_PORT, ...ports])];
    this.free.sort((a, b) => a - b);
    for (let attempts = 0; attempts < 4096; attempts++) {
      const n = this.free.length ? this.free.shift()! : this.advance();
      this.used.add(n);
      const ip = toIp(n);
      const results = await Promise.all(probe.map(p => portFree(ip, p)));
      if (results.every(Boolean)) return ip;
      // Someone else uses this address: skip it for good.
    }
    throw new Error('no free loopback address for a Pod');
  }

  release(ip: string): void {
    const n = toInt(ip);
    if (this.used.delete(n)) this.free.push(n);
  }

  private advance(): number {
    for (;;) {
      this.next++;
      if (this.next >= toInt('127.255.255.255')) throw new Error('Pod IP range exhausted');
      if (usable(this.next) && !this.used.has(this.next)) return this.next;
    }
  }
}
