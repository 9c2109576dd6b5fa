// The auth concern (shared/plan/cluster/auth.ts): one row per situation, including every point a
// crash can leave things at (enable cut short, enable or rotation done but not recorded).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planAuth, type AuthFacts, type AuthStep } from '../../shared/plan/cluster/auth.ts';
import type { RootCredentials } from '../../shared/builders/root-credentials.ts';

const pw = (password: string): RootCredentials => ({ kind: 'ok', password });
const MISSING: RootCredentials = { kind: 'missing' };
const base: AuthFacts = { wanted: true, recorded: false, formed: true, desired: pw('new'), applied: MISSING };

const rows: [string, Partial<AuthFacts>, AuthStep['kind'] | [AuthStep['kind'], string]][] = [
  ['auth not asked for', { wanted: false, desired: MISSING }, 'none'],
  ['no Secret before auth is on: generate one', { desired: MISSING }, 'create-secret'],
  [
    'Secret deleted after auth is on: no new password behind the user’s back',
    { desired: MISSING, recorded: true, applied: pw('new') },
    ['stuck', 'RootSecretMissing'],
  ],
  [
    'Secret of the wrong type',
    { desired: { kind: 'invalid', problem: 'Secret s is of type Opaque' } },
    ['stuck', 'RootSecretInvalid'],
  ],
  ['cluster still forming', { formed: false, loginDesired: 'disabled' }, 'wait'],
  ['etcd not asked yet', {}, 'wait'],
  ['etcd gave no answer', { loginDesired: 'unavailable' }, 'wait'],
  ['formed, auth off: enable it', { loginDesired: 'disabled' }, 'enable-auth'],
  [
    'enable cut short (root added, auth still off): enable again',
    { loginDesired: 'disabled', applied: MISSING },
    'enable-auth',
  ],
  ['enable done, not recorded: record', { loginDesired: 'enabled' }, 'record-applied'],
  [
    'recorded copy equal but status not set: record',
    { loginDesired: 'enabled', applied: pw('new') },
    'record-applied',
  ],
  ['in sync and recorded', { loginDesired: 'enabled', applied: pw('new'), recorded: true }, 'none'],
  [
    'in sync while a member restarts (formed false): still none',
    { loginDesired: 'enabled', applied: pw('new'), recorded: true, formed: false },
    'none',
  ],
  [
    'user changed the Secret: rotate with the old password',
    { recorded: true, applied: pw('old'), loginDesired: 'refused', loginApplied: 'enabled' },
    'rotate-password',
  ],
  [
    'rotation done, not recorded: record',
    { recorded: true, applied: pw('old'), loginDesired: 'enabled' },
    'record-applied',
  ],
  [
    'rotation: old login not asked yet',
    { recorded: true, applied: pw('old'), loginDesired: 'refused' },
    'wait',
  ],
  [
    'rotation: etcd flipped auth off between logins',
    { recorded: true, applied: pw('old'), loginDesired: 'refused', loginApplied: 'disabled' },
    'wait',
  ],
  [
    'both passwords refused: changed in etcd directly',
    { recorded: true, applied: pw('old'), loginDesired: 'refused', loginApplied: 'refused' },
    ['stuck', 'RootPasswordRefused'],
  ],
  [
    'desired refused and it is the applied one',
    { recorded: true, applied: pw('new'), loginDesired: 'refused' },
    ['stuck', 'RootPasswordRefused'],
  ],
  [
    'desired refused, no applied copy',
    { recorded: true, loginDesired: 'refused' },
    ['stuck', 'RootPasswordRefused'],
  ],
];

describe('planAuth', () => {
  for (const [name, facts, expected] of rows) {
    it(name, () => {
      const step = planAuth({ ...base, ...facts });
      const [kind, reason] = Array.isArray(expected) ? expected : [expected, undefined];
      assert.equal(step.kind, kind, JSON.stringify(step));
      if (reason !== undefined) assert.equal(step.kind === 'stuck' && step.reason, reason);
    });
  }

  it('never puts a password into a message', () => {
    for (const [, facts] of rows) {
      const step = planAuth({ ...base, ...facts });
      const text = JSON.stringify(step);
      assert.ok(!text.includes('"new"') && !text.includes('"old"'), text);
    }
  });
});
