// Structured JSON logs (pino). LOG_LEVEL picks the level; tests set it to "silent". Inside an
// event every line carries its function, event id, object, and what the reconcile noted (cluster,
// member, plan step): shared/log-context.ts.
import { pino, type Logger } from 'pino';
import { logContextFields } from './log-context.ts';

export type { Logger };

export const log: Logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: process.env.FUNCTION_TARGET ?? 'etcdfn' },
  mixin: logContextFields,
});
