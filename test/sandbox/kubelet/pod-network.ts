// Pods in their own network namespaces, for programs that bind wildcard addresses on fixed ports
// (every Knative program listens on :8080 and :8008, so two cannot share the host's namespace even
// with a loopback IP each). Opt-in: the kubelet option `podNetwork`, and then only Pods that ask
// for it (POD_NETWORK_ANNOTATION) or whose image the kubelet maps to such a program.
//
// Layout, as a CNI bridge plugin would make it, but with no way off the machine:
//   - one bridge per kubelet, `efnb<pid>`, holding the gateway <subnet>.1/24; the subnet is a /24 of
//     198.18.0.0/15 (RFC 2544's benchmarking range, never routed on the Internet) that no address
//     or route of the machine overlaps;
//   - per Pod, a holder process (`unshare --net sleep infinity`, the pause container) owning a
//     fresh network namespace, and a veth pair: `efnv<pid36>-<n>` on the bridge, `eth0` inside with
//     the Pod IP/24, plus `lo`. No default route: inside, only the /24 (the other Pods, the
//     gateway) and the service CIDR via the gateway (ClusterIPs the kubelet serves on the bridge,
//     service-proxy.ts; the host does not forward) are reachable: nothing can leave the machine;
//   - on the gateway, a TCP forwarder to the API server (the Pod's kubeconfig names it, with the
//     API server certificate's name kubernetes.default.svc) and the kubelet's name server.
// Containers enter the namespace with `nsenter --net=/proc/<holder>/ns/net`. A namespace dies with
// its holder (SIGKILLed with the kubelet through setpriv's pdeathsig), and its veth with it; the
// bridge is deleted on stop, and a start deletes the bridges and veths of kubelets no longer alive.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readlinkSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isKnativeImage } from './knative-images.ts';
import type { Logger, Pod } from './types.ts';

const execFileAsync = promisify(execFile);

/** A Pod with this annotation set to "true" runs in its own network namespace (when enabled). */
export const POD_NETWORK_ANNOTATION = 'sandbox.etcdfn.io/network-namespace';
/** The name the API server's certificate carries, for clients that dial it by the gateway's IP. */
export const API_SERVER_NAME = 'kubernetes.default.svc';

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find(p => existsSync(p));
const BRIDGE_PREFIX = 'efnb';
const VETH_PREFIX = 'efnv';

/** What a container needs to run inside a Pod's namespace. */
export interface PodNetns {
  ip: string;
  /** argv prefix that runs a program inside the namespace */
  enter: string[];
  /** the API server as a Pod reaches it: `https://<gateway>:<port>` */
  apiServer: string;
}

async function ip(args: string[], netnsOf?: number): Promise<string> {
  const argv = netnsOf ? ['nsenter', `--net=/proc/${netnsOf}/ns/net`, 'ip', ...args] : ['ip', ...args];
  try {
    const { stdout } = await execFileAsync(argv[0], argv.slice(1));
    return stdout;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`${argv.join(' ')}: ${stderr.trim() || (err as Error).message}`, { cause: err });
  }
}

function toInt(addr: string): number {
  return addr.split('.').reduce((n, p) => n * 256 + Number(p), 0);
}

function overlaps(a: { start: number; bits: number }, b: { start: number; bits: number }): boolean {
  const bits = Math.min(a.bits, b.bits);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (a.start & mask) >>> 0 === (b.start & mask) >>> 0;
}

/** The /24s of 198.18.0.0/15 no address or route of the machine overlaps, in random order. */
export function freeSubnets(taken: { start: number; bits: number }[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < 512; i++) {
    const subnet = { start: toInt('198.18.0.0') + i * 256, bits: 24 };
    if (!taken.some(t => overlaps(t, subnet))) out.push(`198.${18 + (i >> 8)}.${i & 255}`);
  }
  return out.sort(() => Math.random() - 0.5);
}

async function takenPrefixes(): Promise<{ start: number; bits: number }[]> {
  const out: { start: number; bits: number }[] = [];
  const addrs = JSON.parse(await ip(['-4', '-j', 'addr'])) as {
    addr_info?: { local: string; prefixlen: number }[];
  }[];
  for (const link of addrs)
    for (const a of link.addr_info ?? []) out.push({ start: toInt(a.local), bits: a.prefixlen });
  const routes = JSON.parse(await ip(['-4', '-j', 'route', 'show', 'table', 'all'])) as { dst: string }[];
  for (const r of routes) {
    if (r.dst === 'default' || !/^\d/.test(r.dst)) continue;
    const [addr, bits] = r.dst.split('/');
    out.push({ start: toInt(addr), bits: bits ? Number(bits) : 32 });
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Deletes the bridges and veths of kubelets that died without stopping (named by their PID). */
async function removeStale(log: Logger): Promise<void> {
  const links = (await ip(['-o', 'link', 'show'])).split('\n').map(l => /^\d+: ([^:@]+)/.exec(l)?.[1]);
  for (const name of links) {
    if (!name) continue;
    const bridge = new RegExp(`^${BRIDGE_PREFIX}(\\d+)$`).exec(name);
    const veth = new RegExp(`^${VETH_PREFIX}([0-9a-z]+)-[0-9a-z]+$`).exec(name);
    const pid = bridge ? Number(bridge[1]) : veth ? Number.parseInt(veth[1], 36) : undefined;
    if (pid === undefined || pid === process.pid || alive(pid)) continue;
    await ip(['link', 'del', name]).catch(() => undefined);
    log(`pod network: removed ${name}, left by a kubelet (pid ${pid}) that is gone`);
  }
}

async function netnsReady(holder: ChildProcess): Promise<void> {
  const own = readlinkSync('/proc/self/ns/net');
  for (let i = 0; i < 500; i++) {
    if (holder.exitCode !== null || holder.signalCode !== null) break;
    try {
      if (readlinkSync(`/proc/${holder.pid}/ns/net`) !== own) return;
    } catch {
      // not there yet
    }
    await new Promise(r => setTimeout(r, 10));
  }
  throw new Error('the network namespace holder (unshare --net) did not start');
}

export class PodNetwork {
  readonly bridge = `${BRIDGE_PREFIX}${process.pid}`;
  readonly gateway: string;
  private readonly prefix: string;
  private next = 2;
  private readonly free: number[] = [];
  private readonly holders = new Map<string, { holder: ChildProcess; veth: string; host: number }>();
  private forwarder: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private apiPort = 0;
  private readonly log: Logger;

  private readonly serviceCidr: string | undefined;
  private constructor(prefix: string, log: Logger, serviceCidr?: string) {
    this.prefix = prefix;
    this.serviceCidr = serviceCidr;
    this.gateway = `${prefix}.1`;
    this.log = log;
  }

  /** Creates the bridge and the API server forwarder; needs root and iproute2. */
  static async start(opts: { apiServer: string; log: Logger; serviceCidr?: string }): Promise<PodNetwork> {
    await removeStale(opts.log);
    const subnet = freeSubnets(await takenPrefixes())[0];
    if (!subnet) throw new Error('pod network: every /24 of 198.18.0.0/15 is in use on this machine');
    const net = new PodNetwork(subnet, opts.log, opts.serviceCidr);
    try {
      await ip(['link', 'add', net.bridge, 'type', 'bridge']);
      disableIpv6(net.bridge);
      await ip(['addr', 'add', `${net.gateway}/24`, 'dev', net.bridge]);
      await ip(['link', 'set', net.bridge, 'up']);
      await net.forwardApiServer(new URL(opts.apiServer));
    } catch (err) {
      await net.stop();
      throw err;
    }
    opts.log(`pod network: bridge ${net.bridge}, ${subnet}.0/24, gateway ${net.gateway}`);
    return net;
  }

  /** Whether an address is one of this network's Pod IPs. */
  contains(address: string): boolean {
    return address.startsWith(`${this.prefix}.`) && address !== this.gateway;
  }

  get apiServer(): string {
    return `https://${this.gateway}:${this.apiPort}`;
  }

  /** Listens on the gateway at the API server's port and pipes to the API server. */
  private async forwardApiServer(url: URL): Promise<void> {
    const port = Number(url.port || 443);
    const server = createServer(client => {
      const upstream = connect(port, url.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => (s === client ? upstream : client).destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.gateway, port, exclusive: true }, resolve);
    });
    this.forwarder = server;
    this.apiPort = port;
  }

  /** A fresh namespace for the Pod `key` (its uid), wired to the bridge. */
  async attach(key: string): Promise<PodNetns> {
    const host = this.free.length ? this.free.shift()! : this.next++;
    if (host > 254) throw new Error(`pod network: ${this.prefix}.0/24 is full`);
    const podIP = `${this.prefix}.${host}`;
    const veth = `${VETH_PREFIX}${process.pid.toString(36)}-${host.toString(36)}`;
    const argv = ['unshare', '--net', '--', 'sleep', 'infinity'];
    const holder = SETPRIV
      ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', ...argv], { stdio: 'ignore' })
      : spawn(argv[0], argv.slice(1), { stdio: 'ignore' });
    holder.on('error', () => undefined);
    this.holders.set(key, { holder, veth, host });
    try {
      await netnsReady(holder);
      const pid = holder.pid!;
      await ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', String(pid)]);
      disableIpv6(veth);
      await ip(['link', 'set', veth, 'master', this.bridge, 'up']);
      await execFileAsync('nsenter', [
        `--net=/proc/${pid}/ns/net`,
        'sh',
        '-c',
        'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6',
      ]).catch(() => undefined);
      await ip(['addr', 'add', `${podIP}/24`, 'dev', 'eth0'], pid);
      await ip(['link', 'set', 'eth0', 'up'], pid);
      await ip(['link', 'set', 'lo', 'up'], pid);
      // ClusterIPs served on the bridge (service-proxy.ts): local to this machine, never forwarded.
      if (this.serviceCidr)
        await ip(['route', 'add', this.serviceCidr, 'via', this.gateway, 'dev', 'eth0'], pid);
    } catch (err) {
      await this.detach(key);
      throw err;
    }
    return {
      ip: podIP,
      enter: ['nsenter', `--net=/proc/${holder.pid}/ns/net`, '--'],
      apiServer: this.apiServer,
    };
  }

  /** Ends the Pod's namespace (its holder) and removes its veth. */
  async detach(key: string): Promise<void> {
    const entry = this.holders.get(key);
    if (!entry) return;
    this.holders.delete(key);
    entry.holder.kill('SIGKILL');
    await ip(['link', 'del', entry.veth]).catch(() => undefined); // gone with the namespace already
    this.free.push(entry.host);
    this.free.sort((a, b) => a - b);
  }

  async stop(): Promise<void> {
    for (const key of [...this.holders.keys()]) await this.detach(key);
    for (const s of this.sockets) s.destroy();
    await new Promise<void>(resolve => (this.forwarder ? this.forwarder.close(() => resolve()) : resolve()));
    await ip(['link', 'del', this.bridge]).catch(() => undefined);
    this.log(`pod network: bridge ${this.bridge} removed`);
  }
}

function disableIpv6(link: string): void {
  // No IPv6 link-local addresses or router solicitations on links of ours.
  try {
    writeFileSync(`/proc/sys/net/ipv6/conf/${link}/disable_ipv6`, '1');
  } catch {
    // IPv6 disabled on the machine
  }
}

/** A kubeconfig for a process inside a Pod namespace: its service account's token and CA. */
export function podKubeconfig(file: string, apiServer: string, serviceAccountDir: string): string {
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: sandbox',
    '  cluster:',
    `    server: ${apiServer}`,
    `    certificate-authority: ${join(serviceAccountDir, 'ca.crt')}`,
    `    tls-server-name: ${API_SERVER_NAME}`,
    'users:',
    '- name: pod',
    '  user:',
    `    tokenFile: ${join(serviceAccountDir, 'token')}`,
    'contexts:',
    '- name: pod',
    '  context: { cluster: sandbox, user: pod }',
    'current-context: pod',
    '',
  ].join('\n');
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}

/** Whether a Pod asks for a namespace of its own, or runs Knative's programs (all bind :8080). */
export function wantsPodNetwork(pod: Pod): boolean {
  if (pod.metadata.annotations?.[POD_NETWORK_ANNOTATION] === 'true') return true;
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers].some(c => isKnativeImage(c.image));
}
