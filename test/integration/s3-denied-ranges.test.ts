// The cluster's own address ranges reach the S3 client: ETCDFN_S3_DENIED_RANGES, read by the
// adapter (shared/s3/client.ts), refuses an endpoint inside them before anything is contacted,
// unless ETCDFN_S3_ALLOWED_ENDPOINTS lists it. Run in a child process so the environment is the one
// the operator would start with.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

const repo = resolve(import.meta.dirname, '..', '..');
const script = `
import { endpointVerdict } from './shared/s3/client.ts';
import { parseAllowList } from './shared/s3/endpoint-policy.ts';
const allow = parseAllowList(process.env.ETCDFN_S3_ALLOWED_ENDPOINTS).entries;
const verdict = await endpointVerdict(process.argv[1], allow);
console.log(JSON.stringify({ allowed: verdict.allowed, reason: verdict.reason }));
`;

function run(env: Record<string, string>, endpoint: string): Record<string, unknown> {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script, endpoint],
    // A hung child would block this process (a synchronous call): killed after a minute instead.
    { cwd: repo, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 },
  );
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

describe('ETCDFN_S3_DENIED_RANGES in the S3 client', () => {
  it('refuses an endpoint inside a configured range, with its reason', () => {
    assert.deepEqual(run({ ETCDFN_S3_DENIED_RANGES: '10.96.0.0/12' }, 'https://10.96.0.10'), {
      allowed: false,
      reason: 'EndpointClusterInternal',
    });
  });
  it('allows it when nothing is configured, or when the administrator allow-lists it', () => {
    assert.equal(run({ ETCDFN_S3_DENIED_RANGES: '' }, 'https://10.96.0.10').allowed, true);
    const listed = {
      ETCDFN_S3_DENIED_RANGES: '10.96.0.0/12',
      ETCDFN_S3_ALLOWED_ENDPOINTS: 'https://10.96.0.10',
    };
    assert.equal(run(listed, 'https://10.96.0.10').allowed, true);
  });
});
