// Structured JSON logs (pino). LOG_LEVEL picks the level; tests set it to "silent". Inside an
// event every line carries its function, event id, object, and what the reconcile noted (cluster,
// member, plan step): shared/log-context.ts. Fields that look like secrets (passwords, tokens,
// S3 secret keys, Authorization headers, private keys), at the top of a line or one or two levels
// down, are written as "[Redacted]" whatever a caller passes.
import { pino, type Logger, type LoggerOptions } from 'pino';
import { logContextFields } from './log-context.ts';

export type { Logger };

/** Field names whose values never reach a log line. */
export const SECRET_FIELDS = [
  'password',
  'passwd',
  'token',
  'accessToken',
  'refreshToken',
  'bearer',
  'authorization',
  'Authorization',
  'cookie',
  'secretAccessKey',
  'SecretAccessKey',
  'sessionToken',
  'SessionToken',
  'privateKey',
  'tls.key',
  'clientKey',
  'rootPassword',
] as const;

const bracket = (field: string) => (field.includes('.') ? `["${field}"]` : field);

export const LOG_OPTIONS: LoggerOptions = {
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: process.env.FUNCTION_TARGET ?? 'etcdfn' },
  mixin: logContextFields,
  redact: {
    paths: SECRET_FIELDS.flatMap(f => [bracket(f), `*.${bracket(f)}`, `*.*.${bracket(f)}`]),
    censor: '[Redacted]',
  },
};

export const log: Logger = pino(LOG_OPTIONS);
