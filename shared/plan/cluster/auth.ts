// The auth concern of reconcile-cluster: turn etcd auth on once the cluster has formed, keep the
// root password etcd has equal to the one in the user's Secret, and say what is wrong when that
// cannot be done. Pure: the Secrets and etcd's answers to a login are observed beforehand.
//
// Crash safety comes from asking etcd, not from remembering: every step is decided from what etcd
// answers to a login with the wanted password ("desired") and with the one the operator last saw
// etcd accept ("applied", its own Secret), so a step cut short is simply decided again:
// - enable-auth cut short (root added, auth still off) → etcd says disabled → enable-auth again;
// - enable-auth or rotate done but not recorded → etcd accepts the desired password while the
//   applied copy differs → record-applied (which also sets status.authEnabled);
// - rotate: etcd accepts only the applied password → change it to the desired one, logged in with it.
import type { RootCredentials } from '../../builders/root-credentials.ts';

/** What etcd answered to a login: auth on and accepted, auth off, refused, or no usable answer. */
export type LoginAnswer = 'enabled' | 'disabled' | 'refused' | 'unavailable';

export interface AuthFacts {
  /** spec.auth.enabled. */
  wanted: boolean;
  /** status.authEnabled: the operator uses the applied password for every etcd call. */
  recorded: boolean;
  /** The cluster has formed and every member is ready (auth is turned on after bootstrap). */
  formed: boolean;
  /** The Secret spec.auth.rootCredentialsSecretRef names. */
  desired: RootCredentials;
  /** The operator's copy of the password etcd has (appliedRootSecretName). */
  applied: RootCredentials;
  /** etcd's answer to root with the desired password; undefined when not asked. */
  loginDesired?: LoginAnswer;
  /** etcd's answer to root with the applied password; undefined when not asked. */
  loginApplied?: LoginAnswer;
}

export type AuthStep =
  /** Nothing to do for auth. */
  | { kind: 'none' }
  /** The user's Secret does not exist: create it with a generated password, owned by the cluster. */
  | { kind: 'create-secret' }
  /** Waiting: the cluster has not formed, or etcd gave no usable answer. */
  | { kind: 'wait'; reason: string }
  /** etcd has auth off: role add root, user add root (desired password), grant, auth enable. */
  | { kind: 'enable-auth' }
  /** etcd accepts the desired password: write it to the applied Secret and set status.authEnabled. */
  | { kind: 'record-applied' }
  /** etcd accepts the applied password only: change root's password to the desired one. */
  | { kind: 'rotate-password' }
  /** Cannot go on without the user: `message` says what is wrong and what to do. */
  | { kind: 'stuck'; reason: string; message: string };

export function planAuth(facts: AuthFacts): AuthStep {
  if (!facts.wanted) return { kind: 'none' };
  const { desired, applied } = facts;
  if (desired.kind === 'missing') {
    // Generating a new password is only right before etcd has one: later, a deleted Secret would
    // lock the operator out of nothing, but would silently change who knows the password.
    if (!facts.recorded) return { kind: 'create-secret' };
    return {
      kind: 'stuck',
      reason: 'RootSecretMissing',
      message:
        'the Secret named by spec.auth.rootCredentialsSecretRef is gone; etcdfn keeps using the password etcd has. ' +
        'Recreate the Secret (type kubernetes.io/basic-auth, keys username=root and password) to set a new password',
    };
  }
  if (desired.kind === 'invalid') {
    return { kind: 'stuck', reason: 'RootSecretInvalid', message: `${desired.problem}; fix the Secret` };
  }
  if (!facts.formed && !facts.recorded)
    return { kind: 'wait', reason: 'auth is turned on once the cluster has formed' };

  const inSync = applied.kind === 'ok' && applied.password === desired.password;
  switch (facts.loginDesired) {
    case undefined:
    case 'unavailable':
      return { kind: 'wait', reason: 'etcd did not answer a login' };
    case 'disabled':
      return { kind: 'enable-auth' };
    case 'enabled':
      return inSync && facts.recorded ? { kind: 'none' } : { kind: 'record-applied' };
    case 'refused':
      break;
  }
  // etcd refuses the desired password: a rotation is due, if the applied one still works.
  if (applied.kind !== 'ok' || inSync) return lockedOut();
  switch (facts.loginApplied) {
    case 'enabled':
      return { kind: 'rotate-password' };
    case 'disabled':
      // Auth went off behind the operator's back between two logins: decide again next time.
      return { kind: 'wait', reason: 'etcd changed its auth setting while being asked' };
    case undefined:
    case 'unavailable':
      return { kind: 'wait', reason: 'etcd did not answer a login' };
    case 'refused':
      return lockedOut();
  }
}

function lockedOut(): AuthStep {
  return {
    kind: 'stuck',
    reason: 'RootPasswordRefused',
    message:
      'etcd refuses the root password from the Secret and the one etcdfn last set; someone changed it in etcd directly. ' +
      "Put the password etcd has into the Secret's password key; etcdfn then carries on",
  };
}
