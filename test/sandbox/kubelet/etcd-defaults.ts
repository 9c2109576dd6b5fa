// etcd's own defaults listen on localhost:2379/2380, which every Pod of the sandbox shares. When a
// container runs the etcd server without saying where to listen, the kubelet supplies the Pod's IP
// through etcd's environment variables (flags given by the container always win).

function hasSetting(args: string[], env: Record<string, string>, flag: string): boolean {
  const envName = `ETCD_${flag.toUpperCase().replace(/-/g, '_')}`;
  if (env[envName] !== undefined) return true;
  return args.some(
    a => a === `--${flag}` || a.startsWith(`--${flag}=`) || a === `-${flag}` || a.startsWith(`-${flag}=`),
  );
}

function flagValue(args: string[], env: Record<string, string>, flag: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    for (const prefix of [`--${flag}`, `-${flag}`]) {
      if (a.startsWith(`${prefix}=`)) return a.slice(prefix.length + 1);
      if (a === prefix) return args[i + 1];
    }
  }
  return env[`ETCD_${flag.toUpperCase().replace(/-/g, '_')}`];
}

/** Extra ETCD_* variables for an etcd server started with `args` and `env` in a Pod at `podIP`. */
export function etcdServerDefaults(
  args: string[],
  env: Record<string, string>,
  podIP: string,
): Record<string, string> {
  // Subcommands (grpc-proxy, gateway) and informational flags are not the server.
  if (args[0] !== undefined && !args[0].startsWith('-')) return {};
  if (args.some(a => a === '--version' || a === '-version' || a === '--help' || a === '-h')) return {};
  const extra: Record<string, string> = {};
  if (!hasSetting(args, env, 'listen-client-urls') && !hasSetting(args, env, 'advertise-client-urls')) {
    extra.ETCD_LISTEN_CLIENT_URLS = `http://${podIP}:2379`;
    extra.ETCD_ADVERTISE_CLIENT_URLS = `http://${podIP}:2379`;
  }
  if (!hasSetting(args, env, 'listen-peer-urls') && !hasSetting(args, env, 'initial-advertise-peer-urls')) {
    extra.ETCD_LISTEN_PEER_URLS = `http://${podIP}:2380`;
    extra.ETCD_INITIAL_ADVERTISE_PEER_URLS = `http://${podIP}:2380`;
    if (!hasSetting(args, env, 'initial-cluster') && !hasSetting(args, env, 'discovery')) {
      const name = flagValue(args, env, 'name') ?? 'default';
      extra.ETCD_INITIAL_CLUSTER = `${name}=http://${podIP}:2380`;
    }
  }
  return extra;
}
