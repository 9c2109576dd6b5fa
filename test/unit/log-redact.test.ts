// Secret-looking fields never reach a log line: pino's redact with etcdfn's paths, at the top of a
// line and one or two levels down.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { LOG_OPTIONS } from '../../shared/log.ts';

function capture(write: (log: pino.Logger) => void): string {
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  write(pino({ ...LOG_OPTIONS, level: 'info' }, sink));
  return out;
}

describe('log redaction', () => {
  it('writes [Redacted] for passwords, tokens, S3 secret keys, Authorization and private keys', () => {
    const out = capture(log =>
      log.info(
        {
          password: 'p4ss',
          token: 'tok-1',
          headers: { authorization: 'Bearer tok-2', 'content-type': 'application/json' },
          s3: { credentials: { secretAccessKey: 'AKIA-secret', accessKeyId: 'AKIA-id' } },
          secret: { data: { 'tls.key': 'PRIVATE' } },
          auth: { rootPassword: 'root-pw' },
          cluster: 'demo',
        },
        'reconciling',
      ),
    );
    for (const secret of ['p4ss', 'tok-1', 'tok-2', 'AKIA-secret', 'PRIVATE', 'root-pw'])
      assert.ok(!out.includes(secret), `${secret} leaked: ${out}`);
    const line = JSON.parse(out) as {
      password: string;
      cluster: string;
      headers: Record<string, string>;
      s3: { credentials: Record<string, string> };
    };
    assert.equal(line.password, '[Redacted]');
    assert.equal(line.headers.authorization, '[Redacted]');
    assert.equal(line.headers['content-type'], 'application/json');
    assert.equal(line.s3.credentials.secretAccessKey, '[Redacted]');
    assert.equal(line.s3.credentials.accessKeyId, 'AKIA-id', 'what is not secret stays');
    assert.equal(line.cluster, 'demo');
  });
});
