// etcd authentication with a single root user: find out whether it is on, turn it on the etcd way
// (role add root, user add root, grant root the root role, auth enable), change the root password.
//
// Every call is safe to repeat, so a crash between two of them converges when the plan runs the
// step again: an existing role or user, or a role already granted, is etcd saying "done already",
// and the existing root user's password is set to the one asked for. Which step is due is read
// from etcd itself with `probeAuth` (credentials accepted / auth not on / credentials refused), not
// remembered, so nothing about the password needs to be kept anywhere but the Secrets.
import type { Etcd3 } from 'etcd3';
import { callFailure, callFirstAvailable } from './connection.ts';
import type { EtcdAuthOptions, EtcdConnectionOptions } from './connection.ts';
import type { CallFailure } from './errors.ts';

export const ROOT = 'root';

export type AuthProbeResult =
  /** Auth is on and these credentials are accepted. */
  | { kind: 'enabled'; endpoint: string }
  /** etcd answered that authentication is not enabled. */
  | { kind: 'disabled'; endpoint: string }
  /** Auth is on and these credentials are refused (wrong password, or no such user). */
  | CallFailure;

export type AuthChangeResult = { kind: 'ok' } | CallFailure;

/** etcd's answer to a login while auth is off (ErrAuthNotEnabled). */
const AUTH_NOT_ENABLED = /authentication is not enabled/i;
/** etcd's "done already" answers while setting up root (ErrRoleAlreadyExist, ErrUserAlreadyExist). */
const ALREADY = /(role|user) name already exists|already (exists|granted)/i;

/** Whether auth is on, judged by logging in with `credentials` and reading that user back. */
export async function probeAuth(
  endpoints: readonly string[],
  credentials: EtcdAuthOptions,
  options: EtcdConnectionOptions = {},
): Promise<AuthProbeResult> {
  const result = await callFirstAvailable(endpoints, { ...options, auth: credentials }, client =>
    client.auth.userGet({ name: credentials.username }),
  );
  if (result.kind === 'ok') return { kind: 'enabled', endpoint: result.endpoint };
  if (AUTH_NOT_ENABLED.test(result.message)) return { kind: 'disabled', endpoint: endpoints[0] ?? '' };
  return callFailure(result);
}

/**
 * Turns auth on with a root user holding `password`. Only while auth is off (calls are made
 * without credentials); once it is on, `probeAuth` says `enabled` and this step is not due.
 */
export async function enableAuth(
  endpoints: readonly string[],
  password: string,
  options: EtcdConnectionOptions = {},
): Promise<AuthChangeResult> {
  const anonymous: EtcdConnectionOptions = { ...options, auth: undefined };
  const steps: ((client: Etcd3) => Promise<unknown>)[] = [
    client => tolerateAlready(client.auth.roleAdd({ name: ROOT })),
    client => tolerateAlready(client.auth.userAdd({ name: ROOT, password })),
    // The user may be left from an earlier try with another password: make it this one.
    client => client.auth.userChangePassword({ name: ROOT, password }),
    client => tolerateAlready(client.auth.userGrantRole({ user: ROOT, role: ROOT })),
    client => client.auth.authEnable(),
  ];
  for (const step of steps) {
    const result = await callFirstAvailable(endpoints, anonymous, step);
    if (result.kind !== 'ok') return callFailure(result);
  }
  return { kind: 'ok' };
}

/**
 * Sets root's password to `newPassword`, logged in with the current one. A repeat after the change
 * went through is refused (`auth-failed`: the current password is no longer valid); the caller
 * then probes with the new one.
 */
export async function changeRootPassword(
  endpoints: readonly string[],
  current: EtcdAuthOptions,
  newPassword: string,
  options: EtcdConnectionOptions = {},
): Promise<AuthChangeResult> {
  const result = await callFirstAvailable(endpoints, { ...options, auth: current }, client =>
    client.auth.userChangePassword({ name: ROOT, password: newPassword }),
  );
  return result.kind === 'ok' ? { kind: 'ok' } : callFailure(result);
}

/** Names of the users and roles, read with `credentials` (for checks that they survive a restore). */
export async function listUsersAndRoles(
  endpoints: readonly string[],
  options: EtcdConnectionOptions = {},
): Promise<{ kind: 'ok'; users: string[]; roles: string[] } | CallFailure> {
  const result = await callFirstAvailable(endpoints, options, async client => {
    const users = await client.auth.userList();
    const roles = await client.auth.roleList();
    return { users: [...users.users].sort(), roles: [...roles.roles].sort() };
  });
  return result.kind === 'ok' ? { kind: 'ok', ...result.value } : callFailure(result);
}

async function tolerateAlready(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (err instanceof Error && ALREADY.test(err.message)) return;
    throw err;
  }
}
