// Structured JSON logs (pino). LOG_LEVEL picks the level; tests set it to "silent".
import { pino, type Logger } from 'pino';

export type { Logger };

export const log: Logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: process.env.FUNCTION_TARGET ?? 'etcdfn' },
});
